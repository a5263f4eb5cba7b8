//! What a sub-state may use of the rest of its channel while it handles
//! one input or writes one datagram: the peer it talks to, how chunks are
//! named on this channel (RFC 7574 §4.3, chosen in the handshake), and
//! the [`Outcome`] being built for the endpoint. The channel lends it
//! out; the sub-states never see each other's fields.

use std::net::SocketAddr;

use super::Outcome;
use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::proto::event::PeerStats;
use crate::proto::swarm::Swarm;
use crate::proto::SwarmHandle;
use crate::wire::{ChunkAddressing, ChunkSpec, SwarmParams};

/// The peer of a channel: who it is, in which swarm, the unit its
/// congestion controllers count in, and what was exchanged with it.
pub(crate) struct Peer {
    pub addr: SocketAddr,
    pub swarm: SwarmHandle,
    /// What the congestion controllers count per chunk ([`super::mss`]).
    pub mss: u64,
    pub stats: PeerStats,
}

/// The channel as one sub-state sees it during one call.
pub(crate) struct Scope<'a> {
    pub peer: &'a mut Peer,
    /// The channel's parameters from the handshake.
    pub params: SwarmParams,
    pub out: &'a mut Outcome,
}

impl Scope<'_> {
    /// Bytes one chunk specification takes in a message, with its type
    /// byte.
    pub fn spec_len(&self) -> usize {
        1 + self.params.addressing.spec_len()
    }

    /// The specifications that name `range` on this channel, cut to the
    /// content's end.
    pub fn specs_for<'s>(
        &self,
        swarm: &'s Swarm,
        range: ChunkRange,
    ) -> impl Iterator<Item = ChunkSpec> + 's {
        let len = swarm.integrity.content_len().unwrap_or(u64::MAX);
        self.params
            .addressing
            .specs_for(range, swarm.chunk_size, len)
    }

    /// The one specification that names `chunk`, if there is one.
    pub fn spec_for_chunk(&self, swarm: &Swarm, chunk: ChunkIndex) -> Option<ChunkSpec> {
        let mut specs = self.specs_for(swarm, ChunkRange::single(chunk)?);
        let s = specs.next()?;
        specs.next().is_none().then_some(s)
    }

    /// How an INTEGRITY message names the tree node `bin`: the bin itself
    /// under bin addressing, else its chunks.
    pub fn spec_for_bin(&self, swarm: &Swarm, bin: Bin) -> Option<ChunkSpec> {
        match self.params.addressing {
            ChunkAddressing::Bins32 | ChunkAddressing::Bins64 => Some(ChunkSpec::Bin(bin)),
            _ => self.specs_for(swarm, bin.chunks()?).next(),
        }
    }
}
