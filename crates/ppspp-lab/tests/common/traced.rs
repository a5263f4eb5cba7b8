//! Running a scenario under a tracing subscriber that writes into a
//! buffer, stamped with virtual time, for tests that read a run's lines.

use std::io;
use std::sync::{Arc, Mutex};

use ppspp_lab::log::VirtualTime;
use ppspp_lab::run::{run, Outcome};
use tracing::Level;

/// A writer into a shared buffer.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl io::Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Runs `scenario` (named `name`) with every line up to `level` printed,
/// and returns the run and its lines.
pub fn run_traced(scenario: &str, name: &str, level: Level) -> (Outcome, String) {
    let buf = Buffer::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_timer(VirtualTime)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // One thread: the simulation runs on this one, where the subscriber is.
    let out = tracing::subscriber::with_default(subscriber, || {
        run(scenario, name, None, None, |_| {}).unwrap()
    });
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    (out, text)
}
