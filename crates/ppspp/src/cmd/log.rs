//! `RUST_LOG`: what the node and the lab tell `tracing`, printed on stderr.
//!
//! Unset or empty, no subscriber is installed and the binary prints what
//! it always printed; every tracing call site then costs one comparison.
//! Set, it is an `EnvFilter` (`RUST_LOG=ppspp_udp=debug`,
//! `RUST_LOG=ppspp_lab=debug,ppspp_udp=trace`…). Lab runs stamp each line
//! with the simulated time instead of the wall clock.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The clock that stamps each line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The wall clock (a node on a network).
    Wall,
    /// The simulation's virtual time (`ppspp lab`).
    Virtual,
}

/// Installs the stderr subscriber when `RUST_LOG` asks for one. A filter
/// that does not parse is reported and ignored rather than failing the
/// command: logging is a diagnosis aid, not part of the job.
pub fn init(clock: Clock) {
    let Some(spec) = std::env::var_os("RUST_LOG").filter(|s| !s.is_empty()) else {
        return;
    };
    let filter = match EnvFilter::try_new(spec.to_string_lossy()) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("ppspp: ignoring RUST_LOG: {e}");
            return;
        }
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only for a person reading a terminal, not in files.
        .with_ansi(std::io::stderr().is_terminal());
    // A subscriber installed already (none is, in this binary) stays.
    let _ = match clock {
        Clock::Wall => builder.try_init(),
        Clock::Virtual => builder.with_timer(ppspp_lab::log::VirtualTime).try_init(),
    };
}
