//! With a subscriber installed, a run's tracing lines carry the simulated
//! time (`ppspp_lab::log::VirtualTime`) and the peer's name (the `peer`
//! span), and the run's results are the same as without one.

use std::io;
use std::sync::{Arc, Mutex};

use ppspp_lab::log::VirtualTime;
use ppspp_lab::run::run;
use tracing::Level;

const SMALL: &str = include_str!("small_swarm.toml");

/// A writer into a shared buffer, one per line the subscriber prints.
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

#[test]
fn lines_carry_virtual_time_and_peer_name() {
    let untraced = run(SMALL, "small_swarm.toml", None, None, |_| {}).unwrap();

    let buf = Buffer::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(Level::DEBUG)
        .with_timer(VirtualTime)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    // One thread: the simulation runs on this one, where the subscriber is.
    let traced = tracing::subscriber::with_default(subscriber, || {
        run(SMALL, "small_swarm.toml", None, None, |_| {}).unwrap()
    });
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();

    // The first leecher joins at 1 s and completes 0.2–1 s later, in a
    // span that names it, at a virtual (not a wall-clock) time.
    let joined = text
        .lines()
        .find(|l| l.contains("peer{name=leechers[0]}") && l.ends_with("joining"))
        .unwrap_or_else(|| panic!("no join line for leechers[0]:\n{text}"));
    assert!(joined.trim_start().starts_with("1.000000s"), "{joined}");
    let complete = text
        .lines()
        .find(|l| l.contains("peer{name=leechers[0]}") && l.ends_with("swarm complete"))
        .unwrap_or_else(|| panic!("no completion line for leechers[0]:\n{text}"));
    let secs: f64 = complete
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('s')
        .parse()
        .unwrap();
    assert!((1.2..2.0).contains(&secs), "{complete}");
    assert!(text.contains("peer{name=seeder}"), "{text}");

    // Tracing observes the run and changes nothing in it.
    assert_eq!(traced.summary.trace_hash, untraced.summary.trace_hash);
    assert_eq!(traced.summary.completed, untraced.summary.completed);
}
