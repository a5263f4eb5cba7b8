//! The real-UDP driver of ppspp: it runs the sans-IO [`Endpoint`] on a tokio
//! UDP socket with batched I/O, handing it datagrams and wall-clock time and
//! sending what it writes. No protocol logic lives here.
//!
//! [`start`] binds a socket and spawns the node's task; the returned
//! [`NodeHandle`] adds swarms, connects peers, reads progress and shuts the
//! node down cleanly (checkpoints written, peers told).
//!
//! The driver reports to `tracing` (see the `log` module): a `node` span per
//! node, datagrams per peer at trace level, channels and swarms at debug,
//! completion at info, failures at warn. Silent unless the program installs
//! a subscriber.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod agent;
mod lateness;
mod log;
mod shaper;
mod socket;
mod viewers;

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use ppspp_core::play::PlayerConfig;
use ppspp_core::proto::{
    Endpoint, EndpointConfig, EndpointStats, Event, LivePushError, SwarmHandle, SwarmSetup,
    SwarmStats,
};
use ppspp_core::time::Instant;
use ppspp_core::{ChunkIndex, ChunkSize};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tracing::Instrument;

use agent::Agents;
pub use agent::SwarmAgent;
pub use lateness::TimerLateness;
pub use shaper::{Held, ShaperPort};
pub use socket::BatchSocket;
pub use viewers::Playback;
use viewers::Viewers;

/// How a node is set up.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Address to bind (port 0 picks a free one).
    pub listen: SocketAddr,
    /// The protocol engine's settings.
    pub endpoint: EndpointConfig,
    /// Seed of the endpoint's random choices (channel ids, tie-breaks), for
    /// a reproducible run; `None` (what a node on a network wants) keys
    /// them from the OS's random source, so that channel ids cannot be
    /// predicted (RFC 7574 §12.1).
    pub seed: Option<u64>,
    /// The moment that is the node's clock zero ([`Instant::ZERO`]);
    /// `None`: when it starts. An emulation gives all its nodes the run's
    /// start, so that a time (a live stream's start, a stall) means the
    /// same at each of them and in the run's results.
    pub clock_zero: Option<std::time::Instant>,
}

/// A snapshot of one swarm's progress.
#[derive(Clone, Debug)]
pub struct Report {
    /// Chunks verified and stored.
    pub have: u64,
    /// Chunks in the content, once known.
    pub chunk_count: Option<u64>,
    /// Whether every chunk is there.
    pub complete: bool,
    /// The swarm's counters.
    pub stats: SwarmStats,
    /// The endpoint's counters.
    pub endpoint: EndpointStats,
    /// Channels the node has open (all its swarms'), handshaking or not.
    pub channels: usize,
    /// What the swarm's viewer sees, when it is watched
    /// ([`NodeHandle::watch`]).
    pub playback: Option<Playback>,
    /// How late the node's timers have fired (all its swarms').
    pub timers: TimerLateness,
}

enum Command {
    AddSwarm(Box<SwarmSetup>, oneshot::Sender<Option<SwarmHandle>>),
    Connect(SwarmHandle, SocketAddr),
    Report(SwarmHandle, oneshot::Sender<Option<Report>>),
    SetPlayhead(SwarmHandle, Option<ChunkIndex>),
    HaveRun(SwarmHandle, ChunkIndex, oneshot::Sender<Option<u64>>),
    Watch(SwarmHandle, PlayerConfig, ChunkSize, bool),
    Seek(SwarmHandle, ChunkIndex),
    PushLive(
        SwarmHandle,
        Vec<u8>,
        oneshot::Sender<Result<ChunkIndex, LivePushError>>,
    ),
    ReadLive(
        SwarmHandle,
        ChunkIndex,
        usize,
        oneshot::Sender<Option<LiveRead>>,
    ),
    Attach(SwarmHandle, Box<dyn SwarmAgent>),
    Detach(SwarmHandle, oneshot::Sender<usize>),
    Shutdown(oneshot::Sender<Vec<String>>),
}

/// Verified chunks of a live stream read back from the node
/// ([`NodeHandle::read_live`]).
#[derive(Clone, Debug, Default)]
pub struct LiveRead {
    /// The first chunk the node keeps (older ones left the window).
    pub floor: Option<ChunkIndex>,
    /// The newest chunk known signed: the live edge as the node sees it.
    pub edge: Option<ChunkIndex>,
    /// The first chunk of `chunks`: the one asked for, or the floor if
    /// that one has left the window.
    pub start: ChunkIndex,
    /// Consecutive verified chunks from `start` (none if `start` is not
    /// there yet).
    pub chunks: Vec<Vec<u8>>,
    /// When the source signed `start`'s munro (µs since the Unix epoch,
    /// the source's clock), if known.
    pub signed_at: Option<u64>,
    /// The first verified chunk at or after `start`: where a reader
    /// waiting for a chunk that never came could go on.
    pub next_verified: Option<ChunkIndex>,
}

/// Talks to a running node.
#[derive(Clone, Debug)]
pub struct NodeHandle {
    commands: mpsc::UnboundedSender<Command>,
    local_addr: SocketAddr,
    verified: watch::Receiver<u64>,
}

fn gone() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the node has stopped")
}

impl NodeHandle {
    /// The address the node listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Starts serving or fetching a swarm; fails if the swarm is there already.
    pub async fn add_swarm(&self, setup: SwarmSetup) -> io::Result<SwarmHandle> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::AddSwarm(Box::new(setup), tx))
            .map_err(|_| gone())?;
        rx.await
            .map_err(|_| gone())?
            .ok_or_else(|| io::Error::new(io::ErrorKind::AlreadyExists, "swarm already added"))
    }

    /// Opens a channel to `peer` in `swarm`.
    pub fn connect(&self, swarm: SwarmHandle, peer: SocketAddr) -> io::Result<()> {
        self.commands
            .send(Command::Connect(swarm, peer))
            .map_err(|_| gone())
    }

    /// The swarm's progress and counters.
    pub async fn report(&self, swarm: SwarmHandle) -> io::Result<Report> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Report(swarm, tx))
            .map_err(|_| gone())?;
        rx.await
            .map_err(|_| gone())?
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such swarm"))
    }

    /// Sets where playback of `swarm` needs chunks next (`None`: nothing
    /// plays); streaming pickers request from there first.
    pub fn set_playhead(&self, swarm: SwarmHandle, playhead: Option<ChunkIndex>) -> io::Result<()> {
        self.commands
            .send(Command::SetPlayhead(swarm, playhead))
            .map_err(|_| gone())
    }

    /// How many chunks of `swarm` from `chunk` on are verified and stored
    /// without a gap (0 when `chunk` itself is missing), counting only up
    /// to the last chunk once the chunk count is known.
    pub async fn have_run(&self, swarm: SwarmHandle, chunk: ChunkIndex) -> io::Result<u64> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::HaveRun(swarm, chunk, tx))
            .map_err(|_| gone())?;
        rx.await
            .map_err(|_| gone())?
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such swarm"))
    }

    /// A counter of chunks verified by the node (all swarms) since it
    /// started, bumped as they verify: await `changed()` on it to wait for
    /// progress without polling.
    pub fn verified(&self) -> watch::Receiver<u64> {
        self.verified.clone()
    }

    /// Runs the player model on `swarm` from now on ([`Report::playback`]):
    /// it plays the content at `config`'s bitrate once its prebuffer is
    /// there, stalls when the next chunk is missing, and tells the pickers
    /// when it waits. `steer`: its playhead steers the pickers; without
    /// it, [`NodeHandle::set_playhead`] does.
    pub fn watch(
        &self,
        swarm: SwarmHandle,
        config: PlayerConfig,
        chunk_size: ChunkSize,
        steer: bool,
    ) -> io::Result<()> {
        self.commands
            .send(Command::Watch(swarm, config, chunk_size, steer))
            .map_err(|_| gone())
    }

    /// The viewer of `swarm` jumps to `chunk` (a seek: it waits for a
    /// prebuffer there, which is not a stall).
    pub fn seek(&self, swarm: SwarmHandle, chunk: ChunkIndex) -> io::Result<()> {
        self.commands
            .send(Command::Seek(swarm, chunk))
            .map_err(|_| gone())
    }

    /// Hands the next chunk of the live stream `swarm` injects to the node,
    /// which signs it (at this machine's wall-clock time) when it
    /// completes a munro; returns its index.
    pub async fn push_live(&self, swarm: SwarmHandle, data: Vec<u8>) -> io::Result<ChunkIndex> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::PushLive(swarm, data, tx))
            .map_err(|_| gone())?;
        rx.await
            .map_err(|_| gone())?
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
    }

    /// Up to `max` consecutive verified chunks of the live stream `swarm`
    /// from `from` (from the floor, if `from` left the window).
    pub async fn read_live(
        &self,
        swarm: SwarmHandle,
        from: ChunkIndex,
        max: usize,
    ) -> io::Result<LiveRead> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::ReadLive(swarm, from, max, tx))
            .map_err(|_| gone())?;
        rx.await
            .map_err(|_| gone())?
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no such swarm"))
    }

    /// Runs `agent` beside `swarm` inside the node from now on (see
    /// [`SwarmAgent`]): after every input, and at the deadlines it asks
    /// for, until it is detached or the node shuts down.
    pub fn attach(&self, swarm: SwarmHandle, agent: Box<dyn SwarmAgent>) -> io::Result<()> {
        self.commands
            .send(Command::Attach(swarm, agent))
            .map_err(|_| gone())
    }

    /// Detaches the agents of `swarm`, each after its last look
    /// ([`SwarmAgent::leave`]); returns how many there were.
    pub async fn detach(&self, swarm: SwarmHandle) -> io::Result<usize> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Detach(swarm, tx))
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())
    }

    /// Closes every channel (telling peers), writes every checkpoint and
    /// stops the node. Returns once the checkpoints are on disk; one that
    /// could not be written (this last one, or an earlier one not reported
    /// yet) is an error of kind `Other` whose message says why, so that a
    /// download never ends as if its progress were recorded when it is not.
    pub async fn shutdown(&self) -> io::Result<()> {
        let (tx, rx) = oneshot::channel();
        self.commands
            .send(Command::Shutdown(tx))
            .map_err(|_| gone())?;
        let failures = rx.await.map_err(|_| gone())?;
        if failures.is_empty() {
            Ok(())
        } else {
            Err(io::Error::other(failures.join("; ")))
        }
    }
}

/// Binds the socket and spawns the node. Events come out of the returned
/// receiver; the join handle ends with the node (an error only for socket
/// failures).
pub async fn start(
    config: NodeConfig,
) -> io::Result<(
    NodeHandle,
    mpsc::UnboundedReceiver<Event>,
    JoinHandle<io::Result<()>>,
)> {
    spawn(config, None).await
}

/// As [`start`], for a node whose datagrams pass through an emulation's
/// shaper on their way in and out (see [`ShaperPort`]).
pub async fn start_shaped(
    config: NodeConfig,
    shaper: ShaperPort,
) -> io::Result<(
    NodeHandle,
    mpsc::UnboundedReceiver<Event>,
    JoinHandle<io::Result<()>>,
)> {
    spawn(config, Some(shaper)).await
}

async fn spawn(
    config: NodeConfig,
    shaper: Option<ShaperPort>,
) -> io::Result<(
    NodeHandle,
    mpsc::UnboundedReceiver<Event>,
    JoinHandle<io::Result<()>>,
)> {
    let socket = BatchSocket::bind(config.listen).await?;
    let local_addr = socket.local_addr()?;
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let (verified_tx, verified_rx) = watch::channel(0);
    let clock = Clock(config.clock_zero.unwrap_or_else(std::time::Instant::now));
    let mut endpoint_config = config.endpoint;
    endpoint_config.wall_clock_offset = clock.wall_clock_offset();
    let mut endpoint = match config.seed {
        Some(seed) => Endpoint::new(endpoint_config, seed),
        None => {
            let mut key = [0u8; 32];
            getrandom::fill(&mut key).map_err(io::Error::other)?;
            Endpoint::with_key(endpoint_config, key)
        }
    };
    for own in own_addresses(local_addr) {
        endpoint.add_own_address(own);
    }
    let task = tokio::spawn(
        run(socket, endpoint, clock, cmd_rx, ev_tx, verified_tx, shaper)
            .instrument(log::node_span(local_addr)),
    );
    Ok((
        NodeHandle {
            commands: cmd_tx,
            local_addr,
            verified: verified_rx,
        },
        ev_rx,
        task,
    ))
}

/// The addresses at which a socket bound to `local` surely receives: itself,
/// and for a wildcard bind the loopback address of its family. Others (the
/// machine's interface addresses, a NAT's outside) the endpoint finds out
/// when its handshake comes back to it.
fn own_addresses(local: SocketAddr) -> Vec<SocketAddr> {
    let mut own = vec![local];
    if local.ip().is_unspecified() {
        let loopback: std::net::IpAddr = match local {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        };
        own.push(SocketAddr::new(loopback, local.port()));
    }
    own
}

/// Wall-clock time as the core's [`Instant`]: microseconds since the node
/// started (monotonic, so a clock step does not disturb the protocol).
struct Clock(std::time::Instant);

impl Clock {
    /// Microseconds from the Unix epoch to this clock's zero, for DATA
    /// timestamps ([`EndpointConfig::wall_clock_offset`]). Read once: the
    /// wire clock then runs at the monotonic clock's pace.
    fn wall_clock_offset(&self) -> u64 {
        let since_epoch = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let since_zero = self.0.elapsed();
        u64::try_from(since_epoch.saturating_sub(since_zero).as_micros()).unwrap_or(0)
    }

    fn now(&self) -> Instant {
        Instant::from_micros(self.0.elapsed().as_micros() as u64)
    }

    fn at(&self, t: Instant) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.0 + Duration::from_micros(t.as_micros()))
    }
}

/// Datagrams sent per turn of the loop before it looks at the socket again.
const SEND_BUDGET: usize = 512;

async fn run(
    mut socket: BatchSocket,
    mut ep: Endpoint,
    clock: Clock,
    mut commands: mpsc::UnboundedReceiver<Command>,
    events: mpsc::UnboundedSender<Event>,
    verified: watch::Sender<u64>,
    mut shaper: Option<ShaperPort>,
) -> io::Result<()> {
    let mut shutdown: Option<(oneshot::Sender<Vec<String>>, Instant, Vec<String>)> = None;
    let mut viewers = Viewers::default();
    let mut agents = Agents::default();
    let mut timers = TimerLateness::default();
    let local = socket.local_addr()?;
    // A shaped node writes each datagram here before handing it over.
    let mut held_buf = match shaper {
        Some(_) => vec![0u8; socket::MAX_DATAGRAM],
        None => Vec::new(),
    };
    loop {
        let now = clock.now();
        socket
            .recv_ready(|from, d| {
                log::received(from, d.len());
                ep.handle_datagram(now, from, d);
            })
            .inspect_err(|e| tracing::warn!(error = %e, "receiving failed: the node stops"))?;
        // Agents act on what came (a player) or make what is due (a
        // camera) before the endpoint's timers and sending, as the
        // simulator runs them.
        let agent_due = agents.update(now, &mut ep);
        if ep.poll_timeout(now).is_some_and(|t| t <= now) {
            ep.handle_timeout(now);
        }
        let mut sent = 0;
        while sent < SEND_BUDGET {
            if let Some(port) = &shaper {
                let Some(t) = ep.poll_transmit(now, &mut held_buf) else {
                    break;
                };
                log::sent(t.destination, t.len);
                port.hold(local, t.destination, &held_buf[..t.len]);
            } else {
                let slot = socket.next_slot();
                let Some(t) = ep.poll_transmit(now, slot) else {
                    break;
                };
                log::sent(t.destination, t.len);
                socket.push(t.destination, t.len).await?;
            }
            sent += 1;
        }
        socket.flush().await?;
        while let Some(e) = ep.poll_event() {
            log::event(&e);
            let _ = events.send(e);
        }
        let player_due = viewers.update(now, &mut ep);
        // Wakes whoever waits for chunks (the HTTP gateway) only when some
        // verified, so they never poll.
        let count = verified_count(&ep);
        verified.send_if_modified(|v| std::mem::replace(v, count) != count);
        if let Some((done, deadline, mut failures)) = shutdown.take() {
            // Closing handshakes went out above; give them a moment, then
            // wait for the last checkpoints (blocking this task: nothing
            // else is left to do) and stop.
            if now >= deadline || ep.channel_count() == 0 {
                for h in ep.swarm_handles() {
                    if let Err(e) = ep.wait_checkpoint(h) {
                        tracing::warn!(swarm = ?h, error = %e, "checkpoint failed");
                        failures.push(e.to_string());
                    }
                }
                tracing::debug!("node stopped");
                let _ = done.send(failures);
                return Ok(());
            }
            shutdown = Some((done, deadline, failures));
        }
        if sent == SEND_BUDGET {
            tokio::task::yield_now().await;
            continue;
        }
        let wake = [ep.poll_timeout(now), player_due, agent_due]
            .into_iter()
            .flatten()
            .min()
            .map(|t| clock.at(t));
        let sleep = async {
            match wake {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = socket.readable() => r?,
            () = sleep => {
                if let Some(t) = wake {
                    timers.record(tokio::time::Instant::now().saturating_duration_since(t));
                }
            }
            held = shaper::next_release(&mut shaper) => match held {
                None => {
                    tracing::debug!("the shaper has gone: the node stops");
                    return Ok(());
                }
                Some(h) => release(&mut socket, &mut shaper, h).await?,
            },
            cmd = commands.recv() => match cmd {
                None => return Ok(()),
                Some(cmd) => {
                    let now = clock.now();
                    if let Some(done) = apply(&mut ep, &mut viewers, &mut agents, &timers, now, cmd) {
                        agents.detach_all(now, &mut ep);
                        let mut failures = Vec::new();
                        tracing::debug!("shutting down: closing every channel");
                        for h in ep.swarm_handles() {
                            ep.close_swarm(h);
                            if let Err(e) = ep.checkpoint(now, h) {
                                tracing::warn!(swarm = ?h, error = %e, "checkpoint failed");
                                failures.push(e.to_string());
                            }
                        }
                        shutdown = Some((done, now + Duration::from_millis(200), failures));
                    }
                }
            },
        }
    }
}

/// Sends a datagram the shaper gave back, and every other one it has
/// ready.
async fn release(
    socket: &mut BatchSocket,
    shaper: &mut Option<ShaperPort>,
    first: Held,
) -> io::Result<()> {
    let mut next = Some(first);
    while let Some(h) = next {
        let len = h.bytes.len().min(socket::MAX_DATAGRAM);
        socket.next_slot()[..len].copy_from_slice(&h.bytes[..len]);
        socket.push(h.peer, len).await?;
        next = shaper.as_mut().and_then(|p| p.release.try_recv().ok());
    }
    socket.flush().await
}

/// Chunks verified since the node started, over every swarm.
fn verified_count(ep: &Endpoint) -> u64 {
    ep.swarm_handles()
        .map(|h| ep.verified_log(h).len() as u64)
        .sum()
}

/// The wall clock in µs since the Unix epoch: a live munro's signing time.
fn unix_micros_now() -> u64 {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_micros()).unwrap_or(u64::MAX)
}

/// Up to `max` consecutive verified chunks of a live stream from `from`,
/// moved up to the floor.
fn read_live(
    ep: &mut Endpoint,
    swarm: SwarmHandle,
    from: ChunkIndex,
    max: usize,
) -> Option<LiveRead> {
    let cs = ep.chunk_size(swarm)?.bytes_usize();
    let floor = ep.live_floor(swarm);
    let start = floor.map_or(from, |f| from.max(f));
    let mut chunks = Vec::new();
    let mut buf = vec![0u8; cs];
    for i in 0..max as u64 {
        let Some(n) = ep.read_chunk(swarm, ChunkIndex(start.0 + i), &mut buf) else {
            break;
        };
        chunks.push(buf[..n].to_vec());
    }
    Some(LiveRead {
        floor,
        edge: ep.live_edge(swarm),
        start,
        signed_at: ep.live_signed_at(swarm, start),
        next_verified: ep.have(swarm).and_then(|h| h.first_filled_from(start)),
        chunks,
    })
}

/// Verified chunks from `chunk` on without a gap, within the content.
fn have_run(ep: &Endpoint, swarm: SwarmHandle, chunk: ChunkIndex) -> Option<u64> {
    let have = ep.have(swarm)?;
    let (_, count) = ep.progress(swarm)?;
    let end = match have.first_empty_from(chunk) {
        Some(e) => e.0,
        None => u64::MAX,
    };
    let end = count.map_or(end, |n| end.min(n));
    Some(end.saturating_sub(chunk.0))
}

/// The swarm a command is about, if one.
fn command_swarm(cmd: &Command) -> Option<SwarmHandle> {
    match cmd {
        Command::Connect(h, _)
        | Command::Report(h, _)
        | Command::SetPlayhead(h, _)
        | Command::HaveRun(h, _, _)
        | Command::Watch(h, ..)
        | Command::Seek(h, _)
        | Command::PushLive(h, ..)
        | Command::ReadLive(h, ..)
        | Command::Attach(h, _)
        | Command::Detach(h, _) => Some(*h),
        Command::AddSwarm(..) | Command::Shutdown(_) => None,
    }
}

/// Applies a command; returns the shutdown acknowledgement to send once the
/// node has stopped.
fn apply(
    ep: &mut Endpoint,
    viewers: &mut Viewers,
    agents: &mut Agents,
    timers: &TimerLateness,
    now: Instant,
    cmd: Command,
) -> Option<oneshot::Sender<Vec<String>>> {
    let _span = command_swarm(&cmd).map(|h| log::swarm_span(h).entered());
    match cmd {
        Command::AddSwarm(setup, reply) => {
            let root = setup.root;
            let handle = ep.add_swarm(now, *setup);
            match handle {
                Some(h) => tracing::debug!(swarm = ?h, id = %root.to_hex(), "swarm added"),
                None => tracing::debug!(id = %root.to_hex(), "swarm not added: already there"),
            }
            let _ = reply.send(handle);
        }
        Command::Connect(swarm, peer) => {
            tracing::debug!(%peer, "connecting");
            ep.connect(now, swarm, peer);
        }
        Command::Report(swarm, reply) => {
            let report = ep.swarm_stats(swarm).map(|stats| {
                let (have, chunk_count) = ep.progress(swarm).unwrap_or((0, None));
                Report {
                    have,
                    chunk_count,
                    complete: ep.is_complete(swarm),
                    stats,
                    endpoint: ep.stats().clone(),
                    channels: ep.channel_count(),
                    playback: viewers.playback(now, ep, swarm),
                    timers: timers.clone(),
                }
            });
            let _ = reply.send(report);
        }
        Command::SetPlayhead(swarm, playhead) => ep.set_playhead(swarm, playhead),
        Command::HaveRun(swarm, chunk, reply) => {
            let _ = reply.send(have_run(ep, swarm, chunk));
        }
        Command::Watch(swarm, config, chunk_size, steer) => {
            viewers.watch(now, ep, swarm, config, chunk_size, steer);
        }
        Command::Seek(swarm, chunk) => viewers.seek(now, ep, swarm, chunk),
        Command::PushLive(swarm, data, reply) => {
            let _ = reply.send(ep.push_live_chunk(now, swarm, &data, unix_micros_now()));
        }
        Command::ReadLive(swarm, from, max, reply) => {
            let _ = reply.send(read_live(ep, swarm, from, max));
        }
        Command::Attach(swarm, agent) => agents.attach(now, ep, swarm, agent),
        Command::Detach(swarm, reply) => {
            let _ = reply.send(agents.detach(now, ep, swarm));
        }
        Command::Shutdown(done) => return Some(done),
    }
    None
}
