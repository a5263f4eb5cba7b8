//! What a [`UtpSender`] is told (its configuration), what it counts, and
//! libutp's constants.

use std::time::Duration;

#[cfg(doc)]
use super::UtpSender;
use crate::packet::{FlowId, HostId};
use ppspp_core::time::Instant;

/// Payload bytes of a full packet. libutp never sends more than its UDP MTU
/// ceiling (`utp_default_get_udp_mtu`: 1500 less IPv4, UDP, GRE, PPPoE,
/// MPPE and a 36-byte fudge = 1402 bytes of UDP payload) less its 20-byte
/// header: 1382, so a full packet is 1430 bytes on the wire, not 1500.
pub const UTP_PACKET_SIZE: u32 = 1382;

/// libutp's `MAX_CWND_INCREASE_BYTES_PER_RTT`: the most the window grows
/// in one round trip, when the queueing delay is zero.
pub const MAX_CWND_INCREASE_BYTES_PER_RTT: f64 = 3000.0;

/// libutp's `MIN_WINDOW_SIZE`: the floor of the window, in bytes. Below one
/// packet nothing can be sent until the timer resets the window to a
/// packet (libutp's timeout handling says as much).
pub const MIN_WINDOW_SIZE: u64 = 10;

/// BEP 29's and libutp's `CCONTROL_TARGET`: 100 ms of queueing delay.
pub const DEFAULT_TARGET: Duration = Duration::from_millis(100);

/// libutp's `MAX_WINDOW_DECAY`: the window is halved on loss at most this
/// often.
pub const MAX_WINDOW_DECAY: Duration = Duration::from_millis(100);

/// libutp's `DUPLICATE_ACKS_BEFORE_RESEND`: a packet is lost when this many
/// packets after it are acknowledged (selective ACK), and BEP 29's count of
/// duplicate ACKs.
pub const DUPLICATE_ACKS_BEFORE_RESEND: u32 = 3;

/// libutp's `OUTGOING_BUFFER_MAX_SIZE`, less the slot it keeps for the FIN:
/// at most this many packets are outstanding.
pub const MAX_OUTSTANDING_PACKETS: u64 = 1023;

/// libutp resends at most this many packets per selective ACK.
pub const MAX_RESENDS_PER_ACK: usize = 4;

/// How long a zero window from the receiver stops the sender before it
/// tries one packet anyway (libutp: `zerowindow_time`, 15 s).
pub const ZERO_WINDOW_PROBE: Duration = Duration::from_secs(15);

/// How a [`UtpSender`] behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UtpSenderConfig {
    /// The sender's host: data comes from here.
    pub host: HostId,
    /// The receiver's host.
    pub peer: HostId,
    /// The flow, shared by data and ACKs.
    pub flow: FlowId,
    /// When the first packet (the ST_SYN, or data) goes out.
    pub start: Instant,
    /// Bytes of a bulk transfer; `None` for one that never ends. Not used
    /// by a [`UtpSender::stream`].
    pub total_bytes: Option<u64>,
    /// Payload bytes of a full packet.
    pub packet_size: u32,
    /// The queueing delay LEDBAT aims at (libutp `UTP_TARGET_DELAY`).
    pub target: Duration,
    /// The cap on the window (libutp's `opt_sndbuf`, 1 MiB by default).
    pub send_buffer: u64,
    /// Open with an ST_SYN answered by an ST_STATE before any data; off,
    /// the connection is taken as open at `start`.
    pub handshake: bool,
    /// The connection id its packets carry (`packet::conn_id`; 0 for
    /// cross traffic).
    pub conn: u64,
}

impl UtpSenderConfig {
    /// An endless bulk flow from `start` with libutp's defaults: 1382-byte
    /// packets, a 100 ms target, a 1 MiB send buffer, no handshake.
    pub fn new(host: HostId, peer: HostId, flow: FlowId, start: Instant) -> UtpSenderConfig {
        UtpSenderConfig {
            host,
            peer,
            flow,
            start,
            total_bytes: None,
            packet_size: UTP_PACKET_SIZE,
            target: DEFAULT_TARGET,
            send_buffer: 1 << 20,
            handshake: false,
            conn: 0,
        }
    }
}

/// Counters of a [`UtpSender`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UtpSenderStats {
    /// ST_DATA and ST_FIN packets sent, resends included.
    pub packets_sent: u64,
    /// Payload bytes sent, resends included.
    pub bytes_sent: u64,
    /// Payload bytes acknowledged (cumulatively or selectively): the
    /// goodput.
    pub bytes_acked: u64,
    /// Packets sent again, for whatever reason.
    pub retransmits: u64,
    /// Packets resent because the selective ACK or 3 duplicate ACKs said
    /// they were lost.
    pub fast_resends: u64,
    /// Expiries of the retransmission timer: of an ST_SYN, of data, and
    /// those that found nothing in flight (libutp's timer runs on after
    /// the last ACK: the window decays or, below one packet, is reset).
    pub timeouts: u64,
    /// Halvings of the window on loss.
    pub decays: u64,
    /// ST_SYN packets sent, resends included (0 without the handshake).
    pub syns_sent: u64,
}
