//! The discrete-event simulator: the network model, one protocol-core
//! [`Endpoint`] per peer, and the scenario's arrivals and departures, all
//! ordered by (time, sequence) in virtual time.
//!
//! At equal times the network's deliveries go first, then the peers'
//! timers, then arrivals, departures and sampling; within each, insertion
//! order. Nothing here reads a clock or a global random source (the wall
//! time reported is measured by the caller), so a scenario and a seed give
//! the same trace every time.

pub mod cross;
pub mod peer;
pub mod plan;
pub mod trace;

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use ppspp_core::pick;
use ppspp_core::proto::{Endpoint, EndpointConfig, Event, SwarmSetup};
use ppspp_core::time::Instant;
use ppspp_core::{Binmap, ChunkSize, HashFunction};
use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;

use crate::content::SyntheticContent;
use crate::net::{LinkId, Network};
use crate::packet::{Body, FlowId, HostId, Packet, UDP_OVERHEAD};
use crate::rng::{derive, rng, Stream};
use crate::scenario::{host_ref, Role, Scenario};
use cross::{CrossFlow, CROSS_FLOW_BASE};
use peer::{addr_of, host_of, Peer};
use plan::Leave;
use trace::{Kind, Trace};

/// Something the scenario makes happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Control {
    Join(u32),
    Leave(u32),
    /// A leecher's periodic look at whether it needs the tracker again.
    Announce(u32),
    Sample,
}

/// Swarm-wide progress at one instant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProgressSample {
    /// Virtual seconds.
    pub t: f64,
    /// Peers in the swarm.
    pub present: u32,
    /// Leechers in the swarm.
    pub leechers: u32,
    /// Leechers that have completed so far (present or gone).
    pub completed: u32,
    /// Mean fraction of the content held by the present leechers.
    pub mean_progress: f64,
}

/// Bytes delivered so far by one flow, at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct RateSample {
    /// Virtual seconds.
    pub t: f64,
    /// `flowN` (cross traffic) or `ppspp:GROUP[i]` (a peer's uploads).
    pub flow: String,
    /// Payload (cross traffic) or wire (PPSPP) bytes delivered so far.
    pub bytes: u64,
}

/// A simulation built from a scenario, ready to run.
pub struct Simulation {
    scenario: Scenario,
    seed: u64,
    net: Network,
    content: SyntheticContent,
    peers: Vec<Peer>,
    timers: BinaryHeap<Reverse<(Instant, u64, u32)>>,
    flows: Vec<CrossFlow>,
    flow_timers: BinaryHeap<Reverse<(Instant, u64, u32, u8)>>,
    /// PPSPP bytes delivered from each host (for `rates`).
    sent_by_host: Vec<u64>,
    rates: Vec<RateSample>,
    controls: BinaryHeap<Reverse<(Instant, u64, Control)>>,
    seq: u64,
    now: Instant,
    end: Instant,
    trace: Trace,
    churn: Xoshiro256PlusPlus,
    /// Peers in the swarm, in join order (random choices index into it).
    present: Vec<u32>,
    pending_joins: usize,
    incomplete_leechers: usize,
    completed_leechers: u32,
    progress: Vec<ProgressSample>,
    events: u64,
    to_absent: u64,
    buf: Vec<u8>,
    /// Datagram buffers of delivered packets, reused for the next sends so
    /// that a packet costs no allocation.
    spare: Vec<Vec<u8>>,
    /// Timer firings at the current instant, to break a livelock.
    same_instant: u32,
    /// Links with a traced flow (`record.waits`).
    traced: Vec<(LinkId, String, String)>,
}

/// A peer's results.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerResult {
    /// Index (also its host id).
    pub id: u32,
    /// Its peer group's name.
    pub group: String,
    /// Seeder or leecher.
    pub role: Role,
    /// Virtual seconds.
    pub join_s: Option<f64>,
    /// Virtual seconds.
    pub leave_s: Option<f64>,
    /// Virtual seconds.
    pub complete_s: Option<f64>,
    /// Verified payload bytes received.
    pub bytes_down: u64,
    /// ... of which from seeders.
    pub bytes_down_from_seeders: u64,
    /// ... of which from other leechers.
    pub bytes_down_from_peers: u64,
    /// Payload bytes sent.
    pub bytes_up: u64,
    /// Chunks that failed verification.
    pub chunks_rejected: u64,
}

impl Simulation {
    /// Builds the network and the peers of `scenario`, with `seed` in
    /// place of the scenario's own if given.
    pub fn new(scenario: Scenario, seed: Option<u64>) -> Result<Simulation, String> {
        let seed = seed.unwrap_or(scenario.seed);
        let cs = ChunkSize::new(scenario.content.chunk_size.0).map_err(|e| e.to_string())?;
        let hash = HashFunction::from_name(&scenario.content.hash)
            .ok_or_else(|| format!("unknown hash function {}", scenario.content.hash))?;
        let content =
            SyntheticContent::new(scenario.content.size.0, cs, hash).map_err(|e| e.to_string())?;
        let (net, plans) = plan::build(&scenario, seed);
        let mut sim = Simulation {
            end: Instant::ZERO + scenario.duration.0,
            seed,
            net,
            content,
            peers: Vec::with_capacity(plans.len()),
            timers: BinaryHeap::new(),
            flows: Vec::new(),
            flow_timers: BinaryHeap::new(),
            sent_by_host: Vec::new(),
            rates: Vec::new(),
            controls: BinaryHeap::new(),
            seq: 0,
            now: Instant::ZERO,
            trace: Trace::default(),
            churn: rng(seed, Stream::Churn, 1),
            present: Vec::new(),
            pending_joins: plans.len(),
            incomplete_leechers: 0,
            completed_leechers: 0,
            progress: Vec::new(),
            events: 0,
            to_absent: 0,
            buf: vec![0u8; 65_536],
            spare: Vec::new(),
            same_instant: 0,
            traced: Vec::new(),
            scenario,
        };
        for (i, plan) in plans.into_iter().enumerate() {
            let at = Instant::ZERO + plan.arrival;
            sim.peers.push(Peer::new(plan, HostId(i as u32)));
            sim.control(at, Control::Join(i as u32));
        }
        sim.sent_by_host = vec![0; sim.peers.len()];
        sim.control(Instant::ZERO, Control::Sample);
        sim.setup_records();
        sim.setup_flows();
        Ok(sim)
    }

    fn setup_records(&mut self) {
        for q in self.scenario.record.queues.clone() {
            if let Some(id) = self.link_named(&q) {
                self.net.link_mut(id).record_samples();
            }
        }
        for w in self.scenario.record.waits.clone() {
            let w = w.get_ref();
            let flow = match w.flow.strip_prefix("ppspp:") {
                Some(host) => self.host_named(host).map(|h| FlowId(h.0)),
                None => w
                    .flow
                    .strip_prefix("flow")
                    .and_then(|n| n.parse::<u32>().ok())
                    .map(|n| FlowId(CROSS_FLOW_BASE + n)),
            };
            if let (Some(id), Some(flow)) = (self.link_named(&w.link), flow) {
                self.net.link_mut(id).trace_flow(flow);
                self.traced.push((id, w.link.clone(), w.flow.clone()));
            }
        }
    }

    /// The link a `"HOST.up"`, `"HOST.down"` or `"site:NAME.up"` reference
    /// names (HOST as in `host_named`).
    fn link_named(&self, r: &str) -> Option<LinkId> {
        let (who, dir) = r.rsplit_once('.')?;
        let (up, down) = match who.strip_prefix("site:") {
            Some(site) => {
                let i = self.scenario.sites.keys().position(|k| k == site)?;
                self.net.site_links(crate::net::SiteId(i as u32))?
            }
            None => self.net.access_links(self.host_named(who)?)?,
        };
        Some(if dir == "up" { up } else { down })
    }

    /// The links whose flow is traced (`record.waits`): link, its name in
    /// the scenario, and the flow's.
    pub fn traced(&self) -> &[(LinkId, String, String)] {
        &self.traced
    }

    /// The host a `"GROUP[i]"` reference names.
    fn host_named(&self, r: &str) -> Option<HostId> {
        let (g, i) = host_ref(&self.scenario, r)?;
        let first = self.peers.iter().position(|p| p.plan.group == g)?;
        Some(HostId(first as u32 + i))
    }

    fn setup_flows(&mut self) {
        for (i, f) in self.scenario.flows.clone().iter().enumerate() {
            let f = f.get_ref();
            let (Some(src), Some(dst)) = (self.host_named(&f.from), self.host_named(&f.to)) else {
                continue;
            };
            self.flows
                .push(CrossFlow::new(i as u32, f, src, dst, self.seed));
            self.flush_flow(i as u32);
        }
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

    /// Samples of bytes delivered per flow over time.
    pub fn rates(&self) -> &[RateSample] {
        &self.rates
    }

    /// The cross-traffic flows.
    pub fn flows(&self) -> &[CrossFlow] {
        &self.flows
    }

    fn control(&mut self, at: Instant, c: Control) {
        self.seq += 1;
        self.controls.push(Reverse((at, self.seq, c)));
    }

    /// The network (links, counters, samples).
    pub fn network(&self) -> &Network {
        &self.net
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The seed in use.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Virtual time now.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The virtual time limit.
    pub fn end(&self) -> Instant {
        self.end
    }

    /// Events processed.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// Packets that arrived for a peer no longer there.
    pub fn to_absent(&self) -> u64 {
        self.to_absent
    }

    /// Swarm progress samples.
    pub fn progress(&self) -> &[ProgressSample] {
        &self.progress
    }

    /// Whether the run may stop: every leecher arrived and is done or gone.
    fn done(&self) -> bool {
        self.scenario.stop_when_done && self.pending_joins == 0 && self.incomplete_leechers == 0
    }

    /// Runs to the end; `tick` is called now and then with the virtual time
    /// (for a progress display).
    pub fn run(&mut self, mut tick: impl FnMut(Instant)) {
        let mut since_tick = 0u32;
        loop {
            let tn = self.net.poll_timeout();
            let tt = self.timers.peek().map(|r| r.0 .0);
            let tf = self.flow_timers.peek().map(|r| r.0 .0);
            let tc = self.controls.peek().map(|r| r.0 .0);
            let Some(next) = [tn, tt, tf, tc].into_iter().flatten().min() else {
                break;
            };
            if next > self.end || self.done() {
                break;
            }
            if next > self.now {
                self.same_instant = 0;
            }
            self.now = next;
            self.events += 1;
            if tn == Some(next) {
                self.net.handle_timeout(next);
                while let Some(p) = self.net.poll_delivery() {
                    self.deliver(p);
                }
            } else if tt == Some(next) {
                let Some(Reverse((at, _, i))) = self.timers.pop() else {
                    break;
                };
                self.fire_timer(at, i);
            } else if tf == Some(next) {
                let Some(Reverse((at, _, f, end))) = self.flow_timers.pop() else {
                    break;
                };
                self.fire_flow_timer(at, f, end);
            } else if let Some(Reverse((_, _, c))) = self.controls.pop() {
                self.on_control(c);
            }
            since_tick += 1;
            if since_tick >= 65_536 {
                since_tick = 0;
                tick(self.now);
            }
        }
        tick(self.now);
        for p in &mut self.peers {
            if p.present() {
                p.snapshot();
            }
        }
    }

    fn fire_timer(&mut self, at: Instant, i: u32) {
        let peer = &mut self.peers[i as usize];
        if peer.timer != Some(at) {
            return; // superseded
        }
        peer.timer = None;
        if let Some(ep) = peer.endpoint.as_mut() {
            ep.handle_timeout(self.now);
        }
        self.same_instant += 1;
        self.flush(i);
    }

    fn deliver(&mut self, p: Packet) {
        self.trace.record(
            Kind::Deliver,
            self.now.as_micros(),
            p.src.0,
            p.dst.0,
            p.size,
        );
        match p.body {
            Body::Datagram(bytes) => {
                if let Some(n) = self.sent_by_host.get_mut(p.src.0 as usize) {
                    *n += u64::from(p.size);
                }
                let i = p.dst.0;
                let Some(ep) = self
                    .peers
                    .get_mut(i as usize)
                    .and_then(|x| x.endpoint.as_mut())
                else {
                    self.to_absent += 1;
                    return;
                };
                ep.handle_datagram(self.now, addr_of(p.src), &bytes);
                self.spare.push(bytes);
                self.flush(i);
            }
            Body::Probe { .. } | Body::Tcp(_) => {
                let Some(f) = p.flow.0.checked_sub(CROSS_FLOW_BASE) else {
                    return;
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
        let peer = &mut self.peers[i as usize];
        let Some(ep) = peer.endpoint.as_mut() else {
            return;
        };
        while let Some(t) = ep.poll_transmit(now, &mut self.buf) {
            let Some(dst) = host_of(t.destination) else {
                continue;
            };
            self.net.send(
                now,
                Packet {
                    src: peer.host,
                    dst,
                    flow: FlowId(peer.host.0),
                    size: t.len as u32 + UDP_OVERHEAD,
                    body: Body::Datagram({
                        let mut v = self.spare.pop().unwrap_or_default();
                        v.clear();
                        v.extend_from_slice(&self.buf[..t.len]);
                        v
                    }),
                },
            );
        }
        let mut completed = false;
        while let Some(e) = ep.poll_event() {
            completed |= matches!(e, Event::Complete { .. });
        }
        let next = ep.poll_timeout();
        if completed && peer.completed.is_none() && peer.plan.role == Role::Leecher {
            peer.completed = Some(now);
            self.completed_leechers += 1;
            self.incomplete_leechers -= 1;
            self.trace.record(Kind::Complete, now.as_micros(), i, 0, 0);
            if let Leave::WhenDone(linger) = peer.plan.leave {
                self.control(now + linger, Control::Leave(i));
            }
        }
        // An endpoint that keeps asking for "now" without progress would
        // stall virtual time: after many firings at one instant, wake it a
        // microsecond later.
        let stalled = self.same_instant > 10_000;
        let next = next.map(|t| match t.max(now) {
            t if t == now && stalled => now + Duration::from_micros(1),
            t => t,
        });
        let peer = &mut self.peers[i as usize];
        if next != peer.timer {
            peer.timer = next;
            if let Some(t) = next {
                self.seq += 1;
                self.timers.push(Reverse((t, self.seq, i)));
            }
        }
    }

    fn on_control(&mut self, c: Control) {
        match c {
            Control::Join(i) => self.join(i),
            Control::Leave(i) => self.leave(i),
            Control::Announce(i) => self.announce(i),
            Control::Sample => {
                self.sample();
                let every = self
                    .scenario
                    .record
                    .interval
                    .0
                    .max(Duration::from_millis(1));
                self.control(self.now + every, Control::Sample);
            }
        }
    }

    fn endpoint_config(&self, group: usize) -> EndpointConfig {
        let g = self.scenario.peers[group].get_ref();
        let mut c = EndpointConfig {
            congestion: g.congestion.clone(),
            upload_limit: g.upload_limit.map(|r| r.0 / 8),
            download_limit: g.download_limit.map(|r| r.0 / 8),
            // A simulated peer has no disk to checkpoint to.
            checkpoint_interval: Duration::from_secs(3600),
            ..EndpointConfig::default()
        };
        if let Some(slots) = g.upload_slots {
            c.upload_slots = slots;
        }
        if let Some(m) = self.scenario.swarm.max_peers {
            c.max_peers_per_swarm = m;
            c.pex_connect_limit = m.div_ceil(2);
        }
        c
    }

    fn join(&mut self, i: u32) {
        self.pending_joins -= 1;
        let now = self.now;
        if self.peers[i as usize].plan.role == Role::Host {
            self.peers[i as usize].joined = Some(now);
            return;
        }
        let group = self.peers[i as usize].plan.group;
        let role = self.peers[i as usize].plan.role;
        let config = self.endpoint_config(group);
        let algorithm = self.scenario.peers[group].get_ref().algorithm.clone();
        let mut ep = Endpoint::new(config, derive(self.seed, Stream::Peer, u64::from(i)));
        let picker = pick::by_name(&algorithm).unwrap_or_else(|| Box::new(pick::Sequential::new()));
        let storage = Box::new(self.content.storage());
        let tree = self.content.tree();
        let setup = match role {
            Role::Seeder => SwarmSetup::seed(tree, storage, picker),
            Role::Leecher | Role::Host => {
                SwarmSetup::download_with_tree(tree, Binmap::new(), storage, picker)
            }
        };
        let swarm = ep.add_swarm(now, setup);
        if let Some(s) = swarm {
            for j in self.tracker_answer(i) {
                ep.connect(now, s, addr_of(HostId(j)));
            }
        }
        let peer = &mut self.peers[i as usize];
        peer.endpoint = Some(Box::new(ep));
        peer.swarm = swarm;
        peer.joined = Some(now);
        if role == Role::Leecher {
            self.incomplete_leechers += 1;
        }
        if let Leave::After(life) = peer.plan.leave {
            self.control(now + life, Control::Leave(i));
        }
        if role == Role::Leecher {
            self.control(now + self.scenario.swarm.reannounce.0, Control::Announce(i));
        }
        self.present.push(i);
        self.trace.record(Kind::Join, now.as_micros(), i, 0, 0);
        self.flush(i);
    }

    /// Who a tracker names to peer `i`: every seeder present, and
    /// `tracker_peers` leechers at random.
    fn tracker_answer(&mut self, i: u32) -> Vec<u32> {
        let role = |j: u32| self.peers[j as usize].plan.role;
        let mut chosen: Vec<u32> = Vec::new();
        let mut pool: Vec<u32> = Vec::new();
        for &j in self.present.iter().filter(|&&j| j != i) {
            match role(j) {
                Role::Seeder => chosen.push(j),
                Role::Leecher => pool.push(j),
                Role::Host => {}
            }
        }
        for _ in 0..self.scenario.swarm.tracker_peers.min(pool.len()) {
            let k = self.churn.random_range(0..pool.len());
            chosen.push(pool.swap_remove(k));
        }
        chosen
    }

    /// A leecher still downloading with fewer channels than the tracker
    /// names asks the tracker again.
    fn announce(&mut self, i: u32) {
        let now = self.now;
        let p = &self.peers[i as usize];
        let (Some(ep), Some(s)) = (p.endpoint.as_ref(), p.swarm) else {
            return;
        };
        if p.completed.is_some() {
            return;
        }
        if ep.channel_count() < self.scenario.swarm.tracker_peers {
            for j in self.tracker_answer(i) {
                if let Some(ep) = self.peers[i as usize].endpoint.as_mut() {
                    ep.connect(now, s, addr_of(HostId(j)));
                }
            }
            self.flush(i);
        }
        self.control(now + self.scenario.swarm.reannounce.0, Control::Announce(i));
    }

    fn leave(&mut self, i: u32) {
        let now = self.now;
        let peer = &mut self.peers[i as usize];
        if !peer.present() {
            return;
        }
        if let (Some(ep), Some(s)) = (peer.endpoint.as_mut(), peer.swarm) {
            ep.close_swarm(s);
        }
        self.flush(i);
        let peer = &mut self.peers[i as usize];
        peer.snapshot();
        peer.endpoint = None;
        peer.timer = None;
        peer.left = Some(now);
        if peer.plan.role == Role::Leecher && peer.completed.is_none() {
            self.incomplete_leechers -= 1;
        }
        self.present.retain(|&j| j != i);
        self.trace.record(Kind::Leave, now.as_micros(), i, 0, 0);
    }

    fn sample_rates(&mut self) {
        let t = self.now.as_micros() as f64 / 1e6;
        for (i, f) in self.flows.iter().enumerate() {
            self.rates.push(RateSample {
                t,
                flow: format!("flow{i}"),
                bytes: f.delivered(),
            });
        }
        for g in &self.scenario.record.rates {
            let Some(gi) = self
                .scenario
                .peers
                .iter()
                .position(|p| p.get_ref().name == *g)
            else {
                continue;
            };
            for (k, p) in self.peers.iter().filter(|p| p.plan.group == gi).enumerate() {
                self.rates.push(RateSample {
                    t,
                    flow: format!("ppspp:{g}[{k}]"),
                    bytes: self.sent_by_host[p.host.0 as usize],
                });
            }
        }
    }

    fn sample(&mut self) {
        self.sample_rates();
        let mut s = ProgressSample {
            t: self.now.as_micros() as f64 / 1e6,
            present: self.present.len() as u32,
            leechers: 0,
            completed: self.completed_leechers,
            mean_progress: 0.0,
        };
        let total = self.content.chunk_count() as f64;
        let mut sum = 0.0;
        for &i in &self.present {
            let p = &self.peers[i as usize];
            if p.plan.role != Role::Leecher {
                continue;
            }
            s.leechers += 1;
            if let (Some(ep), Some(h)) = (&p.endpoint, p.swarm) {
                if let Some((have, _)) = ep.progress(h) {
                    sum += have as f64 / total;
                }
            }
        }
        if s.leechers > 0 {
            s.mean_progress = sum / f64::from(s.leechers);
        }
        self.progress.push(s);
    }

    /// The trace hash and the number of records in it; consumes the trace.
    pub fn finish_trace(&mut self) -> (String, u64) {
        let t = std::mem::take(&mut self.trace);
        let n = t.records();
        (t.finish(), n)
    }

    /// Every peer's results, in peer order.
    pub fn results(&self) -> Vec<PeerResult> {
        let secs = |t: Option<Instant>| t.map(|t| t.as_micros() as f64 / 1e6);
        self.peers
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let stats = p.stats.clone().unwrap_or_default();
                let mut from_seeders = 0;
                for (addr, s) in &stats.peers {
                    let seeder = host_of(*addr)
                        .and_then(|h| self.peers.get(h.0 as usize))
                        .is_some_and(|q| q.plan.role == Role::Seeder);
                    if seeder {
                        from_seeders += s.payload_bytes_received;
                    }
                }
                PeerResult {
                    id: i as u32,
                    group: self.scenario.peers[p.plan.group].get_ref().name.clone(),
                    role: p.plan.role,
                    join_s: secs(p.joined),
                    leave_s: secs(p.left),
                    complete_s: secs(p.completed),
                    bytes_down: stats.payload_bytes_received,
                    bytes_down_from_seeders: from_seeders,
                    bytes_down_from_peers: stats.payload_bytes_received - from_seeders,
                    bytes_up: stats.payload_bytes_sent,
                    chunks_rejected: stats.chunks_rejected,
                }
            })
            .collect()
    }
}
