//! `ppspp get URL|SWARM-ID --output PATH`: download a swarm's content.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use ppspp_core::pick;
use ppspp_core::proto::{Event, SwarmSetup};
use ppspp_store::{FileStorage, SwarmMeta};
use ppspp_udp::{NodeHandle, Report};
use serde_json::json;

use super::args;
use super::node::{human_bytes, node_config, peers_of, progress_bar, runtime};
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
    /// Peers served at once; the others are choked and take turns (0: all).
    #[arg(long, default_value = "0")]
    pub upload_slots: usize,
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
    /// Seconds between checkpoints of the download's progress (a killed
    /// process loses at most this much work).
    #[arg(long, default_value = "5", value_parser = args::seconds)]
    pub checkpoint_interval: Duration,
    /// Download scheduling: rarest-first or sequential.
    #[arg(long, default_value = "rarest-first")]
    pub algorithm: String,
}

/// How a download ended.
enum Outcome {
    Complete,
    Interrupted,
    Stalled(String),
}

/// Downloads from every given and discovered peer while serving what it
/// has; exits successfully once every chunk is verified and stored.
pub fn run(args: &GetArgs) -> Result<()> {
    let url = SwarmUrl::parse(&args.target).map_err(|e| anyhow!(e))?;
    let peers = peers_of(&url, &args.peers)?;
    let picker = pick::by_name(&args.algorithm).ok_or_else(|| {
        anyhow!(
            "unknown algorithm '{}' (known: {})",
            args.algorithm,
            pick::NAMES.join(", ")
        )
    })?;
    let mut meta = SwarmMeta::new(url.hash, url.root, url.chunk_size);
    if let Some(cl) = url.content_len {
        meta = meta.with_content_len(cl);
    }
    let out = args.output.display();
    // The store's errors name the operation and the file; the cause is
    // their source, printed once by the error chain.
    let (storage, resume) = FileStorage::open_download(&args.output, &meta)?;
    if let Some(w) = &resume.warning {
        eprintln!("ppspp: warning: {w}");
    }
    if resume.dropped > 0 {
        eprintln!(
            "ppspp: {} chunks in {out} no longer matched their hashes and will be fetched again",
            resume.dropped
        );
    }
    let at_start = resume.have.count();
    let setup = SwarmSetup::resume(resume.tree, resume.have, Box::new(storage), picker);
    let started = Instant::now();
    let rt = runtime()?;
    rt.block_on(async {
        let mut config = node_config(args.listen, args.upload_limit, args.download_limit);
        config.endpoint.checkpoint_interval = args.checkpoint_interval;
        config.endpoint.upload_slots = args.upload_slots;
        let (node, mut events, task) = ppspp_udp::start(config)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let swarm = node.add_swarm(setup).await?;
        for p in &peers {
            node.connect(swarm, *p)?;
        }
        let outcome = follow(args, &node, swarm, &mut events, url.chunk_size.bytes_u64()).await?;
        let elapsed = started.elapsed();
        let report = node.report(swarm).await?;
        if matches!(outcome, Outcome::Complete) && args.seed_after {
            eprintln!("ppspp: download complete; seeding until interrupted");
            tokio::signal::ctrl_c().await?;
        }
        node.shutdown().await?;
        task.await??;
        if let Some(path) = &args.stats_json {
            write_stats(
                path,
                &report,
                at_start,
                elapsed,
                matches!(outcome, Outcome::Complete),
            )?;
        }
        match outcome {
            Outcome::Complete => Ok(()),
            Outcome::Interrupted => {
                bail!("interrupted; progress is checkpointed, run the same command to resume")
            }
            Outcome::Stalled(why) => bail!("{why}"),
        }
    })
}

/// Shows progress until the swarm completes, the user interrupts, or no
/// progress is made for the idle timeout.
async fn follow(
    args: &GetArgs,
    node: &NodeHandle,
    swarm: ppspp_core::proto::SwarmHandle,
    events: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
    chunk_size: u64,
) -> Result<Outcome> {
    let bar = progress_bar(
        0,
        "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {msg} ETA {eta}",
    );
    let mut tick = tokio::time::interval(Duration::from_millis(250));
    let mut last_line = Instant::now();
    let mut last_have = u64::MAX;
    let mut last_change = Instant::now();
    let mut last_bytes = 0u64;
    let mut last_rate_at = Instant::now();
    // One listener for the whole download. A new `ctrl_c()` each turn of
    // the loop completes only on a Ctrl-C after its first poll, and once
    // tokio's handler is installed the signal no longer ends the process:
    // a Ctrl-C between two turns was lost, and the download ran on (seen
    // in CI as an interrupted `get` that exited with success).
    let interrupt = tokio::signal::ctrl_c();
    tokio::pin!(interrupt);
    loop {
        tokio::select! {
            r = &mut interrupt => {
                r?;
                bar.abandon();
                return Ok(Outcome::Interrupted);
            }
            ev = events.recv() => match ev {
                Some(Event::Complete { .. }) => {
                    bar.finish_and_clear();
                    return Ok(Outcome::Complete);
                }
                Some(Event::StorageError { error, .. }) => {
                    bar.abandon();
                    return Ok(Outcome::Stalled(format!("cannot store the content: {error}")));
                }
                Some(_) => {}
                None => return Ok(Outcome::Stalled("the node stopped".into())),
            },
            _ = tick.tick() => {
                let r = node.report(swarm).await?;
                if r.complete {
                    bar.finish_and_clear();
                    return Ok(Outcome::Complete);
                }
                if r.have != last_have {
                    last_have = r.have;
                    last_change = Instant::now();
                }
                let total = r.chunk_count.map(|n| n * chunk_size);
                if let Some(t) = total {
                    bar.set_length(t);
                }
                bar.set_position((r.have * chunk_size).min(total.unwrap_or(u64::MAX)));
                bar.set_message(format!("{} peers", r.stats.peers_connected));
                if bar.is_hidden() && last_line.elapsed() >= Duration::from_secs(2) {
                    let bytes = r.stats.payload_bytes_received;
                    let rate = (bytes - last_bytes.min(bytes)) as f64 / last_rate_at.elapsed().as_secs_f64();
                    last_bytes = bytes;
                    last_rate_at = Instant::now();
                    last_line = Instant::now();
                    eprintln!("{}", progress_line(&r, rate));
                }
                if last_change.elapsed() >= Duration::from_secs(args.idle_timeout) {
                    bar.abandon();
                    let why = if r.stats.peers_connected == 0 {
                        "no peer answered".to_string()
                    } else {
                        format!("no progress for {} s", args.idle_timeout)
                    };
                    return Ok(Outcome::Stalled(format!("download stalled at {} chunks: {why}", r.have)));
                }
            }
        }
    }
}

fn progress_line(r: &Report, rate: f64) -> String {
    let pct = r
        .chunk_count
        .map(|n| format!("{:.1}%", 100.0 * r.have as f64 / n.max(1) as f64));
    format!(
        "ppspp: {} chunks ({}) {}/s, {} peers",
        r.have,
        pct.unwrap_or_else(|| "size unknown".into()),
        human_bytes(rate),
        r.stats.peers_connected
    )
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
        "duration_s": elapsed.as_secs_f64(),
        "peers": peers,
    });
    let text = serde_json::to_string_pretty(&doc)?;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
