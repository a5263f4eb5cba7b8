//! Who gets a channel: handshakes peers open to us are half-open until the
//! initiator's third datagram proves its address (RFC 7574 §8.4), and have
//! their own small budget, apart from the swarm's places for complete
//! channels, as TCP's SYN cache keeps half-open connections apart from
//! established ones (issue 21: a flood of spoofed handshakes kept honest
//! newcomers out).

use std::net::SocketAddr;
use std::time::Duration;

use super::Endpoint;
use crate::proto::channel::State;
use crate::proto::event::CloseReason;
use crate::proto::SwarmHandle;
use crate::time::Instant;
use crate::wire::ChannelId;

/// How long a half-open channel is safe from eviction: a round trip and
/// then some. An honest initiator's third datagram comes one round trip
/// after our answer; a flood's never does. A flash crowd of honest
/// handshakes beyond the budget within this time is refused, not evicted
/// (E1's 208 viewers arrive in one burst).
const HALF_OPEN_EVICTABLE: Duration = Duration::from_secs(1);

impl Endpoint {
    /// A swarm's live channels: those complete or opened by us, and the
    /// half-open ones peers opened to us (answered, not yet proven).
    pub(super) fn count_channels(&self, handle: SwarmHandle) -> (usize, usize) {
        let Some(swarm) = self.swarm(handle) else {
            return (0, 0);
        };
        let live = swarm
            .channels
            .iter()
            .filter_map(|id| self.channels.get(id))
            .filter(|c| !c.is_closing());
        let (mut open, mut half_open) = (0, 0);
        for c in live {
            if c.state() == State::Responding {
                half_open += 1;
            } else {
                open += 1;
            }
        }
        (open, half_open)
    }

    /// Closes the swarm's oldest half-open channel (silently: its
    /// initiator may be a spoofed address) to make room for a new
    /// handshake, as a SYN cache drops its oldest entry — if it has waited
    /// at least [`HALF_OPEN_EVICTABLE`]. A younger one may be an honest
    /// initiator whose third datagram is on its way; evicted, it would
    /// send into a channel that is gone and wait for its dead-peer timeout.
    /// Then the newcomer is refused instead, and knows it. Returns whether
    /// there is room now.
    pub(super) fn evict_oldest_half_open(&mut self, handle: SwarmHandle, now: Instant) -> bool {
        let Some(swarm) = self.swarm(handle) else {
            return false;
        };
        let oldest = swarm
            .channels
            .iter()
            .filter_map(|id| self.channels.get(id).map(|c| (id, c)))
            .filter(|(_, c)| c.state() == State::Responding && !c.is_closing())
            .min_by_key(|(id, c)| (c.created(), **id))
            .map(|(id, _)| *id);
        let Some(ch) = oldest.and_then(|id| self.channels.get_mut(&id)) else {
            return false;
        };
        if now.saturating_since(ch.created()) < HALF_OPEN_EVICTABLE {
            return false;
        }
        ch.close(CloseReason::HandshakeTimeout, false);
        self.stats.half_open_evicted += 1;
        let id = ch.local();
        self.wake(id);
        true
    }

    /// A half-open channel about to complete (a datagram from its peer
    /// names it) takes one of the swarm's places for complete channels;
    /// when they are all taken meanwhile, it is refused now with a closing
    /// HANDSHAKE (RFC 7574 §8.4) instead, unless a live swarm makes room
    /// for it (`make_room.rs`).
    pub(super) fn admit_half_open(&mut self, now: Instant, dst: ChannelId, from: SocketAddr) {
        let Some(handle) = self
            .channels
            .get(&dst)
            .filter(|c| c.peer() == from && !c.is_closing() && c.state() == State::Responding)
            .map(|c| c.swarm())
        else {
            return;
        };
        let (open, _) = self.count_channels(handle);
        if open >= self.config.max_peers_per_swarm && !self.make_room(handle, now) {
            if let Some(ch) = self.channels.get_mut(&dst) {
                ch.close(CloseReason::Refused, true);
            }
            self.wake(dst);
        }
    }
}
