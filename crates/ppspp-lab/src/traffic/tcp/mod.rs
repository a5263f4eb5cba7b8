//! A small sans-IO TCP model: a sender (RFC 5681 slow start, RFC 6582
//! fast recovery, RFC 6298 retransmission timer, and NewReno or CUBIC (RFC
//! 9438) congestion avoidance, `cc/`) and a cumulative-ACK receiver; with
//! SACK on at both ends, the receiver sends RFC 2018 blocks and the sender
//! recovers by RFC 6675 (`scoreboard.rs`, `sender_sack.rs`). A connection
//! opens with a SYN / SYN-ACK exchange if the sender is so configured
//! (`sender_handshake.rs`), else it is taken as open at the sender's start.
//!
//! A sender carries a bulk transfer (cross traffic) or an application's
//! byte stream (`sender_stream.rs`, `receiver_stream.rs`): records the
//! application writes reach the other application in order; closing sends
//! a FIN; the receiver advertises its window (the buffer less what the
//! application has not read) and the sender honours it, probing a zero
//! window on the persist timer; after idle, the window restarts (RFC 5681
//! §4.1). ACKs are pure ACKs, never piggybacked on data going the other
//! way: a bidirectional connection is two of these, one each way.
//!
//! Sequence numbers count payload bytes from 0 (and the FIN); every data
//! segment is a full MSS (1460 bytes, 1500 on the wire) but the last of
//! what is written, and every ACK is a pure ACK of
//! [`crate::packet::TCP_OVERHEAD`] bytes plus its SACK option.

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

crate::stream_ends!(TcpSender, TcpReceiver);
