//! The endpoint: every swarm and channel behind one UDP socket, demultiplexed
//! by channel id (RFC 7574 §3.11, §8.3). This file is the driver-facing
//! API (`handle_*`, `poll_*`, commands) and the demultiplexer; each of the
//! endpoint's other jobs has its own file: opening channels (`connect.rs`),
//! accepting them (`accept.rs`, `admission.rs`), following up on what a
//! channel did
//! (`aftermath.rs`), writing datagrams in turn (`transmit.rs`), rate limits
//! (`limits.rs`), progress and checkpoints (`progress.rs`), closing
//! (`reap.rs`), what drivers read (`queries.rs`), the swarms (`swarms.rs`),
//! timer hygiene (`timers.rs`) and tracing (`trace.rs`). Policies sit behind
//! traits: upload scheduling (`proto/turns`) and choking (`proto/choke`).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;

use rand::rngs::{ChaCha20Rng, Xoshiro256PlusPlus};
use rand::{Rng, SeedableRng};

use super::channel::{Channel, State};
use super::choke::Choke;
use super::config::EndpointConfig;
use super::event::{DropReason, EndpointStats, Event};
use super::schedule::Schedule;
use super::swarm::{Swarm, SwarmSetup};
use super::turns::UploadTurns;
use super::{Ctx, SwarmHandle};
use crate::time::Instant;
use crate::wire::{decode_datagram, ChannelId};

mod accept;
mod admission;
mod aftermath;
mod connect;
mod limits;
pub mod live;
mod make_room;
mod progress;
mod queries;
mod reap;
mod refusal;
mod swarms;
mod timers;
mod trace;
mod transmit;

use limits::RateLimits;
use swarms::Swarms;
use timers::TimersRun;

/// A datagram [`Endpoint::poll_transmit`] wrote: where to send the first
/// `len` bytes of the buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// The peer's address.
    pub destination: SocketAddr,
    /// Bytes written at the start of the buffer.
    pub len: usize,
}

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
    swarms: Swarms,
    channels: BTreeMap<ChannelId, Channel>,
    /// Responder channels by the initiator's address and channel, to spot
    /// retransmitted handshakes.
    by_remote: BTreeMap<(SocketAddr, ChannelId), ChannelId>,
    events: VecDeque<Event>,
    limits: RateLimits,
    /// Which channels are due, and when the others' timers fire.
    schedule: Schedule,
    /// Channels whose close is set: removed once they said goodbye.
    closing: BTreeSet<ChannelId>,
    /// The channel that wrote the last datagram: the next due after it
    /// goes next, unless the upload scheduling gives it another turn.
    cursor: ChannelId,
    turns: Box<dyn UploadTurns>,
    choke: Box<dyn Choke>,
    refusals: VecDeque<refusal::Refusal>,
    stats: EndpointStats,
    /// Addresses at which we reach ourselves: never connected to.
    own_addresses: BTreeSet<SocketAddr>,
    /// Channels whose timers ran at the current instant (`timers.rs`).
    timers_run: TimersRun,
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
        Endpoint {
            limits: RateLimits::new(&config, Instant::ZERO),
            turns: config.upload_scheduling.build(),
            choke: config.choking.build(),
            config,
            rng,
            ids,
            swarms: Swarms::default(),
            channels: BTreeMap::new(),
            by_remote: BTreeMap::new(),
            events: VecDeque::new(),
            schedule: Schedule::default(),
            closing: BTreeSet::new(),
            cursor: ChannelId::ZERO,
            refusals: VecDeque::new(),
            stats: EndpointStats::default(),
            own_addresses: BTreeSet::new(),
            timers_run: TimersRun::default(),
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
        let handle = self.swarms.insert(Swarm::new(setup, now))?;
        tracing::debug!(swarm = handle.0, "swarm added");
        self.check_progress(now, handle);
        Some(handle)
    }

    /// Handles one datagram from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.stats.datagrams_received += 1;
        self.stats.bytes_received += data.len() as u64;
        let Some(head) = data.get(..4) else {
            self.stats.count_drop(DropReason::TooShort);
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
        self.admit_half_open(now, dst, from);
        let (mut ctx, channels, swarms, _) = self.parts(now);
        let Some(ch) = channels
            .get_mut(&dst)
            .filter(|c| c.peer() == from && !c.is_closing())
        else {
            self.stats.count_drop(DropReason::UnknownChannel);
            return;
        };
        let Some(swarm) = swarms.get_mut(ch.swarm()) else {
            return;
        };
        let Ok((_, messages)) = decode_datagram(data, ch.params()) else {
            self.stats.count_drop(DropReason::Undecodable);
            return;
        };
        let span = trace::channel_span(ch.swarm(), dst, from).entered();
        tracing::trace!(len = data.len(), "datagram handled");
        let out = ch.on_messages(swarm, &mut ctx, messages, data.len(), true);
        drop(span);
        let rechoke = out.rechoke;
        let handle = ch.swarm();
        if out.malformed > 0 {
            self.stats.count_drop(DropReason::Malformed);
        }
        self.wake(dst);
        self.after_channel(now, handle, dst, out);
        if rechoke {
            self.rechoke(now, handle);
        }
    }

    /// Runs the timers due at `now`.
    pub fn handle_timeout(&mut self, now: Instant) {
        while let Some((id, _)) = self.schedule.pop_expired(now) {
            let (mut ctx, channels, _, schedule) = self.parts(now);
            let Some(ch) = channels.get_mut(&id) else {
                continue;
            };
            *ch.filed_mut() = None;
            if schedule.is_due(id) {
                // Left filed when marked due: it is polled anyway.
                continue;
            }
            let span = trace::channel_span(ch.swarm(), id, ch.peer()).entered();
            tracing::trace!("timer");
            let out = ch.on_timeout(&mut ctx);
            drop(span);
            let handle = ch.swarm();
            self.timers_run.note(now, id);
            if let Some(s) = self.swarm_mut(handle) {
                // Asked of two peers from now on: the second to answer
                // hears CANCEL.
                for &r in &out.late {
                    s.doubled.set(r);
                }
            }
            self.wake(id);
            self.after_channel(now, handle, id, out);
        }
        for id in self.limits.ready(now) {
            self.wake(id);
        }
        if self.choke.periodic(self.config.upload_slots) {
            let due: Vec<SwarmHandle> = self
                .swarms
                .iter()
                .filter(|(_, s)| s.next_rechoke <= now)
                .map(|(h, _)| h)
                .collect();
            for h in due {
                self.rechoke(now, h);
            }
        }
        self.checkpoint_timers(now);
        self.reap();
    }

    /// Writes the next datagram to send into `buf` (at least 64 KiB is
    /// always enough). Call until it returns `None`.
    pub fn poll_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        let out = self.next_transmit(now, buf);
        if let Some(t) = out {
            self.stats.datagrams_sent += 1;
            self.stats.bytes_sent += t.len as u64;
        }
        self.reap();
        out
    }

    /// The next event for the driver.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// When [`Endpoint::handle_timeout`] should next be called, if ever,
    /// as seen at `now` (the instant of the last input): `now` itself
    /// while something waits to be polled.
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        if !self.refusals.is_empty() || !self.events.is_empty() || self.schedule.any_due() {
            return Some(now);
        }
        let mut t = self.schedule.next_timer().unwrap_or(Instant::MAX);
        let (down, up) = self.limits.next_deadline(now);
        let periodic = self.choke.periodic(self.config.upload_slots);
        for (_, s) in self.swarms.iter() {
            if let Some(c) = self.checkpoint_deadline(s) {
                t = t.min(c);
            }
            if periodic && !s.channels.is_empty() {
                t = t.min(s.next_rechoke.max(now));
            }
        }
        for limit in [down, up].into_iter().flatten() {
            t = t.min(limit);
        }
        (t != Instant::MAX).then_some(t)
    }

    /// Reconsiders who of `swarm`'s peers is choked (the choking policy,
    /// `proto/choke`).
    fn rechoke(&mut self, now: Instant, handle: SwarmHandle) {
        let slots = self.config.upload_slots;
        let period = self.choke.period();
        if let Some(s) = self.swarm_mut(handle) {
            s.next_rechoke = now + period;
        }
        let mut channels = self.channels.values_mut().filter(|c| c.swarm() == handle);
        let _span = trace::swarm_span(handle).entered();
        self.choke.rechoke(now, slots, &mut channels);
        self.place_for_spread(handle);
        self.wake_swarm(handle, |c| c.choke_dirty());
    }

    /// At a live source, ranks the unchoked peers of `handle` for the
    /// announcements in turns (`channel/announce/spread.rs`), in channel
    /// id order; the choked ones hear of everything at once.
    fn place_for_spread(&mut self, handle: SwarmHandle) {
        let share = self.config.live_source_spread;
        let injects = self.swarms.get(handle).is_some_and(|s| {
            matches!(
                s.integrity.live(),
                Some(crate::proto::integrity::LiveIntegrity::Injector(_))
            )
        });
        if !(injects && share > 0.0 && share < 1.0) {
            return;
        }
        let served = |c: &Channel| {
            c.swarm() == handle && c.state() == State::Established && !c.choking_remote()
        };
        let of = self.channels.values().filter(|c| served(c)).count();
        let mut rank = 0;
        for c in self.channels.values_mut().filter(|c| c.swarm() == handle) {
            if served(c) {
                c.set_announce_spread(Some((rank, of)), share);
                rank += 1;
            } else {
                c.set_announce_spread(None, share);
            }
        }
    }

    /// Marks channel `id` due: something about it changed.
    fn wake(&mut self, id: ChannelId) {
        if let Some(ch) = self.channels.get_mut(&id) {
            self.schedule.mark_due(id);
            if ch.is_closing() {
                self.closing.insert(id);
            }
        }
    }

    /// Marks every channel of `handle` for which `filter` holds due.
    fn wake_swarm(&mut self, handle: SwarmHandle, filter: impl Fn(&Channel) -> bool) {
        let Some(swarm) = self.swarms.get(handle) else {
            return;
        };
        for id in &swarm.channels {
            if self.channels.get(id).is_some_and(&filter) {
                self.schedule.mark_due(*id);
            }
        }
    }

    fn swarm(&self, h: SwarmHandle) -> Option<&Swarm> {
        self.swarms.get(h)
    }

    fn swarm_mut(&mut self, h: SwarmHandle) -> Option<&mut Swarm> {
        self.swarms.get_mut(h)
    }

    /// Splits the endpoint into the context a channel works with and the
    /// channel and swarm tables.
    fn parts(
        &mut self,
        now: Instant,
    ) -> (
        Ctx<'_>,
        &mut BTreeMap<ChannelId, Channel>,
        &mut Swarms,
        &mut Schedule,
    ) {
        (
            Ctx {
                now,
                config: &self.config,
                events: &mut self.events,
                rng: &mut self.rng,
                upload: self.limits.upload.bucket.as_mut(),
                download: self.limits.download.bucket.as_mut(),
                sent: &mut self.stats.messages_sent,
            },
            &mut self.channels,
            &mut self.swarms,
            &mut self.schedule,
        )
    }
}
