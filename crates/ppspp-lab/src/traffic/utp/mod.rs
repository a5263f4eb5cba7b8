//! A sans-IO model of uTP (BEP 29) as libutp implements it: a sender
//! ([`UtpSender`]) running libutp's LEDBAT controller, and a receiver
//! ([`UtpReceiver`]) that acknowledges every packet with an ST_STATE
//! carrying the one-way delay it measured and a selective ACK.
//!
//! - The delay signal (`delay.rs`): the receiver echoes `recv time −
//!   sender timestamp` in `timestamp_difference`; the sender keeps libutp's
//!   base-delay history (13 one-minute buckets, a lower sample adopted at
//!   once) and takes the minimum of the last 3 samples above the base as
//!   its queueing delay.
//! - The window (`sender_cc.rs`): libutp's `apply_ccontrol` per ACK
//!   (`MAX_CWND_INCREASE_BYTES_PER_RTT` scaled by how far off target the
//!   delay is and by the fraction of the window acknowledged), its slow
//!   start, its halving on loss at most every 100 ms, and its timeout rule.
//! - Loss (`sender_ack.rs`): libutp's selective-ACK fast resend (a packet
//!   is lost once 3 packets after it are acked) and BEP 29's 3 duplicate
//!   ACKs; the retransmission timer of libutp (`rto.rs`).
//! - An optional ST_SYN / ST_STATE exchange before data; ST_FIN after a
//!   closed stream (`sender_stream.rs`).
//!
//! Routing at an endpoint that holds one sender and one receiver on one
//! flow: ST_DATA, ST_FIN and ST_SYN go to the receiver half, ST_STATE to
//! the sender half; each half ignores what is not its own.
//!
//! Not modelled: clock drift correction (libutp shifts its base delay by
//! the reverse direction's; the lab's clocks do not drift), MTU discovery
//! (the packet size is fixed at libutp's ceiling), pacing (libutp has
//! none), Nagle, keep-alives, ST_RESET, and giving up on a connection
//! after repeated timeouts.
//!
//! Sequence numbers count packets: an ST_SYN is 0, data starts at 1, and
//! an ST_FIN takes one after the last data packet. Payload is counted,
//! not carried, as a byte range of the sender's stream
//! ([`super::stream::SendStream`]) with its application records.

mod delay;
mod receiver;
mod rto;
mod sender;
mod sender_config;

pub use delay::DelayHistory;
pub use receiver::{UtpReceiver, UtpReceiverConfig, UtpReceiverStats};
pub use rto::UtpRto;
pub use sender::UtpSender;
pub use sender_config::{
    UtpSenderConfig, UtpSenderStats, DEFAULT_TARGET, MAX_CWND_INCREASE_BYTES_PER_RTT,
    MIN_WINDOW_SIZE, UTP_PACKET_SIZE,
};

#[cfg(test)]
mod tests;

crate::stream_ends!(UtpSender, UtpReceiver);
