//! The ppspp lab's real-time emulator (issue 27; seed paper 004, Crystal):
//! real nodes — the UDP driver's code path, one real UDP socket per peer on
//! a loopback address — whose datagrams the lab's network model
//! ([`ppspp_lab::net::Network`]) shapes against the wall clock.
//!
//! The simulator gives determinism and scale; the emulator gives what only
//! a real OS shows (scheduling, system calls, socket buffers, timers). Both
//! read the same scenario files and the same network model.
//!
//! Built so far: [`shaper`], the task that runs the model for every shaped
//! node; [`refuse`], what of a scenario cannot run in real time yet; and
//! [`emulate`], a scenario's peers run as real nodes on the scenario's plan.
//! Still to come: `ppspp lab emulate SCENARIO` writing the same results
//! folder and report as `ppspp lab run`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod emulate;
pub mod refuse;
pub mod shaper;
