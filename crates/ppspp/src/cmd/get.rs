//! `ppspp get URL|SWARM-ID --output PATH`: download a swarm's content.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use ppspp_core::cc::CongestionControl;
use ppspp_core::pick::{MediaRate, PickerKind, VodWindows};
use ppspp_core::proto::{Event, SwarmHandle, SwarmSetup};
use ppspp_store::SwarmMeta;
use ppspp_udp::{NodeHandle, Report};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use super::args;
use super::contacts::Contacts;
use super::node::{
    interrupted, node_config, peers_of, progress_bar, runtime, set_connect_timeout, CONNECT_TIMEOUT,
};
use super::output::{self, Opened};
use super::progress::{human_bytes, Progress, RateMeter, Summary};
use super::url::SwarmUrl;

/// Arguments of `ppspp get`.
#[derive(Debug, Args)]
pub struct GetArgs {
    /// A swarm URL (ppspp://HOST:PORT/<root>?cs=…&hf=…&cl=…) or a bare swarm id.
    pub target: String,
    /// A peer to download from (repeatable); peers found through PEX are used too.
    #[arg(long = "peer")]
    pub peers: Vec<SocketAddr>,
    /// Where to write the content (a checkpoint goes beside it, PATH.ppspp).
    #[arg(long, short)]
    pub output: PathBuf,
    /// Address to listen on (UDP); other peers fetch from us meanwhile.
    #[arg(long, default_value = "0.0.0.0:0")]
    pub listen: SocketAddr,
    /// Upload limit, e.g. 2MB/s or 8Mbit/s.
    #[arg(long, value_parser = args::rate)]
    pub upload_limit: Option<u64>,
    #[command(flatten)]
    pub uploads: crate::cmd::uploads::UploadPolicy,
    /// Download limit, e.g. 2MB/s or 8Mbit/s.
    #[arg(long, value_parser = args::rate)]
    pub download_limit: Option<u64>,
    /// Keep serving the content after the download completes, until interrupted.
    #[arg(long)]
    pub seed_after: bool,
    /// Write counters as JSON here at exit.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
    /// Give up after this many seconds without progress.
    #[arg(long, default_value = "60")]
    pub idle_timeout: u64,
    /// Seconds to wait for a peer to answer the handshake (five tries; a
    /// peer that refuses is tried again meanwhile); when every peer fails
    /// to, the download fails. A peer that answered once and left is tried
    /// again for as long as the download runs.
    #[arg(long, default_value = CONNECT_TIMEOUT, value_parser = args::seconds)]
    pub connect_timeout: Duration,
    /// Write over an existing output file that is not a download of this
    /// swarm (one without its checkpoint PATH.ppspp beside it).
    #[arg(long)]
    pub force: bool,
    /// Seconds between checkpoints of the download's progress (a killed
    /// process loses at most this much work).
    #[arg(long, default_value = "5", value_parser = args::seconds)]
    pub checkpoint_interval: Duration,
    /// Also checkpoint once this much verified since the last checkpoint
    /// (so the first comes early), e.g. 1MiB; 0: by time only.
    #[arg(long, value_parser = args::size)]
    pub checkpoint_bytes: Option<u64>,
    /// ...or this percentage of what was stored at the last one, if more
    /// (a checkpoint's cost grows with what it records).
    #[arg(long)]
    pub checkpoint_growth: Option<u32>,
    /// ...but at most this much, e.g. 32MiB (a kill loses up to a step).
    #[arg(long, value_parser = args::size)]
    pub checkpoint_max: Option<u64>,
    /// Download scheduling: rarest-first or sequential (also linear,
    /// std-vod, swift-vod, buffer-vod; live for live streams).
    #[arg(long, default_value = "rarest-first")]
    pub algorithm: PickerKind,
    /// Congestion control of the DATA this node sends: ledbat (RFC 6817,
    /// yields to other traffic; `ledbat:25ms` sets its target queuing
    /// delay, 100 ms by default) or fixed (a constant window, for
    /// comparisons).
    #[arg(long, default_value = "ledbat")]
    pub congestion: CongestionControl,
}

/// How a download ended.
enum Outcome {
    Complete,
    Interrupted,
    /// It cannot go on: why, for the user.
    Failed(String),
}

/// What a run of the node produced.
struct Run {
    outcome: Outcome,
    report: Report,
    elapsed: Duration,
    /// Why the last checkpoint could not be written, when it could not.
    unrecorded: Option<String>,
}

/// What was stored before this run.
struct Start {
    /// Bytes of content.
    bytes: u64,
    /// Chunks.
    chunks: u64,
    /// Whether that is all of it.
    complete: bool,
}

/// Downloads from every given and discovered peer while serving what it
/// has; exits successfully once every chunk is verified and stored.
pub fn run(args: &GetArgs) -> Result<()> {
    let url = SwarmUrl::parse(&args.target).map_err(|e| anyhow!(e))?;
    let peers = peers_of(&url, &args.peers)?;
    let picker = args
        .algorithm
        .build(MediaRate::default(), VodWindows::default());
    let mut meta = SwarmMeta::new(url.hash, url.root, url.chunk_size);
    if let Some(cl) = url.content_len {
        meta = meta.with_content_len(cl);
    }
    let opened = output::open(&args.output, &meta, args.force)?;
    if let Some(status) = opened.status() {
        eprintln!("ppspp: {status}");
    }
    let start = Start {
        bytes: opened.stored_bytes(),
        chunks: opened.resume.have.count(),
        complete: opened.complete(),
    };
    let Opened {
        target,
        storage,
        resume,
    } = opened;
    let setup = SwarmSetup::resume(resume.tree, resume.have, Box::new(storage), picker);
    let rt = runtime()?;
    let run = rt.block_on(download(args, &url, &peers, setup, &start));
    // Dropping the runtime ends every task still holding the node, whose
    // storage then writes its last checkpoint: only after that may the
    // output be judged empty.
    drop(rt);
    let complete = matches!(&run, Ok(r) if matches!(r.outcome, Outcome::Complete));
    let discarded = !complete && target.discard_if_empty();
    let run = run?;
    if let Some(why) = &run.unrecorded {
        // However the download ended, its progress is not recorded: say so
        // on one line, and fail (the error the outcome gives, if any,
        // follows as the final line).
        // A complete download still needs its checkpoint: without it a
        // later get of the same path cannot tell the file is this swarm's
        // (it refuses it as someone else's file, or re-downloads it with
        // --force). `seed` hashes the file and needs none.
        let shown = target.path().display();
        let done = if complete {
            format!("the content is complete (ppspp seed {shown} serves it), but a later get of it would start over")
        } else {
            "what arrived since the last checkpoint will be downloaded again".to_string()
        };
        let why = why.trim_start_matches("checkpoint failed: ");
        let line = format!("cannot write the checkpoint of {shown}: {why}; {done}");
        if matches!(run.outcome, Outcome::Complete) {
            bail!("{line}");
        }
        eprintln!("ppspp: error: {line}");
    }
    match run.outcome {
        Outcome::Complete => {
            if !start.complete {
                eprintln!("ppspp: {}", summary(target.path(), &run, &start).line());
            }
            Ok(())
        }
        Outcome::Interrupted if discarded => bail!("interrupted before any data arrived"),
        Outcome::Interrupted => {
            bail!("interrupted; progress is checkpointed, run the same command to resume")
        }
        Outcome::Failed(why) => bail!("{why}"),
    }
}

/// The line printed at the end of a successful download: the size is the
/// complete file's, the rest this run's.
fn summary(path: &std::path::Path, run: &Run, start: &Start) -> Summary {
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    Summary {
        path: path.display().to_string(),
        size,
        resumed: start.bytes,
        elapsed: run.elapsed,
        peers: run
            .report
            .stats
            .peers
            .values()
            .filter(|p| p.chunks_received > 0)
            .count(),
    }
}

/// Runs the node: connects to the peers, follows the download to its end,
/// shuts the node down (last checkpoint written) and writes the stats.
async fn download(
    args: &GetArgs,
    url: &SwarmUrl,
    peers: &[SocketAddr],
    setup: SwarmSetup,
    start: &Start,
) -> Result<Run> {
    let mut config = node_config(args.listen, args.upload_limit, args.download_limit);
    config.endpoint.checkpoint_interval = args.checkpoint_interval;
    if let Some(b) = args.checkpoint_bytes {
        config.endpoint.checkpoint_bytes = b;
    }
    if let Some(g) = args.checkpoint_growth {
        config.endpoint.checkpoint_growth_percent = g;
    }
    if let Some(m) = args.checkpoint_max {
        config.endpoint.checkpoint_max_bytes = m;
    }
    args.uploads.apply(&mut config.endpoint);
    config.endpoint.congestion = args.congestion.clone();
    set_connect_timeout(&mut config.endpoint, args.connect_timeout);
    let (node, mut events, task) = ppspp_udp::start(config)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let swarm = node.add_swarm(setup).await?;
    let started = Instant::now();
    // A complete file needs no peer, unless it is to be served.
    let tried: &[SocketAddr] = if start.complete && !args.seed_after {
        &[]
    } else {
        peers
    };
    for p in tried {
        node.connect(swarm, *p)?;
    }
    let watch = Watch {
        args,
        node: &node,
        swarm,
        contacts: Contacts::new(tried, args.connect_timeout, started),
        warned: false,
        swarm_id: url.root.to_hex(),
        chunk_size: url.chunk_size.bytes_u64(),
        content_len: url.content_len,
    };
    let outcome = watch.follow(&mut events).await?;
    let elapsed = started.elapsed();
    let report = node.report(swarm).await?;
    if matches!(outcome, Outcome::Complete) && args.seed_after {
        eprintln!("ppspp: download complete; seeding until interrupted");
        interrupted().await?;
    }
    // The last checkpoint is on disk once this returns; the error says why
    // it is not.
    let unrecorded = match node.shutdown().await {
        Ok(()) => None,
        Err(e) if e.kind() == std::io::ErrorKind::Other => Some(e.to_string()),
        Err(e) => return Err(e.into()),
    };
    task.await??;
    if let Some(path) = &args.stats_json {
        let complete = matches!(outcome, Outcome::Complete);
        write_stats(path, &report, start.chunks, elapsed, complete)?;
    }
    Ok(Run {
        outcome,
        report,
        elapsed,
        unrecorded,
    })
}

/// A download being followed.
struct Watch<'a> {
    args: &'a GetArgs,
    node: &'a NodeHandle,
    swarm: SwarmHandle,
    /// What became of the peers tried.
    contacts: Contacts,
    /// Whether the user was told that every peer failed and is retried.
    warned: bool,
    swarm_id: String,
    chunk_size: u64,
    /// The content length, once known.
    content_len: Option<u64>,
}

impl Watch<'_> {
    /// Shows progress until the swarm completes, the user interrupts, every
    /// peer tried fails its handshake, or no progress is made for the idle
    /// timeout.
    async fn follow(mut self, events: &mut UnboundedReceiver<Event>) -> Result<Outcome> {
        // The bar and the plain lines show the same text; a 20-column bar
        // leaves it room on an 80-column terminal (wide_msg cuts the rest).
        let bar = progress_bar(0, "{bar:20} {wide_msg}");
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        let mut last_line = Instant::now();
        let mut last_have = u64::MAX;
        let mut last_change = Instant::now();
        let mut meter = RateMeter::new(Duration::from_secs(5));
        let idle = Duration::from_secs(self.args.idle_timeout);
        // One listener for the whole download. A new `ctrl_c()` each turn of
        // the loop completes only on a Ctrl-C after its first poll, and once
        // tokio's handler is installed the signal no longer ends the process:
        // a Ctrl-C between two turns was lost, and the download ran on (seen
        // in CI as an interrupted `get` that exited with success).
        let interrupt = interrupted();
        tokio::pin!(interrupt);
        loop {
            tokio::select! {
                r = &mut interrupt => {
                    r?;
                    bar.abandon();
                    return Ok(Outcome::Interrupted);
                }
                ev = events.recv() => {
                    let Some(ev) = ev else {
                        return Ok(Outcome::Failed("the node stopped".into()));
                    };
                    self.contacts.on_event(&ev, Instant::now());
                    match ev {
                        Event::Complete { .. } => {
                            bar.finish_and_clear();
                            return Ok(Outcome::Complete);
                        }
                        Event::StorageError { error, .. } => {
                            bar.abandon();
                            return Ok(Outcome::Failed(format!("cannot store the content: {error}")));
                        }
                        Event::ContentLength { len, .. } => self.content_len = Some(len),
                        _ => {}
                    }
                    // Nobody answered, or nobody has the swarm: say so now
                    // rather than after the idle timeout; while peers are
                    // tried again, as a warning.
                    if self.contacts.all_failed() {
                        if !self.contacts.retrying() {
                            bar.abandon();
                            return Ok(Outcome::Failed(self.contacts.failure(&self.swarm_id)));
                        }
                        if !std::mem::replace(&mut self.warned, true) {
                            let why = self.contacts.failure(&self.swarm_id);
                            let line = format!("ppspp: warning: {why}; trying again");
                            // A hidden bar (stderr not a terminal) prints nothing.
                            if bar.is_hidden() {
                                eprintln!("{line}");
                            } else {
                                bar.println(line);
                            }
                        }
                    }
                }
                _ = tick.tick() => {
                    for peer in self.contacts.due(Instant::now()) {
                        self.node.connect(self.swarm, peer)?;
                    }
                    let r = self.node.report(self.swarm).await?;
                    if r.complete {
                        bar.finish_and_clear();
                        return Ok(Outcome::Complete);
                    }
                    if r.have != last_have {
                        last_have = r.have;
                        last_change = Instant::now();
                    }
                    meter.record(Instant::now(), r.stats.payload_bytes_received);
                    let progress = self.progress(&r, meter.rate());
                    if let Some(t) = progress.total {
                        bar.set_length(t);
                    }
                    bar.set_position(progress.stored);
                    bar.set_message(progress.line());
                    if bar.is_hidden() && last_line.elapsed() >= Duration::from_secs(2) {
                        last_line = Instant::now();
                        eprintln!("ppspp: {}", progress.line());
                    }
                    if last_change.elapsed() >= idle {
                        bar.abandon();
                        let at = (progress.stored > 0).then(|| stalled_at(&progress));
                        return Ok(Outcome::Failed(self.contacts.idle(idle, at, &self.swarm_id)));
                    }
                }
            }
        }
    }

    /// Where the download stands: bytes stored (resumed ones included; the
    /// last chunk may be short, so at most the content length).
    fn progress(&self, r: &Report, rate: f64) -> Progress {
        let total = self
            .content_len
            .or_else(|| r.chunk_count.map(|n| n * self.chunk_size));
        Progress {
            stored: (r.have * self.chunk_size).min(total.unwrap_or(u64::MAX)),
            total,
            rate,
            peers: r.stats.peers_connected,
        }
    }
}

/// "1.2 MiB of 3.0 MiB", or "1.2 MiB" while the size is unknown.
fn stalled_at(p: &Progress) -> String {
    match p.total {
        Some(t) => format!(
            "{} of {}",
            human_bytes(p.stored as f64),
            human_bytes(t as f64)
        ),
        None => human_bytes(p.stored as f64),
    }
}

fn write_stats(
    path: &PathBuf,
    r: &Report,
    at_start: u64,
    elapsed: Duration,
    complete: bool,
) -> Result<()> {
    let peers: serde_json::Map<String, serde_json::Value> = r
        .stats
        .peers
        .iter()
        .map(|(addr, p)| {
            let v = json!({
                "payload_bytes_received": p.payload_bytes_received,
                "payload_bytes_sent": p.payload_bytes_sent,
                "chunks_received": p.chunks_received,
                "chunks_sent": p.chunks_sent,
                "chunks_rejected": p.chunks_rejected,
            });
            (addr.to_string(), v)
        })
        .collect();
    let doc = json!({
        "complete": complete,
        "chunks_total": r.chunk_count,
        "chunks_at_start": at_start,
        "chunks_verified": r.stats.chunks_verified,
        "chunks_rejected": r.stats.chunks_rejected,
        "bad_peers": r.stats.bad_peers,
        "payload_bytes_received": r.stats.payload_bytes_received,
        "payload_bytes_sent": r.stats.payload_bytes_sent,
        "datagrams_received": r.endpoint.datagrams_received,
        "datagrams_sent": r.endpoint.datagrams_sent,
        "datagrams_dropped": r
            .endpoint
            .dropped
            .by_reason()
            .into_iter()
            .map(|(why, n)| (why.to_string(), json!(n)))
            .collect::<serde_json::Map<_, _>>(),
        "duration_s": elapsed.as_secs_f64(),
        "peers": peers,
    });
    let text = serde_json::to_string_pretty(&doc)?;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
