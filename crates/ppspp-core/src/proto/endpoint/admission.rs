//! Who gets a channel: handshakes peers open to us are half-open until the
//! initiator's third datagram proves its address (RFC 7574 §8.4), and have
//! their own small budget, apart from the swarm's places for complete
//! channels, as TCP's SYN cache keeps half-open connections apart from
//! established ones (issue 21: a flood of spoofed handshakes kept honest
//! newcomers out).

use std::net::SocketAddr;

use super::Endpoint;
use crate::proto::channel::State;
use crate::proto::event::CloseReason;
use crate::proto::SwarmHandle;
use crate::wire::ChannelId;

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
            .filter(|c| c.close.is_none());
        let (mut open, mut half_open) = (0, 0);
        for c in live {
            if c.state == State::Responding {
                half_open += 1;
            } else {
                open += 1;
            }
        }
        (open, half_open)
    }

    /// Closes the swarm's oldest half-open channel (silently: its
    /// initiator may be a spoofed address) to make room for a new
    /// handshake, as a SYN cache drops its oldest entry.
    pub(super) fn evict_oldest_half_open(&mut self, handle: SwarmHandle) {
        let Some(swarm) = self.swarm(handle) else {
            return;
        };
        let oldest = swarm
            .channels
            .iter()
            .filter_map(|id| self.channels.get(id).map(|c| (id, c)))
            .filter(|(_, c)| c.state == State::Responding && c.close.is_none())
            .min_by_key(|(id, c)| (c.created, **id))
            .map(|(id, _)| *id);
        let Some(id) = oldest else { return };
        if let Some(ch) = self.channels.get_mut(&id) {
            ch.close(CloseReason::HandshakeTimeout, false);
            self.stats.half_open_evicted += 1;
        }
        self.wake(id);
    }

    /// A half-open channel about to complete (a datagram from its peer
    /// names it) takes one of the swarm's places for complete channels;
    /// when they are all taken meanwhile, it is refused now with a closing
    /// HANDSHAKE (RFC 7574 §8.4) instead.
    pub(super) fn admit_half_open(&mut self, dst: ChannelId, from: SocketAddr) {
        let Some(handle) = self
            .channels
            .get(&dst)
            .filter(|c| c.peer == from && c.close.is_none() && c.state == State::Responding)
            .map(|c| c.swarm)
        else {
            return;
        };
        let (open, _) = self.count_channels(handle);
        if open >= self.config.max_peers_per_swarm {
            if let Some(ch) = self.channels.get_mut(&dst) {
                ch.close(CloseReason::Refused, true);
            }
            self.wake(dst);
        }
    }
}
