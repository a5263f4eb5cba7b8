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
//! node, and [`refuse`], what of a scenario cannot run in real time yet.
//! Still to come: `ppspp lab emulate SCENARIO`, which starts a node per
//! peer on its own loopback address from the scenario's plan.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod refuse;
pub mod shaper;
