//! The ppspp lab: a discrete-event simulator that drives the very same
//! sans-IO protocol core as the UDP driver, in virtual time, over a modelled
//! network (access links, shared links, queues, loss, cross traffic).
//!
//! Layout: [`sim`] orders events by (time, sequence) and drives the peers;
//! [`net`] is the network model (sans-IO, tested on its own); [`traffic`]
//! holds cross-traffic sources and the TCP model; [`packet`] and [`agent`]
//! are the shapes they exchange; [`scenario`] reads scenario files;
//! [`results`] and [`report`] write a run's folder, [`outdir`] keeps
//! folders from mixing old files with new; [`sweep`] expands grids and
//! [`family`] reads folders of scenarios swept together;
//! [`log`] prints `tracing` output in virtual time; [`live`] holds the
//! live source and viewers (RFC 7574 §6.1).

pub mod agent;
pub mod bt;
pub mod content;
pub mod family;
pub mod live;
pub mod log;
pub mod net;
pub mod outdir;
pub mod packet;
pub mod report;
pub mod results;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod sim;
pub mod sweep;
pub mod traffic;
pub mod units;
