//! The ppspp lab's real-time emulator (issue 27; seed paper 004, Crystal):
//! real nodes — the UDP driver's code path, one real UDP socket per peer on
//! a loopback address — whose datagrams the lab's network model
//! ([`ppspp_lab::net::Network`]) shapes against the wall clock.
//!
//! The simulator gives determinism and scale; the emulator gives what only
//! a real OS shows (scheduling, system calls, socket buffers, timers). Both
//! read the same scenario files and the same network model.
//!
//! The pieces: [`shaper`], the task that runs the model for every shaped
//! node; [`refuse`], what of a scenario cannot run in real time (yet);
//! [`emulate`], a scenario's peers run as real nodes on the scenario's
//! plan (a live peer's camera or player running inside its node, `live`);
//! [`results`], the run's results folder and report, as `ppspp lab run`
//! writes them; [`cpu`], the process's CPU time. `ppspp lab emulate
//! SCENARIO` runs them.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod cpu;
pub mod emulate;
mod live;
pub mod refuse;
pub mod results;
pub mod shaper;
