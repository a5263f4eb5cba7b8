//! Channels we open to peers (RFC 7574 §8.4: our HANDSHAKE goes out
//! with the next `poll_transmit`), and the random channel ids every new
//! channel takes.

use std::net::SocketAddr;

use rand::RngExt;

use super::{trace, Endpoint};
use crate::proto::address::check_peer_address;
use crate::proto::channel::{Channel, Opening, State};
use crate::proto::event::{CloseReason, Event};
use crate::proto::SwarmHandle;
use crate::time::Instant;
use crate::wire::{ChannelId, ChunkAddressing, SwarmParams};

impl Endpoint {
    /// Opens a channel to `peer` in `swarm` (the first datagram of the
    /// handshake goes out with the next [`Endpoint::poll_transmit`]).
    /// Returns `None` if there is one already or a limit is reached, or
    /// if `peer` is our own address (with an [`Event::Closed`] saying so).
    pub fn connect(
        &mut self,
        now: Instant,
        swarm: SwarmHandle,
        peer: SocketAddr,
    ) -> Option<ChannelId> {
        let s = self.swarms.get(swarm)?;
        let chunk_size = s.chunk_size.bytes();
        let hash_function = s.hash_function;
        let (log, cancel_log) = (s.have_log.len(), s.cancel_log.len());
        let live = s.live.is_some();
        let full = self.count_channels(swarm).0 >= self.config.max_peers_per_swarm
            || self.channels.len() >= self.config.max_channels;
        let exists = s
            .channels
            .iter()
            .any(|c| self.channels.get(c).is_some_and(|ch| ch.peer() == peer));
        let unusable = match check_peer_address(peer) {
            Err(why) => Some(CloseReason::Unusable(why)),
            Ok(()) if self.is_own_address(peer) => Some(CloseReason::OwnAddress),
            Ok(()) => None,
        };
        if let Some(reason) = unusable {
            // Said, so that a driver told to connect to itself or to a
            // broadcast address can tell its user.
            self.events.push_back(Event::Closed {
                swarm,
                peer,
                reason,
            });
            return None;
        }
        if full || exists || s.closing || s.banned.contains(&peer) {
            return None;
        }
        let local = self.fresh_channel_id();
        let params = SwarmParams {
            addressing: ChunkAddressing::ChunkRanges32,
            hash_function,
            signature_len: None,
            chunk_size: Some(chunk_size),
        };
        let (mut ctx, _, _, _) = self.parts(now);
        let channel = Channel::new(
            &mut ctx,
            Opening {
                local,
                peer,
                swarm,
                state: State::Initiating,
                chunk_size,
                params,
                have_log_len: log,
                cancel_log_len: cancel_log,
                live,
            },
        );
        self.channels.insert(local, channel);
        trace::opened(swarm, local, peer, true);
        self.swarm_mut(swarm)?.channels.insert(local);
        self.wake(local);
        Some(local)
    }

    /// A random, unused, non-zero channel id: ids must be unpredictable
    /// (RFC 7574 §12.1 / §13.1, wire notes).
    pub(super) fn fresh_channel_id(&mut self) -> ChannelId {
        loop {
            let id = ChannelId(self.ids.random());
            if id != ChannelId::ZERO && !self.channels.contains_key(&id) {
                return id;
            }
        }
    }
}
