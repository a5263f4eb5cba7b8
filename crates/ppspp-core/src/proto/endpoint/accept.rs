//! Channels peers open to us: a HANDSHAKE on channel 0 (RFC 7574 §8.4),
//! answered, refused, or recognised as our own come back.

use std::net::SocketAddr;

use super::refusal::reads_pex;
use super::Endpoint;
use crate::proto::channel::{Channel, Opening, State};
use crate::proto::event::{CloseReason, DropReason};
use crate::proto::SwarmHandle;
use crate::time::Instant;
use crate::wire::{decode_datagram, ChannelId, Message, SwarmParams};

impl Endpoint {
    /// A datagram to channel 0: a HANDSHAKE opening a channel.
    pub(super) fn on_first_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let params = SwarmParams::default();
        let Ok((_, mut messages)) = decode_datagram(data, params) else {
            self.stats.count_drop(DropReason::Undecodable);
            return;
        };
        let Some(Ok(Message::Handshake { source, options })) = messages.next() else {
            self.stats.count_drop(DropReason::NotAHandshake);
            return;
        };
        if source == ChannelId::ZERO {
            self.stats.count_drop(DropReason::NotAHandshake);
            return;
        }
        if let Some(local) = self.by_remote.get(&(from, source)).copied() {
            // A retransmitted handshake: answer again, within what it adds to
            // the anti-amplification budget.
            if let Some(ch) = self.channels.get_mut(&local) {
                // Our answer was lost, and the HAVEs that rode on it:
                // send them again, or the initiator never learns what
                // we have (a complete seeder announces nothing else).
                ch.handle_retransmitted_opening(data.len());
            }
            self.wake(local);
            return;
        }
        let handle = options.swarm_id.and_then(|id| self.swarms.by_swarm_id(id));
        if self.is_own_handshake(from, source, handle) {
            return;
        }
        let Some(handle) = handle else {
            self.refuse(from, source, data.len(), None);
            return;
        };
        let Some(swarm) = self.swarm(handle) else {
            return;
        };
        let offer = swarm.check_handshake(&options);
        let (open, half_open) = self.count_channels(handle);
        let shut = swarm.closing || swarm.banned.contains(&from);
        // A full live swarm may make room for the newcomer once it proves
        // its address (`make_room.rs`); until then it waits half-open.
        let full =
            open >= self.config.max_peers_per_swarm && self.room_victim(handle, now).is_none();
        // Refused for want of room only, it hears of some of our peers.
        let names = reads_pex(&options).then_some(handle);
        let (Ok(offer), false) = (offer, shut) else {
            self.refuse(from, source, data.len(), None);
            return;
        };
        if full {
            self.refuse(from, source, data.len(), names);
            return;
        }
        let no_room = half_open >= self.config.max_half_open_per_swarm
            && !self.evict_oldest_half_open(handle, now);
        if no_room || self.channels.len() >= self.config.max_channels {
            self.refuse(from, source, data.len(), names);
            return;
        }
        let Some(swarm) = self.swarm(handle) else {
            return;
        };
        let chunk_size = swarm.chunk_size.bytes();
        let mut params = SwarmParams {
            chunk_size: Some(chunk_size),
            ..SwarmParams::default()
        };
        params.apply(&options);
        params.addressing = offer.addressing;
        let (log, cancel_log) = (swarm.have_log.len(), swarm.cancel_log.len());
        let live = swarm.live.is_some();
        let local = self.fresh_channel_id();
        let (mut ctx, channels, swarms, _) = self.parts(now);
        let mut ch = Channel::new(
            &mut ctx,
            Opening {
                local,
                peer: from,
                swarm: handle,
                state: State::Responding,
                chunk_size,
                params,
                have_log_len: log,
                cancel_log_len: cancel_log,
                live,
            },
        );
        ch.handle_opening(source, &offer, ctx.config.compat);
        let Some(swarm) = swarms.get_mut(handle) else {
            return;
        };
        // The rest of the datagram (HAVE, REQUEST) uses the options just read.
        let out = ch.on_messages(swarm, &mut ctx, messages, data.len(), false);
        swarm.channels.insert(local);
        channels.insert(local, ch);
        super::trace::opened(handle, local, from, false);
        self.by_remote.insert((from, source), local);
        self.wake(local);
        self.after_channel(now, handle, local, out);
    }

    /// Whether a HANDSHAKE opening a channel is our own come back: its
    /// source channel is one we are opening in the same swarm. Channel ids
    /// are random (RFC 7574 §12.1), so a stranger matches one of ours by
    /// chance once in 2^32 tries. The channel closes and both addresses
    /// are remembered as ours.
    pub(super) fn is_own_handshake(
        &mut self,
        from: SocketAddr,
        source: ChannelId,
        handle: Option<SwarmHandle>,
    ) -> bool {
        let Some(ch) = self.channels.get_mut(&source).filter(|c| {
            c.state() == State::Initiating && Some(c.swarm()) == handle && !c.is_closing()
        }) else {
            return false;
        };
        ch.close(CloseReason::OwnAddress, false);
        let target = ch.peer();
        self.own_addresses.insert(target);
        self.own_addresses.insert(from);
        self.stats.own_address_handshakes += 1;
        self.wake(source);
        true
    }
}
