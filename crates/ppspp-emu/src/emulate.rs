//! A scenario run in real time: one real node per peer (`ppspp_udp`'s
//! driver, its own UDP socket on its own loopback address), started and
//! stopped on the wall clock as the scenario's plan says, its datagrams
//! shaped by the scenario's network model ([`crate::shaper`]).
//!
//! The plan (arrivals, departures, links), the tracker, each group's
//! protocol settings, the content and the pickers are the simulator's own
//! (`ppspp_lab::sim`), so a scenario means the same thing in both. What
//! differs is only what a real OS adds: time is the wall clock's, and the
//! kernel, the sockets and the runtime's scheduling are real.
//!
//! Not carried over from the simulator: viewers' seeks and a group's
//! wire-clock offset ([`crate::refuse`] refuses scenarios with them).
//! [`crate::results`] writes the run's results folder.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use ppspp_core::play::StallSpan;
use ppspp_core::proto::SwarmHandle;
use ppspp_core::time::Instant;
use ppspp_core::ChunkIndex;
use ppspp_lab::content::SyntheticContent;
use ppspp_lab::live::metrics::LivePeer;
use ppspp_lab::live::LiveStream;
use ppspp_lab::packet::HostId;
use ppspp_lab::rng::{derive, rng, Stream};
use ppspp_lab::scenario::{Role, Scenario};
use ppspp_lab::sim::names::{Layout, Traced};
use ppspp_lab::sim::partition::{
    endpoint_config, live_peer, peer_rate_samples, player_config, vod_swarm_setup,
};
use ppspp_lab::sim::plan::{self, Leave, PeerPlan};
use ppspp_lab::sim::tracker::{asks_again, Tracker};
use ppspp_lab::sim::{media, BuildError, ProgressSample, RateSample, Startup};
use ppspp_udp::{NodeConfig, NodeHandle, Report};
use rand::rngs::Xoshiro256PlusPlus;
use tokio::sync::{watch, Notify};

use crate::cpu::cpu_seconds;
use crate::live::LiveShared;
use crate::refuse::{check, Refusal};
use crate::shaper::{ShaperHandle, Stopped};

/// Where host `h` binds: its own loopback address, 127.1.0.1 onwards
/// (leaving 127.0.0.0/16 to the machine), on a port the kernel picks, so
/// that emulations side by side (tests, users) never collide.
pub fn bind_addr(h: HostId) -> SocketAddr {
    let n = h.0 + 1;
    let ip = Ipv4Addr::new(127, 1 + (n >> 16) as u8, (n >> 8) as u8, n as u8);
    SocketAddr::V4(SocketAddrV4::new(ip, 0))
}

/// Why an emulation could not run.
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// The scenario asks for what cannot run in real time.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The content or the live stream could not be set up (a chunk size
    /// the core does not take, an unknown hash function, ...).
    #[error(transparent)]
    Media(#[from] BuildError),
}

/// One peer's life in an emulation.
#[derive(Clone, Debug)]
pub struct EmuPeer {
    /// Its host id (index in the plan).
    pub host: u32,
    /// Its peer group's name.
    pub group: String,
    /// Seeder, leecher or host.
    pub role: Role,
    /// Seconds from the start when it joined.
    pub join_s: Option<f64>,
    /// Seconds from the start when it left (before the end).
    pub leave_s: Option<f64>,
    /// Seconds from the start when it held every chunk (leechers).
    pub complete_s: Option<f64>,
    /// Seconds from joining until it held `record.startup_bytes` in order
    /// from the start (leechers; as the simulator counts it).
    pub startup_bytes_s: Option<f64>,
    /// Why its node could not start, if it could not.
    pub failed: Option<String>,
    /// Its swarm's figures when it left or the run ended. Its node's
    /// clock is the run's: times in it count from the run's start.
    pub report: Option<Report>,
    /// Its part in the live stream, when the scenario streams live.
    pub live: Option<LivePeer>,
    /// A live viewer's stalls.
    pub live_stalls: Vec<StallSpan>,
}

/// What an emulation produced.
pub struct Outcome {
    /// The scenario run.
    pub scenario: Scenario,
    /// The seed used.
    pub seed: u64,
    /// Its plan, by host id.
    pub plans: Vec<PeerPlan>,
    /// The live stream, when the scenario streams live.
    pub live: Option<LiveStream>,
    /// Every peer, by host id.
    pub peers: Vec<EmuPeer>,
    /// Each host's address, if its node came up.
    pub addrs: Vec<Option<SocketAddr>>,
    /// The traced flows (`record.waits`).
    pub traced: Vec<Traced>,
    /// Swarm progress, every `record.interval`.
    pub progress: Vec<ProgressSample>,
    /// Bytes per peer of the groups `record.rates` names, every
    /// `record.interval`.
    pub rates: Vec<RateSample>,
    /// The model and the shaper's figures.
    pub shaper: Stopped,
    /// Wall seconds the run took.
    pub wall_s: f64,
    /// CPU seconds the process used meanwhile, where it can be read.
    pub cpu_s: Option<f64>,
}

/// A host's part in the swarm's progress, as the sampler reads it.
#[derive(Default)]
struct Presence {
    /// 0: not yet joined; 1: in the swarm; 2: gone.
    state: AtomicU8,
    /// Chunks verified so far (all of them once it completed).
    have: AtomicU64,
    /// A live peer's part, once its node is up: it holds the progress.
    live: OnceLock<Arc<LiveShared>>,
}

impl Presence {
    /// Chunks it holds and whether it is done: a live viewer when it
    /// played the stream to its end, others when they hold all `chunks`.
    fn progress(&self, chunks: u64) -> (u64, bool) {
        match self.live.get() {
            Some(l) => (
                l.have.load(Ordering::Acquire),
                l.ended.load(Ordering::Acquire),
            ),
            None => {
                let have = self.have.load(Ordering::Acquire);
                (have, chunks > 0 && have >= chunks)
            }
        }
    }
}

const JOINED: u8 = 1;
const GONE: u8 = 2;

/// What every peer's task shares.
struct Ctx {
    scenario: Scenario,
    seed: u64,
    plans: Vec<PeerPlan>,
    content: Option<SyntheticContent>,
    live: Option<LiveStream>,
    /// The wall clock (µs since the Unix epoch) at the run's start: every
    /// node's clock zero.
    epoch_us: u64,
    tracker: Mutex<Tracker>,
    /// Each host's bound address, once its node is up: the tracker names
    /// only peers it has heard from, as a real one does.
    addrs: Mutex<Vec<Option<SocketAddr>>>,
    shaper: ShaperHandle,
    epoch: std::time::Instant,
    end: watch::Receiver<bool>,
    /// Each host's presence and progress, by host id.
    presence: Vec<Presence>,
    /// `record.startup_bytes`, if the scenario asks for it.
    startup: Option<Startup>,
    /// Leechers neither complete nor gone.
    unfinished: AtomicUsize,
    finished: Notify,
}

impl Ctx {
    fn now(&self) -> Instant {
        Instant::from_micros(u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX))
    }

    fn secs(&self) -> f64 {
        self.epoch.elapsed().as_secs_f64()
    }

    fn at(&self, d: Duration) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.epoch + d)
    }

    /// Swarm progress now ([`ProgressSample`], as the simulator samples
    /// it).
    fn sample(&self, chunks: u64) -> ProgressSample {
        let (mut present, mut leechers, mut completed, mut have) = (0, 0, 0, 0);
        for (p, plan) in self.presence.iter().zip(&self.plans) {
            let leecher = plan.role == Role::Leecher;
            let (held, done) = p.progress(chunks);
            // A leecher that left keeps the count it had: complete or not.
            completed += u32::from(leecher && done);
            if p.state.load(Ordering::Acquire) != JOINED {
                continue;
            }
            present += 1;
            if leecher {
                leechers += 1;
                have += held;
            }
        }
        ProgressSample {
            t: self.secs(),
            present,
            leechers,
            completed,
            mean_progress: if leechers > 0 {
                have as f64 / (chunks.max(1) as f64 * f64::from(leechers))
            } else {
                0.0
            },
        }
    }

    /// The `record.rates` rows now, as the simulator samples them.
    fn rates(&self) -> Vec<RateSample> {
        let t = self.secs();
        peer_rate_samples(&self.scenario, &self.plans, t, |h| {
            self.shaper.delivered_from(h)
        })
    }

    fn leecher_done(&self) {
        if self.unfinished.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.finished.notify_one();
        }
    }
}

/// Runs `scenario` with `seed` in real time on the current (multi-threaded)
/// tokio runtime, until its duration ends or, with `stop_when_done`, every
/// leecher has completed or left.
pub async fn run(scenario: Scenario, seed: u64) -> Result<Outcome, EmuError> {
    check(&scenario)?;
    let (mut net, plans) = plan::build(&scenario, seed);
    let (content, live) = media(&scenario, &plans, seed)?;
    let records = Layout {
        scenario: &scenario,
        plans: &plans,
        net: &net,
    }
    .records();
    records.apply(&mut net);
    let leechers = plans.iter().filter(|p| p.role == Role::Leecher).count();
    // Progress counts chunks of the content, or of a live stream's window.
    let chunks = match (&content, &live) {
        (Some(c), _) => c.chunk_count(),
        (None, Some(l)) => l.window_chunks,
        (None, None) => 0,
    };
    let cpu0 = cpu_seconds();
    let epoch = std::time::Instant::now();
    let epoch_us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .saturating_sub(epoch.elapsed());
    let epoch_us = u64::try_from(epoch_us.as_micros()).unwrap_or(0);
    let (end_tx, end_rx) = watch::channel(false);
    let ctx = Arc::new(Ctx {
        tracker: Mutex::new(Tracker::new(&plans, scenario.swarm.tracker_notice.0)),
        addrs: Mutex::new(vec![None; plans.len()]),
        presence: plans.iter().map(|_| Presence::default()).collect(),
        startup: Startup::of(&scenario, chunks),
        scenario,
        seed,
        plans,
        content,
        live,
        epoch_us,
        shaper: ShaperHandle::start_at(net, epoch),
        epoch,
        end: end_rx,
        unfinished: AtomicUsize::new(leechers),
        finished: Notify::new(),
    });
    let tasks: Vec<_> = (0..ctx.plans.len() as u32)
        .map(|i| tokio::spawn(peer_life(ctx.clone(), i)))
        .collect();
    let duration = ctx.at(ctx.scenario.duration.0);
    let stop_when_done = ctx.scenario.stop_when_done && leechers > 0;
    let every = ctx.scenario.record.interval.0.max(Duration::from_millis(1));
    let mut sampling = tokio::time::interval_at(ctx.at(Duration::ZERO), every);
    sampling.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (mut progress, mut rates) = (Vec::new(), Vec::new());
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(duration) => break,
            () = ctx.finished.notified(), if stop_when_done => break,
            _ = sampling.tick() => {
                progress.push(ctx.sample(chunks));
                rates.extend(ctx.rates());
            }
        }
    }
    progress.push(ctx.sample(chunks));
    rates.extend(ctx.rates());
    let _ = end_tx.send(true);
    let mut peers = Vec::with_capacity(tasks.len());
    let mut running = Vec::new();
    for t in tasks {
        let (peer, node) = t.await.expect("a peer's task does not panic");
        peers.push(peer);
        running.extend(node);
    }
    let wall_s = ctx.secs();
    let cpu_s = cpu0.zip(cpu_seconds()).map(|(a, b)| b - a);
    // Every node still in the swarm stops together, all still attached to
    // the model, so none of their last datagrams meets a peer gone from it.
    for node in &running {
        let _ = node.shutdown().await;
    }
    let ctx = Arc::into_inner(ctx).expect("every peer's task has ended");
    Ok(Outcome {
        scenario: ctx.scenario,
        seed,
        plans: ctx.plans,
        live: ctx.live,
        peers,
        addrs: ctx.addrs.into_inner().expect("not poisoned"),
        traced: records.traced,
        progress,
        rates,
        shaper: ctx.shaper.stop().await,
        wall_s,
        cpu_s,
    })
}

/// Waits until `end` says the run is over.
async fn ended(end: &mut watch::Receiver<bool>) {
    let _ = end.wait_for(|e| *e).await;
}

/// A peer's life; at the end of the run, its node, still running.
async fn peer_life(ctx: Arc<Ctx>, i: u32) -> (EmuPeer, Option<NodeHandle>) {
    let plan = ctx.plans[i as usize].clone();
    let spec = ctx.scenario.peers[plan.group].get_ref().clone();
    let mut out = EmuPeer {
        host: i,
        group: spec.name.clone(),
        role: plan.role,
        join_s: None,
        leave_s: None,
        complete_s: None,
        startup_bytes_s: None,
        failed: None,
        report: None,
        live: None,
        live_stalls: Vec::new(),
    };
    let mut end = ctx.end.clone();
    tokio::select! {
        () = tokio::time::sleep_until(ctx.at(plan.arrival)) => {}
        () = ended(&mut end) => return (out, None),
    }
    out.join_s = Some(ctx.secs());
    let presence = &ctx.presence[i as usize];
    presence.state.store(JOINED, Ordering::Release);
    let swarmed = ctx.content.is_some() || ctx.live.is_some();
    if plan.role == Role::Host || !swarmed {
        // A host runs no node: it stands for a cross-traffic end.
        ended(&mut end).await;
        presence.state.store(GONE, Ordering::Release);
        return (out, None);
    }
    // The simulator's stream for this peer's tracker answers.
    let mut tracker_rng = rng(ctx.seed, Stream::Tracker, u64::from(i));
    let (node, swarm, live) = match start_node(&ctx, i, &plan, &spec, &mut tracker_rng).await {
        Ok(x) => x,
        Err(e) => {
            out.failed = Some(e.to_string());
            presence.state.store(GONE, Ordering::Release);
            if plan.role == Role::Leecher {
                ctx.leecher_done();
            }
            return (out, None);
        }
    };
    let leecher = plan.role == Role::Leecher;
    let total = ctx
        .content
        .as_ref()
        .map_or(0, SyntheticContent::chunk_count);
    let mut verified = node.verified();
    let mut leave_at = match plan.leave {
        Leave::After(life) => Some(ctx.at(plan.arrival + life)),
        Leave::Stay | Leave::WhenDone(_) => None,
    };
    let every = ctx
        .scenario
        .swarm
        .reannounce
        .0
        .max(Duration::from_millis(100));
    let mut announce = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    let mut left = false;
    let mut announced_have = 0;
    // A live viewer is done when it played the stream to its end, an
    // on-demand leecher when it holds every chunk.
    let watching = leecher && live.is_some();
    let fetching = leecher && live.is_none();
    loop {
        let completing = out.complete_s.is_none();
        tokio::select! {
            () = ended(&mut end) => break,
            () = sleep_opt(leave_at) => { left = true; break; }
            r = verified.changed(), if fetching && completing => {
                if r.is_err() {
                    break;
                }
                let have = *verified.borrow_and_update();
                presence.have.store(have, Ordering::Release);
                if let (Some(st), None) = (&ctx.startup, out.startup_bytes_s) {
                    let run = node.have_run(swarm, ChunkIndex(0)).await.unwrap_or(0);
                    if run >= st.chunks {
                        out.startup_bytes_s = out.join_s.map(|j| ctx.secs() - j);
                    }
                }
                if have >= total {
                    leave_at = completed(&ctx, &plan, &mut out).or(leave_at);
                }
            }
            () = live_ended(live.as_deref()), if watching && completing => {
                leave_at = completed(&ctx, &plan, &mut out).or(leave_at);
            }
            _ = announce.tick(), if leecher && completing => {
                // Until it completes, by the simulator's rule.
                let Ok(r) = node.report(swarm).await else { break };
                let want = ctx.scenario.swarm.tracker_peers;
                if asks_again(r.channels, want, r.have, &mut announced_have) {
                    connect_named(&ctx, i, &node, swarm, &mut tracker_rng);
                }
            }
        }
    }
    if let Some(l) = &live {
        // The camera stops and the player's figures freeze now, before the
        // node (if it stays to the end) waits for the others to stop.
        let _ = node.detach(swarm).await;
        let (peer, stalls) = l.result();
        out.live = Some(peer);
        out.live_stalls = stalls;
    }
    out.report = node.report(swarm).await.ok();
    if !left {
        return (out, Some(node));
    }
    out.leave_s = Some(ctx.secs());
    presence.state.store(GONE, Ordering::Release);
    if leecher && out.complete_s.is_none() {
        ctx.leecher_done();
    }
    ctx.tracker
        .lock()
        .expect("not poisoned")
        .depart(i, ctx.now());
    let _ = node.shutdown().await;
    ctx.shaper.detach(HostId(i));
    (out, None)
}

/// A leecher completes now; when it is to leave, if it lingers.
fn completed(ctx: &Ctx, plan: &PeerPlan, out: &mut EmuPeer) -> Option<tokio::time::Instant> {
    out.complete_s = Some(ctx.secs());
    ctx.leecher_done();
    match plan.leave {
        Leave::WhenDone(linger) => Some(tokio::time::Instant::now() + linger),
        _ => None,
    }
}

/// Waits until the live viewer `live` has played the stream to its end.
async fn live_ended(live: Option<&LiveShared>) {
    match live {
        Some(l) if !l.ended.load(Ordering::Acquire) => l.on_end.notified().await,
        Some(_) => {}
        None => std::future::pending().await,
    }
}

async fn sleep_opt(t: Option<tokio::time::Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

/// Connects peer `i` to those the tracker names now.
fn connect_named(
    ctx: &Ctx,
    i: u32,
    node: &NodeHandle,
    swarm: SwarmHandle,
    r: &mut Xoshiro256PlusPlus,
) {
    let want = ctx.scenario.swarm.tracker_peers;
    let named = ctx
        .tracker
        .lock()
        .expect("not poisoned")
        .answer(i, ctx.now(), want, r);
    let addrs = ctx.addrs.lock().expect("not poisoned");
    for a in named.into_iter().filter_map(|j| addrs[j as usize]) {
        let _ = node.connect(swarm, a);
    }
}

/// Starts peer `i`'s node, attaches it to the shaper, adds its swarm (and
/// player, or live camera) as the simulator's join does, and connects it
/// to whom the tracker names.
async fn start_node(
    ctx: &Ctx,
    i: u32,
    plan: &PeerPlan,
    spec: &ppspp_lab::scenario::PeerGroup,
    tracker_rng: &mut Xoshiro256PlusPlus,
) -> std::io::Result<(NodeHandle, SwarmHandle, Option<Arc<LiveShared>>)> {
    let config = NodeConfig {
        listen: bind_addr(HostId(i)),
        endpoint: endpoint_config(&ctx.scenario, plan.group),
        seed: Some(derive(ctx.seed, Stream::Peer, u64::from(i))),
        clock_zero: Some(ctx.epoch),
    };
    let (port, releaser) = ctx.shaper.port();
    let (node, _events, _task) = ppspp_udp::start_shaped(config, port).await?;
    ctx.shaper.attach(HostId(i), node.local_addr(), releaser);
    ctx.addrs.lock().expect("not poisoned")[i as usize] = Some(node.local_addr());
    let mut live = None;
    let swarm = match (&ctx.content, &ctx.live) {
        (Some(content), _) => {
            let swarm = node
                .add_swarm(vod_swarm_setup(spec, plan.role, content))
                .await?;
            if let Some(p) = spec.player {
                node.watch(swarm, player_config(&p), content.tree().chunk_size(), true)?;
            }
            swarm
        }
        (None, Some(stream)) => {
            let (setup, part) = live_peer(
                &ctx.scenario,
                plan.group,
                plan.role,
                stream,
                ctx.now(),
                ctx.epoch_us,
            )
            .map_err(std::io::Error::other)?;
            let swarm = node.add_swarm(setup).await?;
            let shared = LiveShared::new(part);
            node.attach(swarm, shared.agent())?;
            let _ = ctx.presence[i as usize].live.set(shared.clone());
            live = Some(shared);
            swarm
        }
        (None, None) => return Err(std::io::Error::other("the scenario has no content")),
    };
    connect_named(ctx, i, &node, swarm, tracker_rng);
    Ok((node, swarm, live))
}
