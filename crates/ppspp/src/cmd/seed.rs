//! `ppspp seed FILE`: hash a file, print its swarm URL, serve it.

use std::fs::File;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use clap::Args;
use ppspp_core::cc::CongestionControl;
use ppspp_core::merkle::{BuildOptions, MerkleError, MerkleTree};
use ppspp_core::pick::{MediaRate, PickerKind, VodWindows};
use ppspp_core::proto::SwarmSetup;
use ppspp_core::{ChunkSize, HashFunction};
use ppspp_store::FileStorage;

use super::args;
use super::node::{announce_addr, interrupted, node_config, progress_bar, runtime, ProgressReader};
use super::url::SwarmUrl;

/// Arguments of `ppspp seed`.
#[derive(Debug, Args)]
pub struct SeedArgs {
    /// The file to serve.
    pub file: PathBuf,
    /// Address to listen on (UDP).
    #[arg(long, default_value = "0.0.0.0:6778")]
    pub listen: SocketAddr,
    /// Chunk size in bytes (1 to 32768).
    #[arg(long, default_value = "1024", value_parser = args::chunk_size)]
    pub chunk_size: ChunkSize,
    /// Merkle hash function: sha1 or sha256 (also sha224, sha384, sha512).
    #[arg(long = "hash", default_value = "sha1", value_parser = args::hash_function)]
    pub hash: HashFunction,
    /// Upload limit, e.g. 2MB/s or 8Mbit/s.
    #[arg(long, value_parser = args::rate)]
    pub upload_limit: Option<u64>,
    #[command(flatten)]
    pub uploads: crate::cmd::uploads::UploadPolicy,
    /// Congestion control of the DATA this node sends: ledbat (RFC 6817,
    /// yields to other traffic; `ledbat:25ms` sets its target queuing
    /// delay, 100 ms by default) or fixed (a constant window, for
    /// comparisons).
    #[arg(long, default_value = "ledbat")]
    pub congestion: CongestionControl,
    /// Address to put in the printed URL (default: the listen address, or
    /// this machine's address when listening on all interfaces).
    #[arg(long)]
    pub announce: Option<SocketAddr>,
    /// Write counters as JSON here when interrupted (bytes sent, per peer).
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
}

/// Hashes the file (a progress bar on a terminal), prints one line on
/// stdout — the swarm URL — and serves until interrupted.
pub fn run(args: &SeedArgs) -> Result<()> {
    let path = args.file.display();
    let file = File::open(&args.file).with_context(|| format!("cannot open {path}"))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {path}"))?;
    if meta.is_dir() {
        bail!("{path} is a directory, not a file");
    }
    let bar = progress_bar(
        meta.len(),
        "hashing {bar:40} {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
    );
    let reader = ProgressReader {
        inner: file,
        bar: bar.clone(),
    };
    // Nothing else runs before the tree is built: hash on every core.
    let options = BuildOptions::parallel();
    let tree = match MerkleTree::from_reader_with(reader, args.chunk_size, args.hash, &options) {
        Ok(t) => t,
        Err(MerkleError::EmptyContent) => bail!("{path} is empty: an empty file has no swarm"),
        Err(e) => return Err(e).with_context(|| format!("cannot hash {path}")),
    };
    bar.finish_and_clear();
    // The store's errors name the operation and the file already.
    let storage = FileStorage::seed(&args.file, args.chunk_size)?;
    let rt = runtime()?;
    rt.block_on(async {
        let mut config = node_config(args.listen, args.upload_limit, None);
        args.uploads.apply(&mut config.endpoint);
        config.endpoint.congestion = args.congestion.clone();
        let (node, mut events, task) = ppspp_udp::start(config)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let tree = Arc::new(tree);
        let setup = SwarmSetup::seed(
            tree.clone(),
            Box::new(storage),
            PickerKind::RarestFirst.build(MediaRate::default(), VodWindows::default()),
        );
        let swarm = node.add_swarm(setup).await?;
        let url = SwarmUrl {
            peer: Some(
                args.announce
                    .unwrap_or_else(|| announce_addr(node.local_addr())),
            ),
            root: tree.root(),
            chunk_size: args.chunk_size,
            hash: args.hash,
            content_len: Some(tree.content_len()),
        };
        println!("{url}");
        use std::io::Write;
        std::io::stdout().flush()?;
        tokio::select! {
            r = interrupted() => r?,
            _ = async { while events.recv().await.is_some() {} } => {}
        }
        let report = node.report(swarm).await?;
        node.shutdown().await?;
        task.await??;
        if let Some(path) = &args.stats_json {
            write_stats(path, &report)?;
        }
        Ok(())
    })
}

/// The seeder's counters: what it sent in all, and to whom.
fn write_stats(path: &std::path::Path, r: &ppspp_udp::Report) -> Result<()> {
    let peers: serde_json::Map<String, serde_json::Value> = r
        .stats
        .peers
        .iter()
        .map(|(addr, p)| {
            let v = serde_json::json!({
                "payload_bytes_sent": p.payload_bytes_sent,
                "chunks_sent": p.chunks_sent,
            });
            (addr.to_string(), v)
        })
        .collect();
    let doc = serde_json::json!({
        "payload_bytes_sent": r.stats.payload_bytes_sent,
        "datagrams_sent": r.endpoint.datagrams_sent,
        "bytes_sent": r.endpoint.bytes_sent,
        "peers": peers,
    });
    let text = serde_json::to_string_pretty(&doc)?;
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}
