//! The discrete-event simulator: the network model, one protocol-core
//! [`Endpoint`](ppspp_core::proto::Endpoint) per peer, and the scenario's
//! arrivals and departures, all ordered by (time, key) in virtual time.
//!
//! The hosts are split among partitions ([`partition`]) that run windows of
//! virtual time, in parallel when there are threads for it, and exchange
//! packets between windows. At equal times within a partition, the
//! network's deliveries go first, then the peers' timers, then arrivals,
//! departures and sampling; each ordered by a key that depends only on the
//! host (see [`crate::net::PacketId`]). Nothing here reads a clock or a
//! global random source (the wall time reported is measured by the
//! caller), so a scenario and a seed give the same trace every time, with
//! any number of threads.

pub mod cross;
pub mod names;
pub mod partition;
pub mod peer;
pub mod plan;
pub mod trace;
pub mod tracker;

use std::time::Duration;

use ppspp_core::chunk::ChunkSizeError;
use ppspp_core::merkle::MerkleError;
use ppspp_core::play::{PlaybackStats, StallSpan};
use ppspp_core::proto::DropCounts;
use ppspp_core::time::Instant;
use ppspp_core::wire::MessageTally;
use ppspp_core::{ChunkSize, HashFunction};
use rayon::prelude::*;

use crate::content::SyntheticContent;
use crate::live::metrics::{as_playback_stats, LivePeer};
use crate::live::LiveStream;
use crate::net::{Network, Partitioning};
use crate::scenario::{Role, Scenario};
use cross::CrossFlow;
use names::{Layout, Traced};
use partition::{Partition, Shared};
use peer::{host_of, Peer};
use trace::{Record, Trace};
use tracker::Tracker;

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

/// Why a scenario could not be built into a simulation. A scenario that
/// [`crate::scenario::parse`] accepted has neither of the first two.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The content's chunk size is not one the core takes.
    #[error(transparent)]
    ChunkSize(#[from] ChunkSizeError),
    /// The content's hash function has no implementation.
    #[error("unknown hash function {0}")]
    UnknownHash(String),
    /// The content's hash tree could not be built.
    #[error(transparent)]
    Content(#[from] MerkleError),
    /// The live stream could not be set up.
    #[error(transparent)]
    Live(#[from] crate::live::LiveSetupError),
    /// The threads for the partitions could not be started.
    #[error(transparent)]
    Threads(#[from] rayon::ThreadPoolBuildError),
}

/// What a run of `scenario` streams, with `seed` and its `plans`:
/// on-demand content (hashed here), or a live stream, which has no content
/// to hash (its source makes it) and starts when its source arrives. The
/// simulator and the emulator both start from this.
pub fn media(
    scenario: &Scenario,
    plans: &[plan::PeerPlan],
    seed: u64,
) -> Result<(Option<SyntheticContent>, Option<LiveStream>), BuildError> {
    let cs = ChunkSize::new(scenario.content.chunk_size.0)?;
    let hash = HashFunction::from_name(&scenario.content.hash)
        .ok_or_else(|| BuildError::UnknownHash(scenario.content.hash.clone()))?;
    Ok(match &scenario.live {
        None => (
            Some(SyntheticContent::new(scenario.content.size.0, cs, hash)?),
            None,
        ),
        Some(spec) => {
            let mut stream = LiveStream::new(scenario, spec, cs, seed)?;
            let source = plans.iter().find(|p| p.role == Role::Seeder);
            stream.start = Instant::ZERO + source.map_or(Duration::ZERO, |p| p.arrival);
            (None, Some(stream))
        }
    })
}

/// A simulation built from a scenario, ready to run.
pub struct Simulation {
    shared: Shared,
    parts: Vec<Partition>,
    /// Threads for the partitions (none: run them in turn).
    pool: Option<rayon::ThreadPool>,
    /// The longest window of virtual time the partitions run apart.
    window: Duration,
    trace: Trace,
    window_records: Vec<Record>,
    now: Instant,
    end: Instant,
    /// Links with a traced flow (`record.waits`).
    traced: Vec<Traced>,
    /// Filled in when the run ends: the partitions' samples summed.
    progress: Vec<ProgressSample>,
    rates: Vec<RateSample>,
}

/// `record.startup_bytes` as the partitions check it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Startup {
    /// The bytes (capped at the content's size).
    pub bytes: u64,
    /// The chunks a ppspp peer needs in order: the bytes, rounded up.
    pub chunks: u64,
    /// The content's size, to count a BitTorrent peer's pieces in bytes.
    pub content_bytes: u64,
}

impl Startup {
    /// `record.startup_bytes` of `scenario`, whose content has
    /// `chunk_count` chunks; `None` when it asks for none.
    pub fn of(scenario: &Scenario, chunk_count: u64) -> Option<Startup> {
        let total = scenario.content.size.0;
        let bytes = scenario.record.startup_bytes?.0.min(total);
        let chunk = scenario.content.chunk_size.0.max(1);
        Some(Startup {
            bytes,
            chunks: bytes.div_ceil(chunk).min(chunk_count),
            content_bytes: total,
        })
    }
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
    /// Seconds from joining until it held `record.startup_bytes`.
    pub startup_bytes_s: Option<f64>,
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
    /// What its viewer experienced, when it had a player.
    pub playback: Option<PlaybackStats>,
    /// Its viewer's stalls one by one (empty without a player).
    pub stalls: Vec<StallSpan>,
    /// The messages it sent, by type.
    pub messages_sent: MessageTally,
    /// The datagrams it dropped, by why.
    pub datagrams_dropped: DropCounts,
    /// Its part in a live stream, if the run streams live.
    pub live: Option<LivePeer>,
    /// Its BitTorrent counters, if it ran BitTorrent (then the byte counts
    /// above are piece bytes).
    pub bittorrent: Option<crate::bt::BtStats>,
}

impl Simulation {
    /// Builds the network and the peers of `scenario`, with `seed` in
    /// place of the scenario's own if given, to run on one thread.
    pub fn new(scenario: Scenario, seed: Option<u64>) -> Result<Simulation, BuildError> {
        Simulation::with_threads(scenario, seed, 1)
    }

    /// As [`Simulation::new`], split into up to `threads` partitions that
    /// run in parallel. The results do not depend on `threads`. A
    /// scenario with sites, cross traffic or no delay between hosts runs
    /// as one partition.
    pub fn with_threads(
        scenario: Scenario,
        seed: Option<u64>,
        threads: usize,
    ) -> Result<Simulation, BuildError> {
        let seed = seed.unwrap_or(scenario.seed);
        let (net, plans) = plan::build(&scenario, seed);
        let (content, live) = media(&scenario, &plans, seed)?;
        let startup = content
            .as_ref()
            .and_then(|c| Startup::of(&scenario, c.chunk_count()));
        let notice = scenario.swarm.tracker_notice.0;
        let lookahead = net.lookahead();
        let splittable = scenario.sites.is_empty()
            && scenario.flows.is_empty()
            && !lookahead.is_zero()
            && plans.len() > 1;
        let parts = if splittable {
            threads.clamp(1, plans.len())
        } else {
            1
        };
        let window = if parts > 1 {
            notice.min(lookahead)
        } else {
            notice
        };
        let mut nets = vec![net];
        for _ in 1..parts {
            nets.push(plan::build(&scenario, seed).0);
        }
        let parts_v: Vec<Partition> = nets
            .into_iter()
            .enumerate()
            .map(|(k, net)| {
                let layout = Partitioning {
                    part: k as u32,
                    parts: parts as u32,
                };
                let mut p = Partition::new(layout, net, &plans, seed);
                p.startup = startup;
                p
            })
            .collect();
        let pool = if parts > 1 {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(parts).build()?;
            Some(pool)
        } else {
            None
        };
        let mut sim = Simulation {
            end: Instant::ZERO + scenario.duration.0,
            shared: Shared {
                tracker: Tracker::new(&plans, notice),
                scenario,
                seed,
                content,
                live,
                plans,
            },
            parts: parts_v,
            pool,
            window,
            trace: Trace::default(),
            window_records: Vec::new(),
            now: Instant::ZERO,
            traced: Vec::new(),
            progress: Vec::new(),
            rates: Vec::new(),
        };
        sim.setup_records();
        sim.setup_flows();
        Ok(sim)
    }

    /// How many partitions the hosts are split into.
    pub fn partitions(&self) -> usize {
        self.parts.len()
    }

    fn setup_records(&mut self) {
        let records = self.layout().records();
        // Every partition's copy of a link is set up; only its owner's
        // moves packets.
        for p in &mut self.parts {
            records.apply(&mut p.net);
        }
        self.traced = records.traced;
    }

    /// What the run leaves to write up besides its peers' results
    /// ([`crate::results::write`]).
    pub fn record(&self) -> crate::results::RunRecord<'_> {
        crate::results::RunRecord {
            layout: self.layout(),
            traced: &self.traced,
            progress: &self.progress,
            flows: self.flows(),
            rates: &self.rates,
            live: self.live(),
            threads: self.partitions(),
            to_absent: self.to_absent(),
            emulation: None,
        }
    }

    /// The scenario laid out: its plan and the whole network.
    pub fn layout(&self) -> Layout<'_> {
        Layout {
            scenario: &self.shared.scenario,
            plans: &self.shared.plans,
            net: &self.parts[0].net,
        }
    }

    /// The traced flows (`record.waits`): link, flow, and their names in
    /// the scenario.
    pub fn traced(&self) -> &[Traced] {
        &self.traced
    }

    fn setup_flows(&mut self) {
        let seed = self.shared.seed;
        for (i, f) in self.shared.scenario.flows.clone().iter().enumerate() {
            let f = f.get_ref();
            let layout = self.layout();
            let (Some(src), Some(dst)) = (layout.host_named(&f.from), layout.host_named(&f.to))
            else {
                continue;
            };
            // Cross traffic makes the simulation one partition.
            self.parts[0].add_flow(CrossFlow::new(i as u32, f, src, dst, seed));
        }
    }

    /// Samples of bytes delivered per flow over time.
    pub fn rates(&self) -> &[RateSample] {
        &self.rates
    }

    /// The cross-traffic flows.
    pub fn flows(&self) -> &[CrossFlow] {
        &self.parts[0].flows
    }

    /// The network (links, counters, samples); the whole of it once the
    /// run has ended.
    pub fn network(&self) -> &Network {
        &self.parts[0].net
    }

    /// The live stream, when the scenario streams live.
    pub fn live(&self) -> Option<&LiveStream> {
        self.shared.live.as_ref()
    }

    /// The scenario being run.
    pub fn scenario(&self) -> &Scenario {
        &self.shared.scenario
    }

    /// The seed in use.
    pub fn seed(&self) -> u64 {
        self.shared.seed
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
        self.parts.iter().map(|p| p.events).sum()
    }

    /// Packets that arrived for a peer no longer there.
    pub fn to_absent(&self) -> u64 {
        self.parts.iter().map(|p| p.to_absent).sum()
    }

    /// Swarm progress samples.
    pub fn progress(&self) -> &[ProgressSample] {
        &self.progress
    }

    /// Host `i`'s peer.
    fn peer(&self, i: usize) -> &Peer {
        let n = self.parts.len();
        &self.parts[i % n].peers[i / n]
    }

    /// Whether the run may stop: every leecher arrived and is done or gone.
    fn done(&self) -> bool {
        self.shared.scenario.stop_when_done && self.parts.iter().all(Partition::done)
    }

    /// Runs to the end, or with `stop_when_done` to the first progress
    /// sample at which every leecher is done; `tick` is called now and then
    /// with the virtual time (for a progress display).
    pub fn run(&mut self, mut tick: impl FnMut(Instant)) {
        let interval = self
            .shared
            .scenario
            .record
            .interval
            .0
            .max(Duration::from_millis(1));
        // Windows end at every sample instant, so that the run can stop
        // exactly at one.
        let mut next_sample = Instant::ZERO;
        let mut until = Instant::ZERO;
        loop {
            self.step(until);
            self.now = until;
            tick(until);
            if until == next_sample {
                if self.done() {
                    break;
                }
                next_sample += interval;
            }
            if until >= self.end {
                break;
            }
            until = (until + self.window).min(next_sample).min(self.end);
        }
        self.finish();
    }

    /// Runs every partition up to `until`, then moves what crossed between
    /// them.
    fn step(&mut self, until: Instant) {
        let shared = &self.shared;
        // The previous window's trace records are hashed while this window
        // runs (in order: one window after another).
        let trace = &mut self.trace;
        let records = &mut self.window_records;
        match &self.pool {
            Some(pool) => pool.install(|| {
                rayon::join(
                    || {
                        self.parts
                            .par_iter_mut()
                            .for_each(|p| p.run_until(until, shared))
                    },
                    || trace.absorb(records),
                );
            }),
            None => {
                trace.absorb(records);
                for p in &mut self.parts {
                    p.run_until(until, shared);
                }
            }
        }
        let n = self.parts.len() as u32;
        if n > 1 {
            let mut handoffs = Vec::new();
            for p in &mut self.parts {
                handoffs.append(&mut p.net.take_outbox());
            }
            for h in handoffs {
                let owner = h.dst().0 % n;
                self.parts[owner as usize].net.inject(h);
            }
        }
        for p in &mut self.parts {
            for (i, at) in p.departed.drain(..) {
                self.shared.tracker.depart(i, at);
            }
            self.window_records.append(&mut p.records);
        }
    }

    /// After the run: takes the counters of the peers still present, and
    /// sums the partitions' samples and networks.
    fn finish(&mut self) {
        self.trace.absorb(&mut self.window_records);
        let now = self.now();
        for part in &mut self.parts {
            for p in &mut part.peers {
                if p.present() {
                    p.snapshot(now);
                }
            }
        }
        // A live swarm's progress is the share of the window held.
        let total = match (&self.shared.content, &self.shared.live) {
            (Some(c), _) => c.chunk_count() as f64,
            (None, Some(l)) => l.window_chunks as f64,
            (None, None) => 1.0,
        };
        let (first, rest) = self.parts.split_at_mut(1);
        let first = &mut first[0];
        self.progress = (0..first.samples.len())
            .map(|k| {
                let mut s = first.samples[k];
                for p in rest.iter() {
                    let o = p.samples[k];
                    s.present += o.present;
                    s.leechers += o.leechers;
                    s.completed += o.completed;
                    s.have += o.have;
                }
                ProgressSample {
                    t: s.at_us as f64 / 1e6,
                    present: s.present,
                    leechers: s.leechers,
                    completed: s.completed,
                    mean_progress: if s.leechers > 0 {
                        s.have as f64 / (total * f64::from(s.leechers))
                    } else {
                        0.0
                    },
                }
            })
            .collect();
        self.rates = std::mem::take(&mut first.rates);
        for p in rest.iter_mut() {
            for (r, o) in self.rates.iter_mut().zip(&p.rates) {
                r.bytes += o.bytes;
            }
            first.net.absorb(&mut p.net);
        }
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
        (0..self.shared.plans.len())
            .map(|i| {
                let p = self.peer(i);
                let stats = p.stats.clone().unwrap_or_default();
                let mut from_seeders = 0;
                for (addr, s) in &stats.peers {
                    let seeder = host_of(*addr)
                        .and_then(|h| self.shared.plans.get(h.0 as usize))
                        .is_some_and(|q| q.role == Role::Seeder);
                    if seeder {
                        from_seeders += s.payload_bytes_received;
                    }
                }
                let live = self.live_peer(p);
                let live_play = live.as_ref().and_then(|l| l.playback.as_ref());
                let clock = self.shared.live.as_ref().map(|l| l.clock);
                let playback = match (live_play, clock) {
                    (Some(l), Some(c)) => Some(as_playback_stats(l, c)),
                    _ => p.viewer.as_ref().and_then(|v| v.frozen()),
                };
                let live_stalls = p.live_viewer.as_ref().map(|v| v.frozen_stalls().to_vec());
                let (bytes_down, bytes_up) = match &p.bt_stats {
                    Some(bt) => {
                        from_seeders = bt
                            .down_from
                            .iter()
                            .filter(|(h, _)| {
                                self.shared
                                    .plans
                                    .get(**h as usize)
                                    .is_some_and(|q| q.role == Role::Seeder)
                            })
                            .map(|(_, b)| *b)
                            .sum();
                        (bt.bytes_down, bt.bytes_up)
                    }
                    None => (stats.payload_bytes_received, stats.payload_bytes_sent),
                };
                PeerResult {
                    id: i as u32,
                    group: self.shared.scenario.peers[p.plan.group]
                        .get_ref()
                        .name
                        .clone(),
                    role: p.plan.role,
                    join_s: secs(p.joined),
                    leave_s: secs(p.left),
                    complete_s: secs(p.completed),
                    startup_bytes_s: p
                        .started
                        .zip(p.joined)
                        .map(|(s, j)| s.saturating_since(j).as_secs_f64()),
                    bytes_down,
                    bytes_down_from_seeders: from_seeders,
                    bytes_down_from_peers: bytes_down - from_seeders,
                    bytes_up,
                    chunks_rejected: stats.chunks_rejected,
                    playback,
                    stalls: live_stalls.unwrap_or_else(|| {
                        p.viewer
                            .as_ref()
                            .and_then(|v| v.frozen_stall_log())
                            .map(|log| log.spans().to_vec())
                            .unwrap_or_default()
                    }),
                    messages_sent: p.sent,
                    datagrams_dropped: p.dropped.clone(),
                    live,
                    bittorrent: p.bt_stats.clone(),
                }
            })
            .collect()
    }

    /// Peer `p`'s part in the live stream, if any.
    fn live_peer(&self, p: &Peer) -> Option<LivePeer> {
        if let Some(s) = &p.live_source {
            return Some(LivePeer {
                made: s.made(),
                playback: None,
            });
        }
        p.live_viewer.as_ref().map(|v| LivePeer {
            made: 0,
            playback: v.frozen().cloned(),
        })
    }
}
