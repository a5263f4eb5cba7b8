//! What an endpoint reports to its driver, and its counters.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use super::{StorageFailure, SwarmHandle};
use crate::chunk::ChunkIndex;
use crate::wire::MessageTally;

/// Why a channel ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CloseReason {
    /// The peer refused our handshake (unknown swarm, full, incompatible).
    Refused,
    /// The peer closed the channel (HANDSHAKE with source channel 0).
    ClosedByPeer,
    /// Nothing heard for the dead-peer timeout (RFC 7574 §8.15).
    Dead,
    /// Our handshake went unanswered.
    HandshakeTimeout,
    /// The peer sent data or hashes that failed verification.
    BadData,
    /// The peer broke the protocol (options we cannot accept, …).
    Protocol(super::ProtocolViolation),
    /// The address was our own: our handshake came back to us (a PEX
    /// answer, a tracker or the user named us). It is never tried again.
    OwnAddress,
    /// The address cannot be a peer (broadcast, multicast, unspecified…):
    /// it is never tried.
    Unusable(super::address::AddressRefusal),
    /// We closed it.
    Local,
}

/// Something the driver may want to act on. Polled with
/// [`super::Endpoint::poll_event`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A channel completed its handshake.
    Connected {
        /// The swarm.
        swarm: SwarmHandle,
        /// The peer.
        peer: SocketAddr,
    },
    /// A channel ended.
    Closed {
        /// The swarm.
        swarm: SwarmHandle,
        /// The peer.
        peer: SocketAddr,
        /// Why.
        reason: CloseReason,
    },
    /// The content length became known (the last chunk verified).
    ContentLength {
        /// The swarm.
        swarm: SwarmHandle,
        /// Bytes.
        len: u64,
    },
    /// Every chunk is verified and stored.
    Complete {
        /// The swarm.
        swarm: SwarmHandle,
    },
    /// A peer address learned through PEX.
    PeerAddress {
        /// The swarm.
        swarm: SwarmHandle,
        /// The address.
        addr: SocketAddr,
    },
    /// Reading or writing the content failed.
    StorageError {
        /// The swarm.
        swarm: SwarmHandle,
        /// What failed.
        error: StorageFailure,
    },
}

/// Traffic counters of one peer address in one swarm, kept after its
/// channels close.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerStats {
    /// Verified chunk bytes received from the peer.
    pub payload_bytes_received: u64,
    /// Chunk bytes sent to the peer.
    pub payload_bytes_sent: u64,
    /// Chunks received from the peer that verified.
    pub chunks_received: u64,
    /// Chunks sent to the peer.
    pub chunks_sent: u64,
    /// Chunks from the peer that failed verification.
    pub chunks_rejected: u64,
    /// HAVEs from the peer we did not record: beyond the content, or past
    /// what a peer's announcements may cost while the size is unknown
    /// (misbehaviour; see `channel/download/have_limits.rs`).
    pub haves_refused: u64,
}

/// Counters of one swarm.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SwarmStats {
    /// Chunks verified and stored.
    pub chunks_verified: u64,
    /// Chunks that failed verification.
    pub chunks_rejected: u64,
    /// Verified chunk bytes received.
    pub payload_bytes_received: u64,
    /// Chunks received that we had already (end game, a request given to
    /// another peer and answered by both, retransmissions): wasted download.
    pub chunks_duplicate: u64,
    /// Chunk bytes sent.
    pub payload_bytes_sent: u64,
    /// Peers disconnected for bad data.
    pub bad_peers: u64,
    /// Live SIGNED_INTEGRITY messages refused: forged, without their munro
    /// hash, of another munro size, or older than the discard window.
    pub live_munros_refused: u64,
    /// Where a live receiver hooked in (its first chunk), once it did.
    pub live_hook_in: Option<ChunkIndex>,
    /// Live chunks received under no trusted munro (beyond the live edge
    /// as we know it, or out of the window): never stored.
    pub live_chunks_refused: u64,
    /// Chunks of a live stream passed over unreceived because the discard
    /// window moved past them (a receiver too slow for the stream).
    pub live_chunks_skipped: u64,
    /// HAVEs not recorded, from all peers (see [`PeerStats::haves_refused`]).
    pub haves_refused: u64,
    /// Checkpoints handed to the storage (a storage may still skip a
    /// routine one while an earlier one is being written).
    pub checkpoints: u64,
    /// Channels open now.
    pub peers_connected: usize,
    /// Per peer address.
    pub peers: BTreeMap<SocketAddr, PeerStats>,
}

/// Counters of the whole endpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Datagrams handled.
    pub datagrams_received: u64,
    /// Datagrams produced.
    pub datagrams_sent: u64,
    /// Bytes handled.
    pub bytes_received: u64,
    /// Bytes produced.
    pub bytes_sent: u64,
    /// Datagrams that did not decode, or named no channel of ours: the
    /// sum of [`EndpointStats::dropped`].
    pub datagrams_dropped: u64,
    /// The dropped datagrams by why.
    pub dropped: DropCounts,
    /// Channel timers that asked for "now" again right after they ran at
    /// that instant and the channel had nothing to send: looked at again
    /// a little later instead, so that a driver is never asked to call
    /// again at the same instant forever (`Endpoint::poll_timeout`).
    pub stale_deadlines: u64,
    /// Channels we opened to ourselves, found when their handshake came
    /// back to us (each address is tried once).
    pub own_address_handshakes: u64,
    /// Half-open channels (handshakes answered, never completed) pushed
    /// out by newer handshakes when the swarm's half-open budget was full
    /// (`EndpointConfig::max_half_open_per_swarm`).
    pub half_open_evicted: u64,
    /// Channels closed in a full live swarm to let a newcomer in
    /// (`proto/endpoint/make_room.rs`).
    pub made_room: u64,
    /// Addresses from PEX answers that were not tried: never a peer, or
    /// private to a network the answering peer is not in (see
    /// `proto::address`).
    pub pex_addresses_refused: u64,
    /// Peer addresses named in refusals of a full swarm's handshakes
    /// (`proto/endpoint/refusal.rs`).
    pub refusal_addresses: u64,
    /// Times a channel was asked for a datagram: the endpoint's work per
    /// input, which the schedule keeps independent of the channel count.
    pub channel_polls: u64,
    /// The messages of the datagrams produced, by type: `bytes_sent` is
    /// their bytes plus each datagram's 4-byte channel id.
    pub messages_sent: MessageTally,
}

/// Datagrams dropped by the endpoint, by why; each counts once, under the
/// first reason that applies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DropCounts {
    /// Shorter than a channel id (4 bytes).
    pub too_short: u64,
    /// Naming a channel we do not have, or have with another peer, or are
    /// closing.
    pub unknown_channel: u64,
    /// Whose header did not decode.
    pub undecodable: u64,
    /// On channel 0 without a HANDSHAKE naming the sender's channel first
    /// (RFC 7574 §8.4).
    pub not_a_handshake: u64,
    /// Handshakes we refused: an unknown swarm, options we cannot use, a
    /// banned peer or no room.
    pub refused: u64,
    /// With a message that did not decode: it and the rest of the
    /// datagram were dropped (what came before it was handled).
    pub malformed: u64,
}

impl EndpointStats {
    /// Counts a dropped datagram under `reason`.
    pub(crate) fn count_drop(&mut self, reason: DropReason) {
        let d = &mut self.dropped;
        let counter = match reason {
            DropReason::TooShort => &mut d.too_short,
            DropReason::UnknownChannel => &mut d.unknown_channel,
            DropReason::Undecodable => &mut d.undecodable,
            DropReason::NotAHandshake => &mut d.not_a_handshake,
            DropReason::Refused => &mut d.refused,
            DropReason::Malformed => &mut d.malformed,
        };
        *counter += 1;
        self.datagrams_dropped += 1;
        tracing::trace!(reason = ?reason, "datagram dropped");
    }
}

/// Why a datagram was dropped (see [`DropCounts`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropReason {
    TooShort,
    UnknownChannel,
    Undecodable,
    NotAHandshake,
    Refused,
    Malformed,
}

impl DropCounts {
    /// Adds `other`'s counts (for totals over endpoints).
    pub fn merge(&mut self, other: &DropCounts) {
        self.too_short += other.too_short;
        self.unknown_channel += other.unknown_channel;
        self.undecodable += other.undecodable;
        self.not_a_handshake += other.not_a_handshake;
        self.refused += other.refused;
        self.malformed += other.malformed;
    }

    /// Every dropped datagram.
    pub fn total(&self) -> u64 {
        self.too_short
            + self.unknown_channel
            + self.undecodable
            + self.not_a_handshake
            + self.refused
            + self.malformed
    }

    /// The reasons and their counts, by name (for reports).
    pub fn by_reason(&self) -> [(&'static str, u64); 6] {
        [
            ("too_short", self.too_short),
            ("unknown_channel", self.unknown_channel),
            ("undecodable", self.undecodable),
            ("not_a_handshake", self.not_a_handshake),
            ("refused", self.refused),
            ("malformed", self.malformed),
        ]
    }
}
