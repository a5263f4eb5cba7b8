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

/// An application record on a lab transport's byte stream (TCP or uTP
/// model): the bytes the application framed (a BitTorrent message's header,
/// say) and the stream offset one past its last byte. The bytes it stands
/// for on the stream may be more than `data` (a block's payload is counted,
/// not carried). A segment carries the records whose last byte it carries,
/// so the receiver has a record once the stream is in order up to `end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRecord {
    /// One past the record's last byte on the stream.
    pub end: u64,
    /// What the application framed.
    pub data: Vec<u8>,
}

/// A TCP segment of the simulator's TCP model: data (`len > 0`) or a pure
/// ACK. Sequence numbers count payload bytes from 0.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpSegment {
    /// First payload byte carried (data segments).
    pub seq: u64,
    /// Payload bytes carried; 0 for a pure ACK.
    pub len: u32,
    /// Cumulative acknowledgement: the next byte the receiver expects
    /// (ACK segments).
    pub ack: u64,
    /// SACK blocks of an ACK (RFC 2018); empty without SACK.
    pub sack: SackBlocks,
    /// A SYN (from the sender) or SYN-ACK (from the receiver) opening the
    /// connection (RFC 9293 §3.5).
    pub syn: bool,
    /// A FIN: the sender's stream ends after this segment's payload; it
    /// takes one sequence number (RFC 9293 §3.4).
    pub fin: bool,
    /// The receiver's window (ACKs): bytes it can take above `ack`.
    pub wnd: u64,
    /// The application records whose last byte this segment carries.
    pub records: Vec<StreamRecord>,
    /// Which connection it belongs to, for a host with several (as ports
    /// would say): a [`conn_id`]; 0 for cross traffic.
    pub conn: u64,
}

/// A connection between two lab hosts, unique in a run: the initiating
/// host in the high 32 bits, its count of connections opened in the low.
/// Both directions of the connection carry it.
pub fn conn_id(initiator: HostId, count: u32) -> u64 {
    (u64::from(initiator.0) << 32) | u64::from(count)
}

/// Bytes on the wire of a SYN or SYN-ACK: IPv4 and TCP headers and the 20
/// option bytes stacks send on them (MSS, SACK permitted, timestamps,
/// window scale, as Linux does).
pub const TCP_SYN_SIZE: u32 = TCP_OVERHEAD + 20;

/// The SACK option of an ACK (RFC 2018 §3): up to [`SackBlocks::MAX`]
/// `[start, end)` byte ranges held above the cumulative ACK, the one that
/// holds the segment that triggered the ACK first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    blocks: [(u64, u64); SackBlocks::MAX],
    len: u8,
}

impl SackBlocks {
    /// Three blocks: what fits in TCP's 40 option bytes beside the
    /// timestamp option every stack sends (RFC 2018 §3).
    pub const MAX: usize = 3;

    /// The first [`SackBlocks::MAX`] of `blocks`.
    pub fn new(blocks: impl IntoIterator<Item = (u64, u64)>) -> SackBlocks {
        let mut out = SackBlocks::default();
        for b in blocks.into_iter().take(SackBlocks::MAX) {
            out.blocks[usize::from(out.len)] = b;
            out.len += 1;
        }
        out
    }

    /// The blocks, first first.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.blocks[..usize::from(self.len)].iter().copied()
    }

    /// No block.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the option adds to the header: kind, length and 8 per block,
    /// padded to 4 by two NOPs as stacks send it (RFC 2018 §3); none when
    /// empty.
    pub fn option_bytes(&self) -> u32 {
        if self.len == 0 {
            0
        } else {
            4 + 8 * u32::from(self.len)
        }
    }
}

/// The uTP header (BEP 29): type and version, extension, connection id,
/// the two timestamps, wnd_size, seq_nr and ack_nr.
pub const UTP_HEADER: u32 = 20;

/// What a uTP packet is (BEP 29's `type` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UtpType {
    /// ST_DATA: payload; takes a sequence number.
    Data,
    /// ST_FIN: the sender's stream ends; takes a sequence number (BEP 29:
    /// "the last packet").
    Fin,
    /// ST_STATE: an acknowledgement only; takes no sequence number.
    State,
    /// ST_RESET: the connection is torn down (not sent by the lab's model).
    Reset,
    /// ST_SYN: opens a connection; takes a sequence number.
    Syn,
}

/// BEP 29's selective-ACK extension: bit `i` says packet `ack_nr + 2 + i`
/// was received (`ack_nr + 1` is by definition missing). 32 bits, the
/// minimum BEP 29 allows and what libutp sends (libutp fills only the first
/// 30 of them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SelectiveAck(pub u32);

impl SelectiveAck {
    /// Packets it covers beyond `ack_nr + 1`.
    pub const BITS: u64 = 32;

    /// Whether packet `ack_nr + 2 + i` is marked received.
    pub fn has(&self, i: u64) -> bool {
        i < Self::BITS && self.0 & (1 << i) != 0
    }

    /// Bytes on the wire: the extension's two header bytes (next
    /// extension, length) and the 4-byte mask.
    pub const WIRE_BYTES: u32 = 2 + 4;
}

/// A packet of the simulator's uTP model (BEP 29). Sequence numbers count
/// packets (u64 here: no wrap-around); the payload is counted, not carried,
/// as a byte range of the sender's stream with the application records
/// whose last byte it carries (like [`TcpSegment`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UtpPacket {
    /// Its type.
    pub kind: UtpType,
    /// ST_DATA, ST_FIN, ST_SYN: its sequence number. ST_STATE: the
    /// sender's next one (unused by the model).
    pub seq_nr: u64,
    /// The last packet received in order (ST_STATE).
    pub ack_nr: u64,
    /// When it was sent, µs of the sending host's clock.
    pub timestamp: u64,
    /// The one-way delay of the last packet the sender of this one
    /// received (its arrival time less its `timestamp`), µs; 0 before any.
    pub timestamp_difference: u64,
    /// The sender's receive window: bytes it can take beyond what it has
    /// delivered and the application has not read.
    pub wnd_size: u64,
    /// The selective-ACK extension of an ST_STATE, when packets above a
    /// gap are held.
    pub sack: Option<SelectiveAck>,
    /// Stream offset of the first payload byte.
    pub offset: u64,
    /// Payload bytes.
    pub len: u32,
    /// The application records whose last byte this packet carries.
    pub records: Vec<StreamRecord>,
    /// BEP 29's connection id, as [`conn_id`] makes it (0 for cross
    /// traffic): which connection of a host it belongs to.
    pub conn: u64,
}

impl UtpPacket {
    /// Bytes on the wire: IPv4 and UDP headers, the uTP header, the
    /// selective-ACK extension if present, and the payload.
    pub fn wire_size(&self) -> u32 {
        let ext = if self.sack.is_some() {
            SelectiveAck::WIRE_BYTES
        } else {
            0
        };
        UDP_OVERHEAD + UTP_HEADER + ext + self.len
    }
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
    /// A packet of the uTP model.
    Utp(UtpPacket),
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
