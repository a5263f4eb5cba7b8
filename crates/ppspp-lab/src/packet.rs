//! What moves through the simulated network.

use std::fmt;

use ppspp_core::time::Instant;

/// A host of the simulated network (a peer, a cross-traffic end, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId(pub u32);

/// A flow: one source and one sink; queue-delay samples can follow one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

impl fmt::Display for HostId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "h{}", self.0)
    }
}

impl fmt::Display for FlowId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "f{}", self.0)
    }
}

/// IPv4 + UDP headers, counted on the wire for every datagram.
pub const UDP_OVERHEAD: u32 = 28;
/// IPv4 + TCP headers (no options).
pub const TCP_OVERHEAD: u32 = 40;

/// A TCP segment of the simulator's TCP model: data (`len > 0`) or a pure
/// ACK. Sequence numbers count payload bytes from 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSegment {
    /// First payload byte carried (data segments).
    pub seq: u64,
    /// Payload bytes carried; 0 for a pure ACK.
    pub len: u32,
    /// Cumulative acknowledgement: the next byte the receiver expects
    /// (ACK segments).
    pub ack: u64,
}

/// The payload of a packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// A PPSPP datagram: the real bytes the protocol core wrote.
    Datagram(Vec<u8>),
    /// A datagram of a UDP cross-traffic flow (CBR, on/off): only its
    /// sequence number and send time are modelled.
    Probe {
        /// Sequence number within the flow.
        seq: u64,
        /// When the source sent it.
        sent: Instant,
    },
    /// A TCP segment of the TCP model.
    Tcp(TcpSegment),
}

/// One packet: its size on the wire (headers included) is what links
/// serialise and queues count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Sending host.
    pub src: HostId,
    /// Receiving host.
    pub dst: HostId,
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Bytes on the wire, headers included.
    pub size: u32,
    /// What it carries.
    pub body: Body,
}
