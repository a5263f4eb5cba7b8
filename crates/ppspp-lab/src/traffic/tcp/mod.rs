//! A small sans-IO TCP model for bulk cross traffic: a sender (RFC 5681
//! slow start, RFC 6582 fast recovery, RFC 6298 retransmission timer, and
//! NewReno or CUBIC (RFC 9438) congestion avoidance, `cc/`) and a
//! cumulative-ACK receiver; with SACK on at both ends, the receiver sends
//! RFC 2018 blocks and the sender recovers by RFC 6675 (`scoreboard.rs`,
//! `sender_sack.rs`). A connection opens with a SYN / SYN-ACK exchange if
//! the sender is so configured (`sender_handshake.rs`), else it is taken as
//! open at the sender's start; no FIN, and no window field: the receiver's
//! window is fixed, which is what competing bulk flows need to share a
//! bottleneck realistically.
//!
//! Sequence numbers count payload bytes from 0; every data segment is a
//! full MSS (1460 bytes, 1500 on the wire) but the last, and every ACK is
//! a pure ACK of [`crate::packet::TCP_OVERHEAD`] bytes.

mod cc;
mod receiver;
mod rto;
mod scoreboard;
mod sender;
mod sender_config;

pub use cc::{Cubic, NewReno, TcpCc, TcpCongestion};
pub use receiver::{TcpReceiver, TcpReceiverConfig, TcpReceiverStats, DEFAULT_ACK_DELAY};
pub use rto::{RtoConfig, RtoEstimator};
pub use scoreboard::Scoreboard;
pub use sender::{TcpSender, TcpSenderConfig, TcpSenderStats, MSS};

#[cfg(test)]
mod tests;
