//! `ppspp stream URL|SWARM-ID`: download a swarm like `get` and serve it
//! over HTTP to a media player while it downloads, fetching first what the
//! player asks for. A live swarm's URL (`live.rs`) is watched live instead.

mod conns;
mod gateway;
mod http;
mod live;
mod server;
mod stall;
mod stats;
mod storage;
mod until_done;

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use ppspp_core::cc::CongestionControl;
use ppspp_core::pick::{MediaRate, PickerKind, VodWindows};
use ppspp_core::play::{Bitrate, PlayerConfig};
use ppspp_core::proto::{Event, SwarmSetup};
use ppspp_core::ChunkIndex;
use ppspp_store::SwarmMeta;
use tokio::net::TcpListener;

use super::args;
use super::contacts::Contacts;
use super::live_url::LiveUrl;
use super::node::{node_config, peers_of, runtime, set_connect_timeout, CONNECT_TIMEOUT};
use super::output::{self, Opened};
use super::url::SwarmUrl;
use gateway::Gateway;
use storage::SharedStorage;

/// Media players `--player` can start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Player {
    /// mpv
    Mpv,
    /// VLC
    Vlc,
    /// ffplay (from FFmpeg)
    Ffplay,
}

impl Player {
    pub(crate) fn program(self) -> &'static str {
        match self {
            Player::Mpv => "mpv",
            Player::Vlc => "vlc",
            Player::Ffplay => "ffplay",
        }
    }
}

/// Arguments of `ppspp stream`.
#[derive(Debug, Args)]
pub struct StreamArgs {
    /// A swarm URL (ppspp://HOST:PORT/<root>?cs=…&hf=…&cl=…), a bare swarm
    /// id, or a live swarm's URL (ppspp://HOST:PORT/<key>?live=1&…, or
    /// libswift's tswift://HOST:PORT/<key>).
    pub target: String,
    /// A peer to download from (repeatable); peers found through PEX are used too.
    #[arg(long = "peer")]
    pub peers: Vec<SocketAddr>,
    /// Address to serve HTTP on; the content is at http://ADDR/<swarm-id>.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub http: SocketAddr,
    /// Start this player on the HTTP URL; exit when it exits.
    #[arg(long, value_enum)]
    pub player: Option<Player>,
    /// Download scheduling: buffer-vod (ours: Libswift's swift-vod while
    /// the buffer is healthy, every peer on urgent data when it runs low,
    /// a seeder always asked for it), swift-vod (Libswift's: urgent data
    /// from fast peers), std-vod and linear fetch from the playback
    /// position.
    #[arg(long, default_value_t = PickerKind::DEFAULT_VOD)]
    pub algorithm: PickerKind,
    /// Congestion control of the DATA this node sends: ledbat (RFC 6817,
    /// yields to other traffic) or fixed (a constant window, for
    /// comparisons).
    #[arg(long, default_value = "ledbat")]
    pub congestion: CongestionControl,
    /// The media bitrate: sizes std-vod's windows and the buffer in seconds.
    #[arg(long, default_value = "1Mbit/s", value_parser = args::rate)]
    pub bitrate: u64,
    /// Live streams: seconds behind the live edge a player starts (a
    /// buffer against the network's hiccups; the lag it keeps).
    #[arg(long, default_value = "3", value_parser = args::seconds)]
    pub live_delay: Duration,
    /// Seconds of media in std-vod's and swift-vod's high-priority set,
    /// fetched in order from the playback position.
    #[arg(long, default_value = "10", value_parser = args::seconds)]
    pub high_window: Duration,
    /// Where to keep the content (a checkpoint goes beside it, PATH.ppspp);
    /// default: the user's cache directory, named by the swarm id.
    #[arg(long, short)]
    pub output: Option<PathBuf>,
    /// Address to listen on (UDP); other peers fetch from us meanwhile.
    #[arg(long, default_value = "0.0.0.0:0")]
    pub listen: SocketAddr,
    /// Upload limit, e.g. 2MB/s or 8Mbit/s.
    #[arg(long, value_parser = args::rate)]
    pub upload_limit: Option<u64>,
    /// Download limit, e.g. 2MB/s or 8Mbit/s.
    #[arg(long, value_parser = args::rate)]
    pub download_limit: Option<u64>,
    #[command(flatten)]
    pub uploads: crate::cmd::uploads::UploadPolicy,
    /// Seconds to wait for a peer to answer the handshake (five tries; a
    /// peer that refuses is tried again meanwhile); when every peer fails
    /// to and the content is not complete, the command fails.
    #[arg(long, default_value = CONNECT_TIMEOUT, value_parser = args::seconds)]
    pub connect_timeout: Duration,
    /// Connect only to the peers given (URL and --peer), not to peers
    /// learned through PEX: a fixed chain or tree of viewers.
    #[arg(long)]
    pub no_pex: bool,
    /// Write over an existing -o file that is not a download of this swarm
    /// (one without its checkpoint PATH.ppspp beside it).
    #[arg(long)]
    pub force: bool,
    /// HTTP connections served at once. At the cap a new client takes the
    /// place of one that has sent no request or read nothing for 2 s, or
    /// else is answered 503 with Retry-After; players being served keep
    /// their connections.
    #[arg(long, default_value = "256", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Seconds an HTTP client has to send a whole request head, on a new
    /// connection and between requests on a kept-alive one.
    #[arg(long, default_value = "20", value_parser = args::seconds)]
    pub http_header_timeout: Duration,
    /// Seconds a response may wait for the HTTP client to take a byte
    /// before the connection is closed (a response waiting for the
    /// download is not waiting for the client). Long, so that a paused
    /// player keeps its connection: at the cap, a client that takes
    /// nothing gives way to a newcomer after 2 s anyway.
    #[arg(long, default_value = "600", value_parser = args::seconds)]
    pub http_send_timeout: Duration,
}

/// `$XDG_CACHE_HOME/ppspp/<id>` (or `~/.cache/ppspp/<id>`, or the temp
/// directory): the same swarm resumes from the same place next time.
fn default_output(id: &str) -> Result<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("ppspp");
    std::fs::create_dir_all(&base).with_context(|| format!("cannot create {}", base.display()))?;
    Ok(base.join(id))
}

/// Downloads and serves the swarm over HTTP until interrupted or until the
/// player exits.
pub fn run(args: &StreamArgs) -> Result<()> {
    if LiveUrl::is_live(&args.target) {
        let url = LiveUrl::parse(&args.target).map_err(|e| anyhow!(e))?;
        let mut peers: Vec<SocketAddr> = url
            .peer
            .into_iter()
            .chain(args.peers.iter().copied())
            .collect();
        peers.dedup();
        if peers.is_empty() {
            bail!("no peer to receive from: give a URL with an address or --peer ADDR");
        }
        return live::run(args, &url, peers);
    }
    let url = SwarmUrl::parse(&args.target).map_err(|e| anyhow!(e))?;
    let peers = peers_of(&url, &args.peers)?;
    // The rate parser gives bytes per second; media bitrates are bits.
    let bitrate = Bitrate(args.bitrate.saturating_mul(8));
    let rate = MediaRate {
        chunk_size: url.chunk_size,
        bitrate,
    };
    let windows = VodWindows {
        high: args.high_window,
        ..VodWindows::default()
    };
    let picker = args.algorithm.build(rate, windows);
    let id = url.root.to_hex();
    let output = match &args.output {
        Some(p) => p.clone(),
        None => default_output(&id)?,
    };
    let mut meta = SwarmMeta::new(url.hash, url.root, url.chunk_size);
    if let Some(cl) = url.content_len {
        meta = meta.with_content_len(cl);
    }
    let out = output.display();
    let opened = output::open(&output, &meta, args.force)?;
    if let Some(status) = opened.status() {
        eprintln!("ppspp: {status}");
    }
    let complete = opened.complete();
    let Opened {
        target,
        storage,
        resume,
    } = opened;
    let storage = SharedStorage::new(storage);
    let setup = SwarmSetup::resume(resume.tree, resume.have, Box::new(storage.clone()), picker);
    raise_fd_limit(args.max_connections);
    let rt = runtime()?;
    let result = rt.block_on(async {
        let (node, mut events, task) = start_node(args).await?;
        let swarm = node.add_swarm(setup).await?;
        // Players start at the beginning; fetch from there until one asks
        // for something else.
        node.set_playhead(swarm, Some(ChunkIndex(0)))?;
        for p in &peers {
            node.connect(swarm, *p)?;
        }
        let mut contacts = Contacts::new(&peers, args.connect_timeout, Instant::now());
        let swarm_id = id.clone();
        let listener = TcpListener::bind(args.http)
            .await
            .with_context(|| format!("cannot serve HTTP on {}", args.http))?;
        let mut local = listener.local_addr()?;
        if local.ip().is_unspecified() {
            local.set_ip(Ipv4Addr::LOCALHOST.into());
        }
        let http_url = format!("http://{local}/{id}");
        let saved = storage.clone();
        let gw = Arc::new(Gateway::new(
            node.clone(),
            swarm,
            storage,
            url.chunk_size.bytes_u64(),
            id,
            PlayerConfig {
                bitrate,
                ..PlayerConfig::default()
            },
        ));
        let limits = server::Limits {
            max_connections: args.max_connections as usize,
            header_timeout: args.http_header_timeout,
            send_timeout: Some(args.http_send_timeout),
        };
        tokio::spawn(server::serve(listener, gw.clone(), limits));
        tokio::spawn(stats::sample(gw));
        println!("{http_url}");
        use std::io::Write;
        std::io::stdout().flush()?;
        eprintln!("ppspp: serving {http_url} (status at {http_url}/stats), content in {out}");
        let player = match args.player {
            Some(p) => Some(spawn_player(p, &http_url)?),
            None => None,
        };
        let complete = std::cell::Cell::new(complete);
        let watch = until_done::Watch {
            node: &node,
            swarm,
            events: &mut events,
            contacts: &mut contacts,
            id: &swarm_id,
            storing: "store the content",
        };
        let on_event = |ev: &Event| {
            if let Event::Complete { .. } = ev {
                complete.set(true);
                eprintln!("ppspp: download complete; serving until interrupted");
            }
        };
        // Complete content needs no peer.
        let outcome = until_done::run(watch, player, on_event, || !complete.get()).await;
        // Returns once the last checkpoint is on disk, or says why not.
        node.shutdown()
            .await
            .with_context(|| format!("cannot write the checkpoint of {out}"))?;
        task.await??;
        // The shutdown's checkpoint must be on disk before we return.
        saved
            .wait_checkpoint()
            .context("cannot write the checkpoint")?;
        outcome
    });
    // A player still running after Ctrl-C (it got the signal too) must not
    // keep us waiting on the thread that waits for it.
    rt.shutdown_timeout(std::time::Duration::from_millis(100));
    // Every holder of the storage is gone with the runtime: its last
    // checkpoint is written, and the output can be judged empty.
    target.discard_if_empty();
    result
}

type Started = (
    ppspp_udp::NodeHandle,
    tokio::sync::mpsc::UnboundedReceiver<Event>,
    tokio::task::JoinHandle<std::io::Result<()>>,
);

/// Starts the node of a `ppspp stream`, VoD or live, as its options say.
async fn start_node(args: &StreamArgs) -> Result<Started> {
    let mut config = node_config(args.listen, args.upload_limit, args.download_limit);
    args.uploads.apply(&mut config.endpoint);
    config.endpoint.congestion = args.congestion.clone();
    set_connect_timeout(&mut config.endpoint, args.connect_timeout);
    config.endpoint.pex_auto_connect = !args.no_pex;
    ppspp_udp::start(config)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))
}

/// Raises the soft limit on open files to the hard one, as many servers
/// do: every HTTP connection is a descriptor, and the usual soft limit of
/// 1,024 is below what `--max-connections` may allow. Warns when even the
/// hard limit leaves too little room.
fn raise_fd_limit(max_connections: u32) {
    // The node's sockets, the content, the checkpoint, the player: a few
    // dozen; refused connections are held for a moment each.
    const SPARE: u64 = 64;
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) if n < u64::from(max_connections) + SPARE => eprintln!(
            "ppspp: warning: the open files limit ({n}) is too low for \
             --max-connections {max_connections}; connections past it fail"
        ),
        Ok(_) => {}
        Err(e) => tracing::debug!("cannot raise the open files limit: {e}"),
    }
}

pub(crate) type Waiter = tokio::task::JoinHandle<std::io::Result<ExitStatus>>;

/// Starts the player on `url`; a player that is not installed is a clear
/// error, not a bare "No such file or directory".
pub(crate) fn spawn_player(p: Player, url: &str) -> Result<(Player, Waiter)> {
    let program = p.program();
    let mut child = std::process::Command::new(program)
        .arg(url)
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                anyhow!("cannot start {program}: it is not installed (not found on PATH)")
            }
            _ => anyhow!("cannot start {program}: {e}"),
        })?;
    Ok((p, tokio::task::spawn_blocking(move || child.wait())))
}

pub(crate) fn player_outcome(p: Player, status: ExitStatus) -> Result<()> {
    if status.success() {
        Ok(())
    } else {
        Err(anyhow!("{} exited with {status}", p.program()))
    }
}
