//! One partition of a simulation: some of the hosts, with their peers,
//! their timers and the network model of their links, run in virtual time
//! up to the end of a window.
//!
//! A simulation splits its hosts among partitions (host `h` belongs to
//! partition `h mod P`) that may run on separate threads. A packet crosses
//! from one partition to another only through the core, so it arrives at
//! least the network's lookahead after it was sent; a window no longer than
//! that lets every partition run its window alone and hand its packets to
//! the others at the end (conservative parallel simulation, Chandy–Misra
//! style with synchronous windows).
//!
//! Nothing a partition does depends on the split: every event is ordered
//! by (time, host-local key), the tracker changes only a window later, and
//! counters are summed. So a run gives the same trace and results however
//! many partitions (threads) it uses; `tests/partitions.rs` checks that.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use ppspp_core::chunk::ChunkRange;
use ppspp_core::pick;
use ppspp_core::play::Bitrate;
use ppspp_core::proto::{Endpoint, EndpointConfig, Event, SwarmSetup};
use ppspp_core::time::Instant;
use ppspp_core::Binmap;

use super::cross::{CrossFlow, CROSS_FLOW_BASE};
use super::peer::{addr_of, host_of, Peer};
use super::plan::{Leave, PeerPlan};
use super::trace::{Kind, Record};
use super::tracker::Tracker;
use super::RateSample;
use crate::content::SyntheticContent;
use crate::live::LiveStream;
use crate::log::{self, PeerName};
use crate::net::{Network, Partitioning};
use crate::packet::{Body, FlowId, HostId, Packet, UDP_OVERHEAD};
use crate::rng::{derive, rng, Stream};
use crate::scenario::{PeerGroup, PlayerSpec, Role, Scenario};
use ppspp_core::play::{PlayerConfig, SeekModel, Viewer};

/// What every partition reads during a window (and only the simulation
/// changes between windows).
pub struct Shared {
    /// The scenario being run.
    pub scenario: Scenario,
    /// The experiment seed.
    pub seed: u64,
    /// The content and its shared hash tree (none for a live stream).
    pub content: Option<SyntheticContent>,
    /// The live stream, when the scenario streams live.
    pub live: Option<LiveStream>,
    /// Every host's plan, by host id.
    pub plans: Vec<PeerPlan>,
    /// The tracker.
    pub tracker: Tracker,
}

/// Something the scenario makes happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Control {
    Join,
    Leave,
    /// A leecher's periodic look at whether it needs the tracker again.
    Announce,
    Sample,
}

/// The host key of the sampling control: after every peer's controls at
/// the same instant.
const SAMPLE_HOST: u32 = u32::MAX;

/// One partition's share of a progress sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PartialSample {
    /// Virtual microseconds.
    pub at_us: u64,
    /// Peers present.
    pub present: u32,
    /// Leechers present.
    pub leechers: u32,
    /// Leechers completed so far (present or gone).
    pub completed: u32,
    /// Chunks held by the present leechers, summed.
    pub have: u64,
}

/// Some of the hosts, and everything that happens at them.
pub struct Partition {
    layout: Partitioning,
    /// The network model; it moves packets on this partition's links only.
    pub net: Network,
    /// Its peers: host `k * parts + part` at index `k`.
    pub peers: Vec<Peer>,
    /// (time, host, sequence): one live timer per peer, superseded ones
    /// are skipped when they come up.
    timers: BinaryHeap<Reverse<(Instant, u32, u64)>>,
    /// Cross-traffic flows (only when the simulation is one partition).
    pub flows: Vec<CrossFlow>,
    flow_timers: BinaryHeap<Reverse<(Instant, u64, u32, u8)>>,
    controls: BinaryHeap<Reverse<(Instant, u32, u64, Control)>>,
    seq: u64,
    now: Instant,
    /// PPSPP bytes delivered here from each host (for `rates`).
    sent_by_host: Vec<u64>,
    /// Rate samples (this partition's deliveries only).
    pub rates: Vec<RateSample>,
    /// Progress samples (this partition's peers only).
    pub samples: Vec<PartialSample>,
    pending_joins: usize,
    incomplete_leechers: usize,
    completed_leechers: u32,
    present: u32,
    /// Events processed (packet moves, timers, arrivals and departures).
    pub events: u64,
    /// Packets that arrived for a peer no longer there.
    pub to_absent: u64,
    /// Trace records of the current window.
    pub records: Vec<Record>,
    /// Peers that left in the current window, for the tracker.
    pub departed: Vec<(u32, Instant)>,
    buf: Vec<u8>,
    /// Datagram buffers of delivered packets, reused for the next sends so
    /// that a packet costs no allocation.
    spare: Vec<Vec<u8>>,
    /// The start-up size to time leechers against, if recorded.
    pub startup: Option<super::Startup>,
}

impl Partition {
    /// Partition `layout.part` of the hosts of `plans`, over `net` (a
    /// network of the whole topology).
    pub fn new(layout: Partitioning, mut net: Network, plans: &[PeerPlan], seed: u64) -> Self {
        net.set_partitioning(layout);
        let mut p = Partition {
            layout,
            net,
            peers: Vec::new(),
            timers: BinaryHeap::new(),
            flows: Vec::new(),
            flow_timers: BinaryHeap::new(),
            controls: BinaryHeap::new(),
            seq: 0,
            now: Instant::ZERO,
            sent_by_host: vec![0; plans.len()],
            rates: Vec::new(),
            samples: Vec::new(),
            pending_joins: 0,
            incomplete_leechers: 0,
            completed_leechers: 0,
            present: 0,
            events: 0,
            to_absent: 0,
            records: Vec::new(),
            departed: Vec::new(),
            buf: vec![0u8; 65_536],
            spare: Vec::new(),
            startup: None,
        };
        for (i, plan) in plans.iter().enumerate() {
            let host = HostId(i as u32);
            if !layout.owns(host) {
                continue;
            }
            let at = Instant::ZERO + plan.arrival;
            p.peers.push(Peer::new(plan.clone(), host, seed));
            p.control(at, host.0, Control::Join);
            p.pending_joins += 1;
        }
        p.control(Instant::ZERO, SAMPLE_HOST, Control::Sample);
        p
    }

    fn peer_mut(&mut self, i: u32) -> &mut Peer {
        &mut self.peers[(i / self.layout.parts) as usize]
    }

    fn peer(&self, i: u32) -> &Peer {
        &self.peers[(i / self.layout.parts) as usize]
    }

    /// Whether every peer of this partition has arrived and every leecher
    /// among them is done or gone.
    pub fn done(&self) -> bool {
        self.pending_joins == 0 && self.incomplete_leechers == 0
    }

    /// Adds a cross-traffic flow and sends what it has to send.
    pub fn add_flow(&mut self, flow: CrossFlow) {
        self.flows.push(flow);
        self.flush_flow(self.flows.len() as u32 - 1);
    }

    /// Runs every event due at or before `until`.
    pub fn run_until(&mut self, until: Instant, shared: &Shared) {
        loop {
            let tn = self.net.poll_timeout();
            let tt = self.timers.peek().map(|r| r.0 .0);
            let tf = self.flow_timers.peek().map(|r| r.0 .0);
            let tc = self.controls.peek().map(|r| r.0 .0);
            let Some(next) = [tn, tt, tf, tc].into_iter().flatten().min() else {
                break;
            };
            if next > until {
                break;
            }
            self.now = next;
            if tn == Some(next) {
                self.events += self.net.handle_timeout(next);
                while let Some(p) = self.net.poll_delivery() {
                    self.deliver(p, shared);
                }
                continue;
            }
            if tt == Some(next) {
                if let Some(Reverse((at, i, _))) = self.timers.pop() {
                    self.events += 1;
                    self.fire_timer(at, i, shared);
                }
            } else if tf == Some(next) {
                if let Some(Reverse((at, _, f, end))) = self.flow_timers.pop() {
                    self.events += 1;
                    self.fire_flow_timer(at, f, end);
                }
            } else if let Some(Reverse((_, i, _, c))) = self.controls.pop() {
                // Every partition samples its own peers: sampling is not
                // counted as an event, so the count does not depend on the
                // split.
                self.events += u64::from(c != Control::Sample);
                self.on_control(i, c, shared);
            }
        }
    }

    fn control(&mut self, at: Instant, host: u32, c: Control) {
        self.seq += 1;
        self.controls.push(Reverse((at, host, self.seq, c)));
    }

    fn record(&mut self, kind: Kind, host: u32, a: u32, b: u32, size: u32) {
        self.records.push(Record {
            at_us: self.now.as_micros(),
            host,
            kind,
            a,
            b,
            size,
        });
    }

    /// Sends what both ends of flow `f` have to send and queues their
    /// timers.
    fn flush_flow(&mut self, f: u32) {
        let now = self.now;
        for end in 0..2 {
            let flow = &mut self.flows[f as usize];
            let agent = flow.end(end);
            while let Some(p) = agent.poll_transmit(now) {
                self.net.send(now, p);
            }
            let next = agent.poll_timeout().map(|t| t.max(now));
            if next != flow.timers[end] {
                flow.timers[end] = next;
                if let Some(t) = next {
                    self.seq += 1;
                    self.flow_timers.push(Reverse((t, self.seq, f, end as u8)));
                }
            }
        }
    }

    fn fire_flow_timer(&mut self, at: Instant, f: u32, end: u8) {
        let flow = &mut self.flows[f as usize];
        let end = usize::from(end);
        if flow.timers[end] != Some(at) {
            return;
        }
        flow.timers[end] = None;
        flow.end(end).on_timeout(self.now);
        self.flush_flow(f);
    }

    fn fire_timer(&mut self, at: Instant, i: u32, shared: &Shared) {
        let now = self.now;
        let peer = self.peer_mut(i);
        if peer.timer != Some(at) {
            return; // superseded
        }
        let _span = log::peer_span(now, PeerName { shared, host: i }).entered();
        peer.timer = None;
        if let Some(bt) = peer.bt.as_mut() {
            bt.on_timeout(now);
            return self.flush_bt(i);
        }
        if peer.fired_at == now {
            peer.fired += 1;
        } else {
            peer.fired_at = now;
            peer.fired = 1;
        }
        if let Some(ep) = peer.endpoint.as_mut() {
            // A live source makes the chunks due (RFC 7574 §6.1.2).
            if let (Some(src), Some(s)) = (peer.live_source.as_mut(), peer.swarm) {
                if let Err(e) = src.produce(now, ep, s) {
                    tracing::warn!("live source: {e}");
                }
            }
            ep.handle_timeout(now);
        }
        self.flush(i);
    }

    fn deliver(&mut self, p: Packet, shared: &Shared) {
        self.record(Kind::Deliver, p.dst.0, p.src.0, p.dst.0, p.size);
        match p.body {
            Body::Datagram(bytes) => {
                if let Some(n) = self.sent_by_host.get_mut(p.src.0 as usize) {
                    *n += u64::from(p.size);
                }
                let i = p.dst.0;
                let now = self.now;
                let _span = log::peer_span(now, PeerName { shared, host: i }).entered();
                let Some(ep) = self
                    .peers
                    .get_mut((i / self.layout.parts) as usize)
                    .and_then(|x| x.endpoint.as_mut())
                else {
                    self.to_absent += 1;
                    return;
                };
                log::delivered(addr_of(p.src), bytes.len());
                ep.handle_datagram(now, addr_of(p.src), &bytes);
                self.spare.push(bytes);
                self.flush(i);
            }
            Body::Probe { .. } | Body::Tcp(_) | Body::Utp(_) => {
                let Some(f) = p.flow.0.checked_sub(CROSS_FLOW_BASE) else {
                    // Below the cross-traffic flows: a BitTorrent peer's.
                    return self.deliver_bt(p);
                };
                let Some(flow) = self.flows.get_mut(f as usize) else {
                    return;
                };
                let end = usize::from(p.dst == flow.dst && p.src == flow.src);
                flow.end(end).on_packet(self.now, p);
                self.flush_flow(f);
            }
        }
    }

    /// Sends what peer `i`'s endpoint has to send, takes its events, and
    /// queues its next timer.
    fn flush(&mut self, i: u32) {
        let now = self.now;
        let k = (i / self.layout.parts) as usize;
        let peer = &mut self.peers[k];
        let Some(ep) = peer.endpoint.as_mut() else {
            return;
        };
        while let Some(t) = ep.poll_transmit(now, &mut self.buf) {
            let Some(dst) = host_of(t.destination) else {
                continue;
            };
            let mut v = self.spare.pop().unwrap_or_default();
            v.clear();
            v.extend_from_slice(&self.buf[..t.len]);
            self.net.send(
                now,
                Packet {
                    src: peer.host,
                    dst,
                    flow: FlowId(peer.host.0),
                    size: t.len as u32 + UDP_OVERHEAD,
                    body: Body::Datagram(v),
                },
            );
        }
        let mut completed = false;
        while let Some(e) = ep.poll_event() {
            log::event(&e);
            completed |= matches!(e, Event::Complete { .. });
        }
        if let (Some(st), Some(s), None) = (&self.startup, peer.swarm, peer.started) {
            // In order from the start: what a player needs to begin.
            let prefix = ChunkRange::new(0u64, st.chunks.saturating_sub(1));
            if peer.plan.role == Role::Leecher
                && prefix.is_some_and(|r| ep.have(s).is_some_and(|h| h.is_filled(r)))
            {
                peer.started = Some(now);
            }
        }
        let mut next = ep.poll_timeout(now);
        if let (Some(v), Some(s)) = (peer.viewer.as_mut(), peer.swarm) {
            if let Some(t) = v.update(now, ep, s) {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        if let (Some(v), Some(s)) = (peer.live_viewer.as_mut(), peer.swarm) {
            if let Some(t) = v.update(now, ep, s) {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
            // A live viewer is done when it played the stream to its end.
            completed |= v.ended();
        }
        if let Some(t) = peer.live_source.as_ref().and_then(|src| src.poll_timeout()) {
            next = Some(next.map_or(t, |n| n.min(t)));
        }
        // The core never asks for "now" again and again without progress
        // (`proto/endpoint/timers.rs`): many firings at one instant are a
        // bug of the core, not something to step over.
        debug_assert!(
            !(peer.fired_at == now && peer.fired > 10_000),
            "peer {i} fired {} times at {now:?}",
            peer.fired
        );
        self.set_timer(i, next);
        if completed {
            self.mark_completed(i);
        }
    }

    /// Peer `i` wants waking at `next` (not before now): queued unless it
    /// is already.
    pub(super) fn set_timer(&mut self, i: u32, next: Option<Instant>) {
        let now = self.now;
        let next = next.map(|t| t.max(now));
        let peer = self.peer_mut(i);
        if next != peer.timer {
            peer.timer = next;
            if let Some(t) = next {
                self.seq += 1;
                self.timers.push(Reverse((t, i, self.seq)));
            }
        }
    }

    /// Peer `i` has the whole content now: counted once, and it leaves
    /// after its linger if it is to leave when done.
    pub(super) fn mark_completed(&mut self, i: u32) {
        let now = self.now;
        let k = (i / self.layout.parts) as usize;
        let peer = &mut self.peers[k];
        if peer.completed.is_none() && peer.plan.role == Role::Leecher {
            peer.completed = Some(now);
            let linger = match peer.plan.leave {
                Leave::WhenDone(linger) => Some(linger),
                _ => None,
            };
            self.completed_leechers += 1;
            self.incomplete_leechers -= 1;
            self.record(Kind::Complete, i, i, 0, 0);
            if let Some(linger) = linger {
                self.control(now + linger, i, Control::Leave);
            }
        }
    }

    fn on_control(&mut self, i: u32, c: Control, shared: &Shared) {
        match c {
            Control::Join => self.join(i, shared),
            Control::Leave => self.leave(i, shared),
            Control::Announce => self.announce(i, shared),
            Control::Sample => {
                self.sample(shared);
                let every = shared
                    .scenario
                    .record
                    .interval
                    .0
                    .max(Duration::from_millis(1));
                self.control(self.now + every, SAMPLE_HOST, Control::Sample);
            }
        }
    }

    fn join(&mut self, i: u32, shared: &Shared) {
        self.pending_joins -= 1;
        let now = self.now;
        let scenario = &shared.scenario;
        let (group, role) = {
            let p = self.peer(i);
            (p.plan.group, p.plan.role)
        };
        if role == Role::Host {
            self.peer_mut(i).joined = Some(now);
            return;
        }
        if self.peer(i).plan.bittorrent {
            return self.join_bt(i, shared);
        }
        let _span = log::peer_span(now, PeerName { shared, host: i }).entered();
        log::control("joining");
        let config = endpoint_config(scenario, group);
        let spec = scenario.peers[group].get_ref();
        let mut ep = Endpoint::new(config, derive(shared.seed, Stream::Peer, u64::from(i)));
        ep.add_own_address(addr_of(HostId(i)));
        let (swarm, viewer) = match (&shared.content, &shared.live) {
            (_, Some(stream)) => (self.live_swarm(i, now, shared, stream, &mut ep), None),
            (Some(content), None) => {
                let tree = content.tree();
                // Only leechers have players (the scenario check refuses others).
                let viewer = spec.player.map(|p| {
                    let config = player_config(&p);
                    let v = Viewer::new(config, tree.chunk_size(), Some(tree.chunk_count()), now);
                    // The rate was checked when the scenario was read. Each viewer
                    // seeks from its own stream of the experiment seed, so seeks
                    // leave every other random choice as it was.
                    match p
                        .seek
                        .and_then(|s| SeekModel::per_minute(s.per_minute).ok())
                    {
                        Some(model) => {
                            v.with_seeks(model, rng(shared.seed, Stream::Seek, u64::from(i)))
                        }
                        None => v,
                    }
                });
                let setup = vod_swarm_setup(spec, role, content);
                (ep.add_swarm(now, setup), viewer)
            }
            (None, None) => (None, None),
        };
        let want = scenario.swarm.tracker_peers;
        let peer = self.peer_mut(i);
        if let Some(s) = swarm {
            for j in shared.tracker.answer(i, now, want, &mut peer.tracker_rng) {
                ep.connect(now, s, addr_of(HostId(j)));
            }
        }
        peer.endpoint = Some(Box::new(ep));
        peer.swarm = swarm;
        peer.viewer = viewer;
        peer.joined = Some(now);
        let leave = peer.plan.leave;
        if role == Role::Leecher {
            self.incomplete_leechers += 1;
        }
        if let Leave::After(life) = leave {
            self.control(now + life, i, Control::Leave);
        }
        if role == Role::Leecher {
            self.control(now + scenario.swarm.reannounce.0, i, Control::Announce);
        }
        self.present += 1;
        self.record(Kind::Join, i, i, 0, 0);
        self.flush(i);
    }

    /// A leecher still downloading asks the tracker again when the rule
    /// [`super::tracker::asks_again`] says.
    fn announce(&mut self, i: u32, shared: &Shared) {
        let now = self.now;
        let swarm = &shared.scenario.swarm;
        if self.peer(i).bt.is_some() {
            return self.announce_bt(i, shared);
        }
        let p = self.peer_mut(i);
        let (Some(ep), Some(s)) = (p.endpoint.as_mut(), p.swarm) else {
            return;
        };
        if p.completed.is_some() {
            return;
        }
        let _span = log::peer_span(now, PeerName { shared, host: i }).entered();
        let have = ep.progress(s).map_or(0, |(have, _)| have);
        let (channels, want) = (ep.channel_count(), swarm.tracker_peers);
        if super::tracker::asks_again(channels, want, have, &mut p.announced_have) {
            log::control("asking the tracker again");
            for j in shared
                .tracker
                .answer(i, now, swarm.tracker_peers, &mut p.tracker_rng)
            {
                ep.connect(now, s, addr_of(HostId(j)));
            }
            self.flush(i);
        }
        self.control(now + swarm.reannounce.0, i, Control::Announce);
    }

    fn leave(&mut self, i: u32, shared: &Shared) {
        let now = self.now;
        let peer = self.peer_mut(i);
        if !peer.present() {
            return;
        }
        let _span = log::peer_span(now, PeerName { shared, host: i }).entered();
        log::control("leaving");
        if let (Some(ep), Some(s)) = (peer.endpoint.as_mut(), peer.swarm) {
            ep.close_swarm(s);
        }
        if let Some(bt) = peer.bt.as_mut() {
            bt.close_all();
            self.flush_bt(i);
        } else {
            self.flush(i);
        }
        let peer = self.peer_mut(i);
        peer.snapshot(now);
        peer.endpoint = None;
        peer.bt = None;
        peer.timer = None;
        peer.left = Some(now);
        let unfinished = peer.plan.role == Role::Leecher && peer.completed.is_none();
        if unfinished {
            self.incomplete_leechers -= 1;
        }
        self.present -= 1;
        self.departed.push((i, now));
        self.record(Kind::Leave, i, i, 0, 0);
    }

    fn sample_rates(&mut self, shared: &Shared) {
        let t = self.now.as_micros() as f64 / 1e6;
        for (i, f) in self.flows.iter().enumerate() {
            self.rates.push(RateSample {
                t,
                flow: format!("flow{i}"),
                bytes: f.delivered(),
            });
        }
        let sent = &self.sent_by_host;
        self.rates
            .extend(peer_rate_samples(&shared.scenario, &shared.plans, t, |h| {
                sent[h]
            }));
    }

    fn sample(&mut self, shared: &Shared) {
        self.sample_rates(shared);
        let mut s = PartialSample {
            at_us: self.now.as_micros(),
            present: self.present,
            completed: self.completed_leechers,
            ..PartialSample::default()
        };
        for p in &self.peers {
            if p.plan.role != Role::Leecher {
                continue;
            }
            if let Some(bt) = &p.bt {
                s.leechers += 1;
                s.have += bt_have_chunks(bt, shared);
                continue;
            }
            let (Some(ep), Some(h)) = (&p.endpoint, p.swarm) else {
                continue;
            };
            s.leechers += 1;
            if let Some((have, _)) = ep.progress(h) {
                s.have += have;
            }
        }
        self.samples.push(s);
    }
}

/// The `ppspp:GROUP[i]` rows of `rates.csv` at `t` (seconds) for every
/// group `record.rates` names: the wire bytes the model has delivered from
/// each of its hosts so far, `sent(host)`. The simulator and the emulator
/// sample them alike.
pub fn peer_rate_samples(
    scenario: &crate::scenario::Scenario,
    plans: &[super::plan::PeerPlan],
    t: f64,
    sent: impl Fn(usize) -> u64,
) -> Vec<RateSample> {
    let mut out = Vec::new();
    for g in &scenario.record.rates {
        let Some(gi) = scenario.peers.iter().position(|p| p.get_ref().name == *g) else {
            continue;
        };
        let hosts = plans.iter().enumerate().filter(|(_, p)| p.group == gi);
        for (k, (h, _)) in hosts.enumerate() {
            out.push(RateSample {
                t,
                flow: format!("ppspp:{g}[{k}]"),
                bytes: sent(h),
            });
        }
    }
    out
}

/// The lab's wall clock at virtual time zero, 2026-01-01T00:00:00Z in µs
/// since the Unix epoch: DATA timestamps look like a real node's.
const LAB_EPOCH_MICROS: u64 = 1_767_225_600_000_000;

/// The endpoint configuration of peer group `group`.
/// The swarm a ppspp peer of group `spec` joins an on-demand scenario
/// with, as `role`: its group's picker at its player's bitrate (1 Mbit/s
/// without a player), and the content's storage, full for a seeder.
pub fn vod_swarm_setup(spec: &PeerGroup, role: Role, content: &SyntheticContent) -> SwarmSetup {
    let tree = content.tree();
    let rate = pick::MediaRate {
        chunk_size: tree.chunk_size(),
        bitrate: spec.player.map_or(Bitrate::MBIT, |p| Bitrate(p.bitrate.0)),
    };
    let picker = spec.picker().build(rate, spec.vod_windows());
    let storage = Box::new(content.storage());
    match role {
        Role::Seeder => SwarmSetup::seed(tree, storage, picker),
        Role::Leecher | Role::Host => {
            SwarmSetup::download_with_tree(tree, Binmap::new(), storage, picker)
        }
    }
}

/// A `player` table's settings for the core's player model.
pub fn player_config(p: &PlayerSpec) -> PlayerConfig {
    PlayerConfig {
        bitrate: Bitrate(p.bitrate.0),
        prebuffer: p.prebuffer.0,
        rebuffer: p.rebuffer.0,
    }
}

/// The protocol engine's settings for a peer of group `group`: what the
/// scenario's group and swarm tables say, over the core's defaults (the
/// real-time emulator starts its nodes with these too).
pub fn endpoint_config(scenario: &Scenario, group: usize) -> EndpointConfig {
    let g = scenario.peers[group].get_ref();
    let mut c = EndpointConfig {
        congestion: g.congestion.clone(),
        upload_limit: g.upload_limit.map(|r| r.0 / 8),
        download_limit: g.download_limit.map(|r| r.0 / 8),
        // A simulated peer has no disk to checkpoint to.
        checkpoint_interval: Duration::from_secs(3600),
        // Checked when the scenario was read.
        upload_scheduling: g.upload_scheduling().unwrap_or_default(),
        choking: g.choking,
        wall_clock_offset: LAB_EPOCH_MICROS
            + g.clock_offset
                .map_or(0, |d| ppspp_core::time::duration_micros(d.0)),
        ..EndpointConfig::default()
    };
    if let Some(slots) = g.upload_slots {
        c.upload_slots = slots;
    }
    if let Some(m) = scenario.swarm.max_peers {
        c.max_peers_per_swarm = m;
        c.pex_connect_limit = m.div_ceil(2);
    }
    if let Some(n) = scenario.swarm.loss_threshold {
        c.loss_threshold = n;
    }
    if let Some(n) = scenario.swarm.ack_every {
        c.ack_every = n;
    }
    if let Some(d) = scenario.swarm.ack_delay {
        c.ack_delay = d.0;
    }
    if let Some(x) = scenario.live.as_ref().and_then(|l| l.source_spread) {
        c.live_source_spread = x;
    }
    if let Some(d) = scenario.swarm.have_interval {
        // The scenario's one swarm is live or not.
        if scenario.live.is_some() {
            c.live_have_interval = d.0;
        } else {
            c.have_interval = d.0;
        }
    }
    c
}

#[path = "partition_bt.rs"]
mod bt;
use bt::bt_have_chunks;

#[path = "partition_live.rs"]
mod live;
pub use live::{live_peer, LivePart};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_clock_offset_moves_its_wire_clock() {
        let text = include_str!("../../tests/small_swarm.toml").replace(
            "role = \"leecher\"",
            "role = \"leecher\"\nclock_offset = \"3s\"",
        );
        let scenario = crate::scenario::parse(&text, "t.toml").unwrap();
        assert_eq!(
            endpoint_config(&scenario, 0).wall_clock_offset,
            LAB_EPOCH_MICROS
        );
        assert_eq!(
            endpoint_config(&scenario, 1).wall_clock_offset,
            LAB_EPOCH_MICROS + 3_000_000
        );
    }

    #[test]
    fn the_swarm_have_interval_sets_the_vod_interval_of_a_vod_scenario() {
        let text = include_str!("../../tests/small_swarm.toml");
        let text = crate::sweep::apply(text, "swarm.have_interval", "70ms").unwrap();
        let scenario = crate::scenario::parse(&text, "t.toml").unwrap();
        let c = endpoint_config(&scenario, 0);
        assert_eq!(c.have_interval, Duration::from_millis(70));
        assert_eq!(
            c.live_have_interval,
            EndpointConfig::default().live_have_interval
        );
    }

    #[test]
    fn the_live_source_spread_reaches_the_endpoints_and_is_bounded() {
        let text = include_str!("../../../../scenarios/live-small.toml");
        let set = crate::sweep::apply(text, "live.source_spread", "0.25").unwrap();
        let scenario = crate::scenario::parse(&set, "t.toml").unwrap();
        assert_eq!(endpoint_config(&scenario, 0).live_source_spread, 0.25);
        let scenario = crate::scenario::parse(text, "t.toml").unwrap();
        assert_eq!(
            endpoint_config(&scenario, 0).live_source_spread,
            EndpointConfig::default().live_source_spread
        );
        let bad = crate::sweep::apply(text, "live.source_spread", "1.5").unwrap();
        let e = crate::scenario::parse(&bad, "t.toml").unwrap_err();
        assert!(
            e.to_string()
                .contains("live.source_spread must be from 0 to 1"),
            "{e}"
        );
    }

    #[test]
    fn the_swarm_loss_threshold_reaches_every_endpoint() {
        let text = include_str!("../../tests/small_swarm.toml");
        let set = crate::sweep::apply(text, "swarm.loss_threshold", "0").unwrap();
        let scenario = crate::scenario::parse(&set, "t.toml").unwrap();
        assert_eq!(endpoint_config(&scenario, 0).loss_threshold, 0);
        assert_eq!(endpoint_config(&scenario, 1).loss_threshold, 0);
        let scenario = crate::scenario::parse(text, "t.toml").unwrap();
        assert_eq!(
            endpoint_config(&scenario, 1).loss_threshold,
            EndpointConfig::default().loss_threshold
        );
    }

    #[test]
    fn a_group_congestion_controller_reaches_its_endpoints() {
        let text = include_str!("../../tests/small_swarm.toml").replace(
            "role = \"leecher\"",
            "role = \"leecher\"\ncongestion = \"fixed\"",
        );
        let scenario = crate::scenario::parse(&text, "t.toml").unwrap();
        let seeder = endpoint_config(&scenario, 0);
        assert_eq!(seeder.congestion.name(), "ledbat");
        let leecher = endpoint_config(&scenario, 1);
        assert_eq!(leecher.congestion.name(), "fixed");
        // Requests stay under LEDBAT: the scenario chooses the sender's.
        assert_eq!(leecher.request_congestion.name(), "ledbat");
    }
}
