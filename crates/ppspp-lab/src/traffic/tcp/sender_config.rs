//! What a [`TcpSender`] is told (its configuration) and what it counts.

use super::cc::TcpCc;
use super::rto::RtoConfig;
#[cfg(doc)]
use super::TcpSender;
use crate::packet::{FlowId, HostId};
use ppspp_core::time::Instant;

/// Payload bytes of a full segment: a 1500-byte packet on the wire with
/// [`TCP_OVERHEAD`](crate::packet::TCP_OVERHEAD).
pub const MSS: u32 = 1460;

/// How a [`TcpSender`] behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpSenderConfig {
    /// The sender's host: data comes from here.
    pub host: HostId,
    /// The receiver's host.
    pub peer: HostId,
    /// The flow, shared by data and ACKs.
    pub flow: FlowId,
    /// When the first segment goes out (the connection is taken as open).
    pub start: Instant,
    /// Bytes to transfer; `None` for a flow that never ends.
    pub total_bytes: Option<u64>,
    /// Payload bytes per full segment (SMSS).
    pub mss: u32,
    /// Initial window in segments (RFC 6928: 10).
    pub initial_window: u32,
    /// Initial slow-start threshold in bytes (RFC 5681 §3.1: "arbitrarily
    /// high").
    pub initial_ssthresh: u64,
    /// The receiver's window in bytes until its first ACK advertises one
    /// (what the SYN-ACK would say), and the cap on cwnd.
    pub rwnd: u64,
    /// The retransmission timer's bounds.
    pub rto: RtoConfig,
    /// Congestion avoidance and the cut on loss.
    pub cc: TcpCc,
    /// Loss recovery from the receiver's SACK blocks (RFC 6675) instead of
    /// NewReno's one hole per round trip (RFC 6582). Needs a receiver with
    /// `sack` on.
    pub sack: bool,
    /// The connection id its segments carry (`packet::conn_id`; 0 for
    /// cross traffic).
    pub conn: u64,
    /// Open the connection with a SYN / SYN-ACK exchange before any data
    /// (`sender_handshake.rs`); off, the connection is taken as open at
    /// `start`.
    pub handshake: bool,
}

impl TcpSenderConfig {
    /// An unlimited bulk flow from `start` with the defaults: MSS 1460,
    /// IW 10, no ssthresh, a 1 GiB window, [`RtoConfig::default`].
    pub fn new(host: HostId, peer: HostId, flow: FlowId, start: Instant) -> TcpSenderConfig {
        TcpSenderConfig {
            host,
            peer,
            flow,
            start,
            total_bytes: None,
            mss: MSS,
            initial_window: 10,
            initial_ssthresh: u64::MAX,
            rwnd: 1 << 30,
            rto: RtoConfig::default(),
            cc: TcpCc::default(),
            sack: false,
            conn: 0,
            handshake: false,
        }
    }
}

/// Counters of a [`TcpSender`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpSenderStats {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Payload bytes cumulatively acknowledged: the goodput.
    pub bytes_acked: u64,
    /// Segments sent again, for whatever reason (fast retransmit, partial
    /// ACK, timeout, go-back-N).
    pub retransmits: u64,
    /// Fast retransmits: entries into fast recovery, one per window cut.
    pub fast_retransmits: u64,
    /// Retransmission timer expiries.
    pub timeouts: u64,
    /// Duplicate ACKs received.
    pub dup_acks: u64,
    /// SYNs sent, retransmissions included (0 without the handshake).
    pub syns_sent: u64,
    /// Cuts of cwnd to the restart window after idle (RFC 5681 §4.1).
    pub idle_restarts: u64,
    /// Zero-window probes sent (RFC 9293 §3.8.6.1).
    pub window_probes: u64,
}
