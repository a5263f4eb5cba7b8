//! The endpoint: every swarm and channel behind one UDP socket, demultiplexed
//! by channel id (RFC 7574 §3.11, §8.3).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;

use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};
use rand::{Rng, RngExt, SeedableRng};

use super::address::{check_learned_address, check_peer_address};
use super::channel::{check_options, Channel, Opening, State};
use super::checkpoint::CheckpointPolicy;
use super::choke::{rechoke, ROTATION};
use super::config::{Compat, EndpointConfig};
use super::event::{CloseReason, EndpointStats, Event, SwarmStats};
use super::ratelimit::TokenBucket;
use super::schedule::Schedule;
use super::swarm::{Swarm, SwarmSetup};
use super::{Ctx, SwarmHandle, MAX_UPLOAD_TURN};
use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::pick::availability::Availability;
use crate::time::Instant;
use crate::wire::{
    decode_datagram, ChannelId, ChunkAddressing, DatagramWriter, HandshakeOptions, Message,
    SwarmParams, PPSPP_VERSION,
};

/// A datagram [`Endpoint::poll_transmit`] wrote: where to send the first
/// `len` bytes of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// The peer's address.
    pub destination: SocketAddr,
    /// Bytes written at the start of the buffer.
    pub len: usize,
}

mod admission;

/// Refusals waiting to be sent: the peer and the channel it asked from.
const MAX_PENDING_REFUSALS: usize = 64;

/// All swarms and channels of one UDP socket. Sans-IO: it never reads a
/// clock, a socket or a global random source.
pub struct Endpoint {
    config: EndpointConfig,
    /// Random choices (tie-breaks, shuffles): fast, not secret.
    rng: Xoshiro256PlusPlus,
    /// Channel ids, which are security tokens (RFC 7574 §12.1): an
    /// off-path attacker who could predict them could inject datagrams
    /// into our channels. A cryptographic generator, keyed by the driver.
    ids: ChaCha20Rng,
    swarms: Vec<Option<Swarm>>,
    by_swarm_id: BTreeMap<Vec<u8>, SwarmHandle>,
    channels: BTreeMap<ChannelId, Channel>,
    /// Responder channels by the initiator's address and channel, to spot
    /// retransmitted handshakes.
    by_remote: BTreeMap<(SocketAddr, ChannelId), ChannelId>,
    events: VecDeque<Event>,
    upload: Option<TokenBucket>,
    download: Option<TokenBucket>,
    /// Bytes a DATA waits for from the upload limit, if one does.
    upload_blocked: Option<u64>,
    /// Bytes a REQUEST waits for from the download limit, if one does.
    download_blocked: Option<u64>,
    /// Channels that a rate limit held back: woken when it lets them go.
    limit_waiters: Vec<ChannelId>,
    /// Which channels are due, and when the others' timers fire.
    schedule: Schedule,
    /// Channels whose close is set: removed once they said goodbye.
    closing: BTreeSet<ChannelId>,
    cursor: ChannelId,
    /// Datagrams the cursor's channel may still send in its turn
    /// (weighted uploads only).
    turn_left: u64,
    refusals: VecDeque<(SocketAddr, ChannelId)>,
    stats: EndpointStats,
    released: Vec<ChunkRange>,
    found: Vec<SocketAddr>,
    /// Addresses at which we reach ourselves: never connected to.
    own_addresses: BTreeSet<SocketAddr>,
    last_now: Instant,
}

impl Endpoint {
    /// An endpoint whose channel ids and random choices all follow from
    /// `seed`: reproducible, for the simulator and tests. A node on a real
    /// network uses [`Endpoint::with_key`] with a key from the OS.
    pub fn new(config: EndpointConfig, seed: u64) -> Endpoint {
        Endpoint::build(
            config,
            Xoshiro256PlusPlus::seed_from_u64(seed),
            ChaCha20Rng::seed_from_u64(seed),
        )
    }

    /// An endpoint whose channel ids come from ChaCha20 keyed with `key`
    /// (32 bytes the driver takes from the OS: unpredictable ids, RFC 7574
    /// §12.1), and whose other random choices from a generator seeded by
    /// that one.
    pub fn with_key(config: EndpointConfig, key: [u8; 32]) -> Endpoint {
        let mut ids = ChaCha20Rng::from_seed(key);
        let rng = Xoshiro256PlusPlus::seed_from_u64(ids.next_u64());
        Endpoint::build(config, rng, ids)
    }

    fn build(config: EndpointConfig, rng: Xoshiro256PlusPlus, ids: ChaCha20Rng) -> Endpoint {
        let now = Instant::ZERO;
        // A quarter second at the rate, and never less than two of the
        // largest datagrams, or a large DATA could never pass.
        let burst = |rate: u64| (rate / 4).max(128 * 1024);
        Endpoint {
            upload: config
                .upload_limit
                .map(|r| TokenBucket::new(r, burst(r), now)),
            download: config
                .download_limit
                .map(|r| TokenBucket::new(r, burst(r), now)),
            config,
            rng,
            ids,
            swarms: Vec::new(),
            by_swarm_id: BTreeMap::new(),
            channels: BTreeMap::new(),
            by_remote: BTreeMap::new(),
            events: VecDeque::new(),
            upload_blocked: None,
            download_blocked: None,
            limit_waiters: Vec::new(),
            schedule: Schedule::default(),
            closing: BTreeSet::new(),
            cursor: ChannelId::ZERO,
            turn_left: 0,
            refusals: VecDeque::new(),
            stats: EndpointStats::default(),
            released: Vec::new(),
            found: Vec::new(),
            own_addresses: BTreeSet::new(),
            last_now: now,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EndpointConfig {
        &self.config
    }

    /// Tells the endpoint an address at which it receives (the driver's
    /// listen address): [`Endpoint::connect`] refuses it and PEX answers
    /// naming it are ignored, whether they come from a PEX answer, a
    /// tracker or the user. Addresses the driver cannot know (a wildcard
    /// listen address reached through another interface, a NAT's outside)
    /// are found when our own handshake comes back to us.
    pub fn add_own_address(&mut self, addr: SocketAddr) {
        self.own_addresses.insert(addr);
    }

    /// Whether `addr` is one of ours (given or found).
    pub fn is_own_address(&self, addr: SocketAddr) -> bool {
        self.own_addresses.contains(&addr)
    }

    /// Starts serving or fetching a swarm. Returns `None` if a swarm with
    /// the same id is already there.
    pub fn add_swarm(&mut self, now: Instant, setup: SwarmSetup) -> Option<SwarmHandle> {
        let id = setup.root.as_bytes().to_vec();
        if self.by_swarm_id.contains_key(&id) {
            return None;
        }
        let handle = SwarmHandle(u32::try_from(self.swarms.len()).ok()?);
        let swarm = Swarm::new(setup, now);
        self.swarms.push(Some(swarm));
        self.by_swarm_id.insert(id, handle);
        self.check_progress(handle);
        Some(handle)
    }

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
        self.last_now = now;
        let s = self.swarms.get(swarm.0 as usize)?.as_ref()?;
        let chunk_size = s.chunk_size.bytes();
        let hash_function = s.hash_function;
        let (log, cancel_log) = (s.have_log.len(), s.cancel_log.len());
        let full = self.count_channels(swarm).0 >= self.config.max_peers_per_swarm
            || self.channels.len() >= self.config.max_channels;
        let exists = s
            .channels
            .iter()
            .any(|c| self.channels.get(c).is_some_and(|ch| ch.peer == peer));
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
            },
        );
        self.channels.insert(local, channel);
        self.swarm_mut(swarm)?.channels.insert(local);
        self.wake(local);
        Some(local)
    }

    /// Handles one datagram from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.last_now = now;
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += data.len() as u64;
        let Some(head) = data.get(..4) else {
            self.stats.datagrams_dropped += 1;
            return;
        };
        let dst = ChannelId(u32::from_be_bytes([head[0], head[1], head[2], head[3]]));
        if dst == ChannelId::ZERO {
            self.on_first_datagram(now, from, data);
        } else {
            self.on_channel_datagram(now, from, dst, data);
        }
        self.reap();
    }

    fn on_channel_datagram(&mut self, now: Instant, from: SocketAddr, dst: ChannelId, data: &[u8]) {
        self.admit_half_open(dst, from);
        let (mut ctx, channels, swarms, _) = self.parts(now);
        let Some(ch) = channels
            .get_mut(&dst)
            .filter(|c| c.peer == from && c.close.is_none())
        else {
            self.stats.datagrams_dropped += 1;
            return;
        };
        let Some(swarm) = swarms.get_mut(ch.swarm.0 as usize).and_then(Option::as_mut) else {
            return;
        };
        let Ok((_, messages)) = decode_datagram(data, ch.params) else {
            return;
        };
        ch.on_messages(swarm, &mut ctx, messages, data.len(), true);
        let malformed = ctx.malformed;
        let size_learned = ctx.size_learned;
        let rechoke = ctx.rechoke;
        let handle = ch.swarm;
        self.stats.datagrams_dropped += u64::from(malformed > 0);
        self.wake(dst);
        self.after_channel(now, handle, dst, size_learned);
        if rechoke {
            self.rechoke(now, handle);
        }
    }

    /// A datagram to channel 0: a HANDSHAKE opening a channel.
    fn on_first_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let params = SwarmParams::default();
        let Ok((_, mut messages)) = decode_datagram(data, params) else {
            return;
        };
        let Some(Ok(Message::Handshake { source, options })) = messages.next() else {
            self.stats.datagrams_dropped += 1;
            return;
        };
        if source == ChannelId::ZERO {
            self.stats.datagrams_dropped += 1;
            return;
        }
        if let Some(local) = self.by_remote.get(&(from, source)).copied() {
            // A retransmitted handshake: answer again, within what it adds to
            // the anti-amplification budget.
            if let Some(ch) = self.channels.get_mut(&local) {
                ch.bytes_in += data.len() as u64;
                if ch.state == State::Responding {
                    ch.reply_due = true;
                    // Our answer was lost, and the HAVEs that rode on it:
                    // send them again, or the initiator never learns what
                    // we have (a complete seeder announces nothing else).
                    ch.have_sweep = Some(0);
                }
            }
            self.wake(local);
            return;
        }
        let handle = options
            .swarm_id
            .and_then(|id| self.by_swarm_id.get(id).copied());
        if self.is_own_handshake(from, source, handle) {
            return;
        }
        let Some(handle) = handle else {
            self.refuse(from, source, data.len());
            return;
        };
        let Some(swarm) = self.swarm(handle) else {
            return;
        };
        let offer = check_options(&options, swarm.hash_function, swarm.chunk_size);
        let (open, half_open) = self.count_channels(handle);
        let shut = swarm.closing || swarm.banned.contains(&from);
        let full = open >= self.config.max_peers_per_swarm;
        let (Ok(offer), false, false) = (offer, shut, full) else {
            self.refuse(from, source, data.len());
            return;
        };
        let no_room = half_open >= self.config.max_half_open_per_swarm
            && !self.evict_oldest_half_open(handle, now);
        if no_room || self.channels.len() >= self.config.max_channels {
            self.refuse(from, source, data.len());
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
            },
        );
        ch.remote = source;
        ch.reply_due = true;
        ch.extended_options = offer.extended && !matches!(ctx.config.compat, Compat::Libswift);
        let Some(swarm) = swarms.get_mut(handle.0 as usize).and_then(Option::as_mut) else {
            return;
        };
        // The rest of the datagram (HAVE, REQUEST) uses the options just read.
        ch.on_messages(swarm, &mut ctx, messages, data.len(), false);
        swarm.channels.insert(local);
        channels.insert(local, ch);
        self.by_remote.insert((from, source), local);
        self.wake(local);
        self.after_channel(now, handle, local, false);
    }

    /// Whether a HANDSHAKE opening a channel is our own come back: its
    /// source channel is one we are opening in the same swarm. Channel ids
    /// are random (RFC 7574 §12.1), so a stranger matches one of ours by
    /// chance once in 2^32 tries. The channel closes and both addresses
    /// are remembered as ours.
    fn is_own_handshake(
        &mut self,
        from: SocketAddr,
        source: ChannelId,
        handle: Option<SwarmHandle>,
    ) -> bool {
        let Some(ch) = self.channels.get_mut(&source).filter(|c| {
            c.state == State::Initiating && Some(c.swarm) == handle && c.close.is_none()
        }) else {
            return false;
        };
        ch.close(CloseReason::OwnAddress, false);
        let target = ch.peer;
        self.own_addresses.insert(target);
        self.own_addresses.insert(from);
        self.stats.own_address_handshakes += 1;
        self.wake(source);
        true
    }

    fn refuse(&mut self, to: SocketAddr, channel: ChannelId, received: usize) {
        self.stats.datagrams_dropped += 1;
        // A refusal is 12 bytes: never more than the handshake it answers.
        if received >= 12 && self.refusals.len() < MAX_PENDING_REFUSALS {
            self.refusals.push_back((to, channel));
        }
    }

    /// What the endpoint does once a channel has handled an input.
    fn after_channel(
        &mut self,
        now: Instant,
        handle: SwarmHandle,
        channel: ChannelId,
        size_learned: bool,
    ) {
        let released = std::mem::take(&mut self.released);
        self.release(handle, channel, &released);
        self.released = released;
        self.released.clear();
        if let Some(swarm) = self
            .swarms
            .get_mut(handle.0 as usize)
            .and_then(Option::as_mut)
        {
            let channels = self.channels.iter_mut().filter(|(_, c)| c.swarm == handle);
            super::fast::update(now, swarm, channels);
        }
        // A count learned, or a tentative one whose height a chunk has
        // just proven: per-chunk state follows the counted size.
        let resized = self
            .swarm(handle)
            .is_some_and(|s| s.availability.chunk_count() != s.counted_chunk_count().unwrap_or(0));
        if size_learned || resized {
            self.recount_availability(handle);
        }
        let mut found = std::mem::take(&mut self.found);
        // A peer may tell us our own address (libswift's PEX can name the
        // peer it answers), or addresses that are no peer's: a broadcast
        // address, or hosts on a private network it is not on.
        found.retain(|a| !self.own_addresses.contains(a));
        let source = self.channels.get(&channel).map(|c| c.peer);
        let before = found.len();
        found.retain(|a| source.is_some_and(|s| check_learned_address(*a, s).is_ok()));
        self.stats.pex_addresses_refused += (before - found.len()) as u64;
        for addr in &found {
            self.events.push_back(Event::PeerAddress {
                swarm: handle,
                addr: *addr,
            });
            let room = self
                .swarm(handle)
                .is_some_and(|s| s.channels.len() < self.config.pex_connect_limit);
            if self.config.pex_auto_connect && room {
                self.connect(now, handle, *addr);
            }
        }
        self.found = found;
        self.found.clear();
        self.notice_news(now, handle);
        self.check_progress(handle);
    }

    /// Marks channel `id` due: something about it changed.
    fn wake(&mut self, id: ChannelId) {
        if let Some(ch) = self.channels.get_mut(&id) {
            self.schedule.mark_due(id);
            if ch.close.is_some() {
                self.closing.insert(id);
            }
        }
    }

    /// Marks every channel of `handle` for which `filter` holds due.
    fn wake_swarm(&mut self, handle: SwarmHandle, filter: impl Fn(&Channel) -> bool) {
        let Some(swarm) = self.swarms.get(handle.0 as usize).and_then(Option::as_ref) else {
            return;
        };
        for id in &swarm.channels {
            if self.channels.get(id).is_some_and(&filter) {
                self.schedule.mark_due(*id);
            }
        }
    }

    /// Chunks verified since the last look: channels that had sent every
    /// HAVE now have news (their HAVE timer starts), and channels that may
    /// have a newly logged chunk outstanding must CANCEL it.
    fn notice_news(&mut self, now: Instant, handle: SwarmHandle) {
        let Some(swarm) = self
            .swarms
            .get_mut(handle.0 as usize)
            .and_then(Option::as_mut)
        else {
            return;
        };
        let log = swarm.have_log.len();
        if log > swarm.have_log_seen {
            swarm.have_log_seen = log;
            for id in swarm.have_waiters.drain(..) {
                let Some(ch) = self.channels.get_mut(&id) else {
                    continue;
                };
                ch.awaits_haves = false;
                if !self.schedule.is_due(id) {
                    let next = ch.next_deadline(&self.config, now, log);
                    self.schedule.settle(id, &mut ch.filed, next);
                }
            }
        }
        if swarm.cancel_log.len() > swarm.cancel_log_seen {
            swarm.cancel_log_seen = swarm.cancel_log.len();
            self.wake_swarm(handle, |c| c.outstanding.count() > 0);
        }
    }

    /// Channel `id` had nothing (more) to send: file it under its next
    /// timer, and have it woken when new chunks verify if it has no HAVE
    /// pending.
    fn settle(&mut self, now: Instant, id: ChannelId) {
        let Some(ch) = self.channels.get_mut(&id) else {
            self.schedule.forget(id, None);
            return;
        };
        let Some(swarm) = self
            .swarms
            .get_mut(ch.swarm.0 as usize)
            .and_then(Option::as_mut)
        else {
            self.schedule.forget(id, ch.filed.take());
            return;
        };
        let log = swarm.have_log.len();
        let next = ch.next_deadline(&self.config, now, log);
        self.schedule.settle(id, &mut ch.filed, next);
        if ch.close.is_some() {
            self.closing.insert(id);
        }
        if !ch.awaits_haves
            && ch.state == State::Established
            && ch.close.is_none()
            && !ch.haves_pending(log)
        {
            ch.awaits_haves = true;
            swarm.have_waiters.push(id);
        }
    }

    /// Reconsiders who of `swarm`'s peers is choked (see `choke.rs`).
    fn rechoke(&mut self, now: Instant, handle: SwarmHandle) {
        let slots = self.config.upload_slots;
        if let Some(s) = self.swarm_mut(handle) {
            s.next_rechoke = now + ROTATION / 3;
        }
        let channels = self.channels.iter_mut().filter(|(_, c)| c.swarm == handle);
        rechoke(now, slots, channels);
        self.wake_swarm(handle, |c| c.choke_dirty);
    }

    /// Chunks a channel stopped waiting for: unless another channel of the
    /// swarm still has them requested, they become pickable again.
    fn release(&mut self, handle: SwarmHandle, except: ChannelId, ranges: &[ChunkRange]) {
        if ranges.is_empty() {
            return;
        }
        let Some(swarm) = self
            .swarms
            .get_mut(handle.0 as usize)
            .and_then(Option::as_mut)
        else {
            return;
        };
        let mut still = Binmap::new();
        for id in swarm.channels.iter().filter(|id| **id != except) {
            if let Some(ch) = self.channels.get(id) {
                for &r in ranges {
                    for run in ch.outstanding.chunks().filled_runs_in(r) {
                        still.set(run);
                    }
                }
            }
        }
        for &r in ranges {
            swarm.requested.clear(r);
            for run in still.filled_runs_in(r) {
                swarm.requested.set(run);
            }
            swarm.retake(r);
        }
        // The chunks are pickable again: every channel may ask for them.
        self.wake_swarm(handle, |c| c.state == State::Established);
    }

    /// Once the chunk count is known or changes, count every peer's chunks
    /// again (a closing channel too: the reaper takes its chunks out), and
    /// drop the peers whose size claims what verified shows false.
    fn recount_availability(&mut self, handle: SwarmHandle) {
        let Some(swarm) = self
            .swarms
            .get_mut(handle.0 as usize)
            .and_then(Option::as_mut)
        else {
            return;
        };
        let Some(n) = swarm.counted_chunk_count() else {
            return;
        };
        swarm.availability = Availability::new();
        swarm.availability.set_chunk_count(n);
        if let Some(all) = ChunkRange::with_len(0u64, n) {
            swarm.retake(all);
        }
        for id in swarm.channels.clone() {
            if let Some(ch) = self.channels.get_mut(&id) {
                let refuted = ch.claimed.is_some_and(|c| {
                    let tree = swarm.integrity.partial();
                    tree.is_some_and(|t| t.refutes(c))
                });
                if ch.close.is_none() && refuted {
                    // Its peaks made the root but claimed a size that what
                    // verified since shows false (`PartialTree::refutes`);
                    // closing bans it, and its requests go elsewhere.
                    ch.stats.chunks_rejected += 1;
                    swarm.stats.bad_peers += 1;
                    swarm.peer_stats(ch.peer).chunks_rejected += 1;
                    ch.close(CloseReason::BadData, true);
                }
                ch.remote_complete = false;
                if let Some(all) = ChunkRange::with_len(0u64, n) {
                    let runs: Vec<ChunkRange> = ch.remote_has.filled_runs_in(all).collect();
                    // What the peer announced past the end is dropped: its
                    // chunk set is now bounded by the content
                    // (`channel/announce.rs`).
                    ch.remote_has = Binmap::new();
                    for r in runs {
                        ch.remote_has.set(r);
                        swarm.availability.add(r);
                    }
                }
                ch.check_remote_complete(swarm);
            }
        }
    }

    /// Reports a newly known content length and completion, and
    /// checkpoints a completed download.
    fn check_progress(&mut self, handle: SwarmHandle) {
        let now = self.last_now;
        let policy = CheckpointPolicy::of(&self.config);
        let Some(swarm) = self
            .swarms
            .get_mut(handle.0 as usize)
            .and_then(Option::as_mut)
        else {
            return;
        };
        if !swarm.content_len_reported {
            if let Some(len) = swarm.integrity.content_len() {
                swarm.content_len_reported = true;
                if let Err(e) = swarm.storage.set_content_len(len) {
                    self.events.push_back(Event::StorageError {
                        swarm: handle,
                        error: e.to_string(),
                    });
                }
                self.events
                    .push_back(Event::ContentLength { swarm: handle, len });
            }
        }
        if !swarm.complete_reported && swarm.is_complete() {
            swarm.complete_reported = true;
            if let Some(e) = swarm.maybe_checkpoint(now, &policy, true) {
                self.events.push_back(Event::StorageError {
                    swarm: handle,
                    error: e,
                });
            }
            self.events.push_back(Event::Complete { swarm: handle });
        } else if swarm.checkpoint_due_by_progress(&policy) {
            if let Some(e) = swarm.maybe_checkpoint(now, &policy, false) {
                self.events.push_back(Event::StorageError {
                    swarm: handle,
                    error: e,
                });
            }
        }
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.last_now = now;
        while let Some((id, _)) = self.schedule.pop_expired(now) {
            let (mut ctx, channels, _, schedule) = self.parts(now);
            let Some(ch) = channels.get_mut(&id) else {
                continue;
            };
            ch.filed = None;
            if schedule.is_due(id) {
                // Left filed when marked due: it is polled anyway.
                continue;
            }
            let mut released = std::mem::take(ctx.released);
            ch.on_timeout(&mut ctx, &mut released);
            let handle = ch.swarm;
            let late = std::mem::take(&mut ch.late);
            self.released = released;
            if let Some(s) = self.swarm_mut(handle) {
                // Asked of two peers from now on: the second to answer
                // hears CANCEL.
                for r in late {
                    s.doubled.set(r);
                }
            }
            self.wake(id);
            self.after_channel(now, handle, id, false);
        }
        self.wake_limit_waiters(now);
        if self.config.upload_slots > 0 {
            let due: Vec<SwarmHandle> = (0..self.swarms.len() as u32)
                .map(SwarmHandle)
                .filter(|h| self.swarm(*h).is_some_and(|s| s.next_rechoke <= now))
                .collect();
            for h in due {
                self.rechoke(now, h);
            }
        }
        let policy = CheckpointPolicy::of(&self.config);
        for (i, swarm) in self.swarms.iter_mut().enumerate() {
            if let Some(s) = swarm.as_mut() {
                if let Some(e) = s.maybe_checkpoint(now, &policy, false) {
                    self.events.push_back(Event::StorageError {
                        swarm: SwarmHandle(i as u32),
                        error: e,
                    });
                }
            }
        }
        self.reap();
    }

    /// Writes the next datagram to send into `buf` (at least 64 KiB is
    /// always enough). Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        self.last_now = now;
        let out = self.next_transmit(now, buf);
        if let Some(t) = out {
            self.stats.datagrams_sent += 1;
            self.stats.bytes_sent += t.len as u64;
        }
        self.reap();
        out
    }

    fn next_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        if let Some((to, channel)) = self.refusals.pop_front() {
            let options = HandshakeOptions {
                version: Some(PPSPP_VERSION),
                ..HandshakeOptions::default()
            };
            let mut w = DatagramWriter::new(buf, channel, SwarmParams::default()).ok()?;
            w.push(&Message::Handshake {
                source: ChannelId::ZERO,
                options,
            })
            .ok()?;
            self.stats.messages_sent.merge(w.tally());
            return Some(Transmit {
                destination: to,
                len: w.finish(),
            });
        }
        let mut cursor = self.cursor;
        // Weighted uploads: the channel whose turn it is goes on first.
        let mut again =
            self.config.weighted_uploads && self.turn_left > 0 && self.schedule.is_due(self.cursor);
        let (id, peer, len, handle) = loop {
            let id = if std::mem::take(&mut again) {
                cursor
            } else {
                self.schedule.next_due(cursor)?
            };
            cursor = id;
            let (mut ctx, channels, swarms, schedule) = self.parts(now);
            let Some(ch) = channels.get_mut(&id) else {
                schedule.forget(id, None);
                continue;
            };
            let Some(swarm) = swarms.get_mut(ch.swarm.0 as usize).and_then(Option::as_mut) else {
                schedule.forget(id, ch.filed.take());
                continue;
            };
            let sent = ch.poll_transmit(swarm, &mut ctx, buf);
            let (peer, handle) = (ch.peer, ch.swarm);
            let (up, down) = (ctx.upload_blocked, ctx.download_blocked);
            self.stats.channel_polls += 1;
            if up.is_some() || down.is_some() {
                self.limit_waiters.push(id);
                self.upload_blocked = self.upload_blocked.max(up);
                self.download_blocked = self.download_blocked.max(down);
            }
            match sent {
                Some(len) => {
                    if self.channels.get(&id).is_some_and(|c| c.close.is_some()) {
                        self.closing.insert(id);
                    }
                    break (id, peer, len, handle);
                }
                None => self.settle(now, id),
            }
        };
        if self.config.weighted_uploads {
            self.turn_left = if id == self.cursor && self.turn_left > 0 {
                self.turn_left - 1
            } else {
                let queued = self.channels.get(&id).map_or(0, |c| c.uploads.chunks());
                queued.clamp(1, MAX_UPLOAD_TURN) - 1
            };
        }
        self.cursor = id;
        // Requests picked while writing may have moved bookkeeping.
        self.check_progress(handle);
        Some(Transmit {
            destination: peer,
            len,
        })
    }

    /// The next event for the driver.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`Endpoint::handle_timeout`] should next be called, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let now = self.last_now;
        if !self.refusals.is_empty() || !self.events.is_empty() || self.schedule.any_due() {
            return Some(now);
        }
        let mut t = self.schedule.next_timer().unwrap_or(Instant::MAX);
        if let (Some(bytes), Some(b)) = (self.download_blocked, &self.download) {
            t = t.min(b.ready_at(bytes).max(now));
        }
        for s in self.swarms.iter().flatten() {
            if s.checkpoint_dirty && s.integrity.partial().is_some() {
                t = t.min(s.last_checkpoint + self.config.checkpoint_interval);
            }
            if self.config.upload_slots > 0 && !s.channels.is_empty() {
                t = t.min(s.next_rechoke.max(now));
            }
        }
        if let (Some(bytes), Some(b)) = (self.upload_blocked, &self.upload) {
            t = t.min(b.ready_at(bytes).max(now));
        }
        (t != Instant::MAX).then_some(t)
    }

    /// The handle of the `index`-th swarm added, if there is one.
    pub fn swarm_handle(&self, index: u32) -> Option<SwarmHandle> {
        self.swarm(SwarmHandle(index)).map(|_| SwarmHandle(index))
    }

    /// Counters of `swarm`.
    pub fn swarm_stats(&self, swarm: SwarmHandle) -> Option<SwarmStats> {
        self.swarm(swarm).map(Swarm::stats)
    }

    /// Chunks verified and the chunk count (once known) of `swarm`.
    pub fn progress(&self, swarm: SwarmHandle) -> Option<(u64, Option<u64>)> {
        self.swarm(swarm).map(|s| (s.have.count(), s.chunk_count()))
    }

    /// How many chunks of `swarm` the endpoint keeps per-chunk state for
    /// (availability counts): none until the content's height is proven
    /// (see [`Swarm::counted_chunk_count`]).
    pub fn counted_chunks(&self, swarm: SwarmHandle) -> Option<u64> {
        self.swarm(swarm).map(|s| s.availability.chunk_count())
    }

    /// Whether every chunk of `swarm` is verified and stored.
    pub fn is_complete(&self, swarm: SwarmHandle) -> bool {
        self.swarm(swarm).is_some_and(Swarm::is_complete)
    }

    /// The chunks of `swarm` verified so far.
    pub fn have(&self, swarm: SwarmHandle) -> Option<&Binmap> {
        self.swarm(swarm).map(|s| &s.have)
    }

    /// The chunks of `swarm` requested from some peer and not yet received.
    pub fn requested(&self, swarm: SwarmHandle) -> Option<&Binmap> {
        self.swarm(swarm).map(|s| &s.requested)
    }

    /// How many connected peers of `swarm` have each chunk, as the picker
    /// sees it.
    pub fn availability(&self, swarm: SwarmHandle) -> Option<&Availability> {
        self.swarm(swarm).map(|s| &s.availability)
    }

    /// The chunks of `swarm` in the order they verified since it was added
    /// (chunks it started with are not listed). A driver keeps its own
    /// cursor into it: a player learns this way which chunks came when.
    pub fn verified_log(&self, swarm: SwarmHandle) -> &[ChunkIndex] {
        self.swarm(swarm).map_or(&[], |s| &s.have_log)
    }

    /// The swarm's player stalled at `now`: a picker with a fast-peer set
    /// widens it (seed paper 000 eq. 2's x adapts to stalls).
    pub fn note_stall(&mut self, swarm: SwarmHandle, now: Instant) {
        if let Some(s) = self.swarm_mut(swarm) {
            s.fast.on_stall(now);
        }
    }

    /// Whether the swarm's player waits for data: then every peer may be
    /// asked for urgent data, not only the fast ones, and requests carry no
    /// deadline (nothing plays before the whole prebuffer is in).
    /// `play::Viewer` sets it while the player prebuffers (not while it
    /// stalls: in E1, asking everyone during stalls too doubled the
    /// stalls).
    ///
    /// A change wakes the swarm's channels, and those whose last pick found
    /// nothing pick again at once: a picker may ask a prebuffering player's
    /// peers for nothing beyond the prebuffer (swift-vod does), and they
    /// must not idle out a pick pause once playback starts.
    pub fn set_player_waiting(&mut self, swarm: SwarmHandle, waiting: bool) {
        match self.swarm_mut(swarm) {
            Some(s) if s.player_waiting != waiting => s.player_waiting = waiting,
            _ => return,
        }
        if let Some(s) = self.swarms.get(swarm.0 as usize).and_then(Option::as_ref) {
            for id in &s.channels {
                if let Some(ch) = self.channels.get_mut(id) {
                    ch.pick_idle_until = Instant::ZERO;
                }
            }
        }
        self.wake_swarm(swarm, |_| true);
    }

    /// The swarm's fast-peer set: the peers urgent data is asked of, if
    /// the picker keeps one and any peer has been measured.
    pub fn fast_peers(&self, swarm: SwarmHandle) -> Vec<SocketAddr> {
        let Some(s) = self.swarm(swarm) else {
            return Vec::new();
        };
        s.channels
            .iter()
            .filter_map(|id| self.channels.get(id))
            .filter(|c| c.fast == Some(true))
            .map(|c| c.peer)
            .collect()
    }

    /// Sets where playback of `swarm` needs chunks next; streaming pickers
    /// request from there ([`crate::pick::PickView::playhead`]). `None`:
    /// nothing plays.
    pub fn set_playhead(&mut self, swarm: SwarmHandle, playhead: Option<ChunkIndex>) {
        if let Some(s) = self.swarm_mut(swarm) {
            s.playhead = playhead;
        }
    }

    /// Whether chunk `chunk` of `swarm` is verified and stored.
    pub fn has_chunk(&self, swarm: SwarmHandle, chunk: ChunkIndex) -> bool {
        self.swarm(swarm).is_some_and(|s| s.have.contains(chunk))
    }

    /// Counters of the endpoint.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// Heap bytes held by what peers announced they have (their chunk
    /// sets), over all channels: bounded by the content once its size is
    /// known (see `channel/announce.rs`).
    pub fn announced_bytes(&self) -> usize {
        self.channels
            .values()
            .map(|c| c.remote_has.heap_bytes())
            .sum()
    }

    /// Open channels (all states).
    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }

    /// Writes a checkpoint of `swarm` now if it changed.
    pub fn checkpoint(&mut self, now: Instant, swarm: SwarmHandle) -> Result<(), String> {
        let policy = CheckpointPolicy::of(&self.config);
        match self
            .swarm_mut(swarm)
            .and_then(|s| s.maybe_checkpoint(now, &policy, true))
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Returns once the checkpoints of `swarm` asked for are durable, with
    /// the error of one that failed and was not reported yet
    /// ([`Storage::wait_checkpoint`](crate::storage::Storage::wait_checkpoint)).
    /// A driver calls it when the swarm stops, after
    /// [`Endpoint::checkpoint`], so that a last checkpoint written in the
    /// background cannot fail unseen. It blocks on the storage.
    pub fn wait_checkpoint(&mut self, swarm: SwarmHandle) -> Result<(), String> {
        match self.swarm_mut(swarm).and_then(Swarm::wait_checkpoint) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Closes every channel of `swarm`, telling the peers, and stops taking
    /// new ones; the swarm's state stays readable.
    pub fn close_swarm(&mut self, swarm: SwarmHandle) {
        let Some(s) = self.swarm_mut(swarm) else {
            return;
        };
        s.closing = true;
        let ids: Vec<ChannelId> = s.channels.iter().copied().collect();
        for id in ids {
            if let Some(ch) = self.channels.get_mut(&id) {
                ch.close(CloseReason::Local, ch.state != State::Initiating);
            }
            self.wake(id);
        }
    }

    /// Wakes the channels a rate limit held back once it lets them go.
    fn wake_limit_waiters(&mut self, now: Instant) {
        let ready = |blocked: Option<u64>, bucket: &Option<TokenBucket>| match (blocked, bucket) {
            (Some(bytes), Some(b)) => b.ready_at(bytes) <= now,
            _ => true,
        };
        let up = ready(self.upload_blocked, &self.upload);
        let down = ready(self.download_blocked, &self.download);
        if up {
            self.upload_blocked = None;
        }
        if down {
            self.download_blocked = None;
        }
        if (up || down) && !self.limit_waiters.is_empty() {
            for id in std::mem::take(&mut self.limit_waiters) {
                self.wake(id);
            }
        }
    }

    fn swarm(&self, h: SwarmHandle) -> Option<&Swarm> {
        self.swarms.get(h.0 as usize)?.as_ref()
    }

    fn swarm_mut(&mut self, h: SwarmHandle) -> Option<&mut Swarm> {
        self.swarms.get_mut(h.0 as usize)?.as_mut()
    }

    /// A random, unused, non-zero channel id: ids must be unpredictable
    /// (RFC 7574 §12.1 / §13.1, wire notes).
    fn fresh_channel_id(&mut self) -> ChannelId {
        loop {
            let id = ChannelId(self.ids.random());
            if id != ChannelId::ZERO && !self.channels.contains_key(&id) {
                return id;
            }
        }
    }

    /// Splits the endpoint into the context a channel works with and the
    /// channel and swarm tables.
    fn parts(
        &mut self,
        now: Instant,
    ) -> (
        Ctx<'_>,
        &mut BTreeMap<ChannelId, Channel>,
        &mut Vec<Option<Swarm>>,
        &mut Schedule,
    ) {
        (
            Ctx {
                now,
                config: &self.config,
                events: &mut self.events,
                rng: &mut self.rng,
                upload: self.upload.as_mut(),
                download: self.download.as_mut(),
                released: &mut self.released,
                found: &mut self.found,
                malformed: 0,
                size_learned: false,
                upload_blocked: None,
                download_blocked: None,
                rechoke: false,
                sent: &mut self.stats.messages_sent,
            },
            &mut self.channels,
            &mut self.swarms,
            &mut self.schedule,
        )
    }

    /// Removes closed channels: their peers leave the availability counts
    /// and their requests become pickable again.
    fn reap(&mut self) {
        if self.closing.is_empty() {
            return;
        }
        let done: Vec<ChannelId> = self
            .closing
            .iter()
            .filter(|id| self.channels.get(id).is_none_or(|c| !c.close_notify))
            .copied()
            .collect();
        for id in done {
            self.closing.remove(&id);
            let Some(mut ch) = self.channels.remove(&id) else {
                continue;
            };
            self.schedule.forget(id, ch.filed);
            self.by_remote.remove(&(ch.peer, ch.remote));
            let outstanding = ch.outstanding.clear();
            let runs: Vec<ChunkRange> = outstanding.filled_runs().collect();
            if let Some(swarm) = self
                .swarms
                .get_mut(ch.swarm.0 as usize)
                .and_then(Option::as_mut)
            {
                swarm.channels.remove(&id);
                if ch.state == State::Established {
                    swarm.peers.remove(&ch.peer);
                }
                if ch.awaits_haves {
                    // A swarm whose chunks never change (a seeder's) never
                    // drains the list: keep it to live channels.
                    swarm.have_waiters.retain(|w| *w != id);
                }
                ch.forget_availability(swarm);
            }
            self.release(ch.swarm, id, &runs);
            if ch.choking_remote || ch.requested_at.is_some() {
                if let Some(swarm) = self
                    .swarms
                    .get_mut(ch.swarm.0 as usize)
                    .and_then(Option::as_mut)
                {
                    // A slot may have come free: look again soon.
                    swarm.next_rechoke = Instant::ZERO;
                }
            }
            let reason = ch.close.take().unwrap_or(CloseReason::Local);
            if reason == CloseReason::BadData {
                if let Some(swarm) = self
                    .swarms
                    .get_mut(ch.swarm.0 as usize)
                    .and_then(Option::as_mut)
                {
                    swarm.banned.insert(ch.peer);
                }
            }
            self.events.push_back(Event::Closed {
                swarm: ch.swarm,
                peer: ch.peer,
                reason,
            });
        }
    }
}
