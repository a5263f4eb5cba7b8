//! `ppspp live [INPUT]`: be the source of a live stream. Reads the stream
//! from stdin or a file as it arrives (e.g. `ffmpeg … -f mpegts - | ppspp
//! live -`), cuts it into chunks, signs each munro (RFC 7574 §6.1.2: the
//! unified Merkle tree method) and serves it to viewers; prints the swarm
//! URL, with the public key that is the swarm id, on stdout first.

mod key;

use std::io::Read;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use ppspp_core::cc::CongestionControl;
use ppspp_core::live::{
    LiveInjector, LiveMethod, LiveParams, LiveShape, MunroSize, SignatureProfile,
};
use ppspp_core::pick::PickerKind;
use ppspp_core::pick::{MediaRate, VodWindows};
use ppspp_core::proto::SwarmSetup;
use ppspp_core::storage::LiveRing;
use ppspp_core::wire::{DiscardWindow, LiveSignatureAlgorithm};
use ppspp_core::ChunkSize;
use tokio::sync::mpsc;

use super::args;
use super::live_url::LiveUrl;
use super::node::{announce_addr, interrupted, node_config, runtime};

/// Signature algorithms a source can sign with (DNSSEC numbers, RFC 7574
/// §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Algorithm {
    /// ECDSA P-256 with SHA-256 (13): the RFC's and libswift's default.
    P256,
    /// Ed25519 (15): faster; libswift cannot verify it.
    Ed25519,
}

impl Algorithm {
    fn number(self) -> LiveSignatureAlgorithm {
        match self {
            Algorithm::P256 => LiveSignatureAlgorithm::ECDSAP256SHA256,
            Algorithm::Ed25519 => LiveSignatureAlgorithm::ED25519,
        }
    }
}

/// What a munro's signature covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Signatures {
    /// RFC 7574 §6.1.2.2: the munro's chunk spec, timestamp and hash.
    Rfc,
    /// libswift's: the munro hash alone (for libswift viewers).
    Libswift,
}

/// How chunks are vouched for (RFC 7574 §6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// The unified Merkle tree: a signature per munro (libswift's).
    Umt,
    /// Sign All: a signature per chunk (more CPU and bytes; ppspp peers only).
    SignAll,
}

/// Arguments of `ppspp live`.
#[derive(Debug, Args)]
pub struct LiveArgs {
    /// Where the stream comes from: a file, or `-` for stdin.
    #[arg(default_value = "-")]
    pub input: String,
    /// Address to listen on (UDP).
    #[arg(long, default_value = "0.0.0.0:6778")]
    pub listen: SocketAddr,
    /// The source's key file: loaded if it exists, else made and written
    /// there, so the swarm id stays the same across restarts. Without it,
    /// a new key (and swarm id) every run.
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Signature algorithm of a new key.
    #[arg(long, value_enum, default_value = "p256")]
    pub algorithm: Algorithm,
    /// What signatures cover: rfc (RFC 7574) or libswift (its live mode).
    #[arg(long, value_enum, default_value = "rfc")]
    pub signatures: Signatures,
    /// How chunks are vouched for: umt (a signature per munro) or
    /// sign-all (a signature per chunk).
    #[arg(long, value_enum, default_value = "umt")]
    pub method: Method,
    /// Chunk size in bytes (1 to 32768).
    #[arg(long, default_value = "1024", value_parser = args::chunk_size)]
    pub chunk_size: ChunkSize,
    /// Chunks per signed munro (a power of two; libswift uses 32).
    #[arg(long, default_value = "32")]
    pub munro: u64,
    /// The discard window in chunks: how much of the stream's past the
    /// source keeps and serves (RFC 7574 §6.1.3). The default, 32 Ki chunks
    /// of 1 KiB, is a minute of a 4 Mbit/s stream.
    #[arg(long, default_value = "32768", value_parser = clap::value_parser!(u64).range(1..))]
    pub window: u64,
    /// Read the input no faster than this (e.g. 4Mbit/s), for a file
    /// that is not itself live; default: as fast as it comes.
    #[arg(long, value_parser = args::rate)]
    pub rate: Option<u64>,
    /// Upload limit, e.g. 2MB/s or 8Mbit/s.
    #[arg(long, value_parser = args::rate)]
    pub upload_limit: Option<u64>,
    #[command(flatten)]
    pub uploads: crate::cmd::uploads::UploadPolicy,
    /// Congestion control of the DATA this node sends.
    #[arg(long, default_value = "ledbat")]
    pub congestion: CongestionControl,
    /// Address to put in the printed URL (default: the listen address, or
    /// this machine's address when listening on all interfaces).
    #[arg(long)]
    pub announce: Option<SocketAddr>,
}

/// Chunks queued between the reader and the node: a second of a 4 Mbit/s
/// stream in 1 KiB chunks. A full queue holds the reader back (the input
/// pipe then fills and the producer waits), rather than growing.
const QUEUE: usize = 512;

/// Prints the URL, then reads, signs and serves until interrupted (the
/// stream's past stays served after the input ends).
pub fn run(args: &LiveArgs) -> Result<()> {
    let munro = MunroSize::new(args.munro)
        .ok_or_else(|| anyhow!("--munro must be a power of two, not {}", args.munro))?;
    let algorithm = args.algorithm.number();
    let key = match &args.key {
        Some(path) => key::load_or_create(path, algorithm)?,
        None => key::generate(algorithm)?,
    };
    let profile = match args.signatures {
        Signatures::Rfc => SignatureProfile::Rfc7574,
        Signatures::Libswift => SignatureProfile::Libswift,
    };
    let method = match args.method {
        Method::Umt => LiveMethod::UnifiedMerkleTree,
        Method::SignAll => LiveMethod::SignAll,
    };
    if method == LiveMethod::SignAll && profile == SignatureProfile::Libswift {
        bail!("libswift has no Sign All: --signatures libswift needs --method umt");
    }
    let params = LiveParams {
        method,
        munro,
        profile,
        ..LiveParams::default()
    }
    .normalised();
    let input: Box<dyn Read + Send> = match args.input.as_str() {
        "-" => Box::new(std::io::stdin()),
        path => Box::new(std::fs::File::open(path).with_context(|| format!("cannot open {path}"))?),
    };
    let injector = LiveInjector::new(key, params, Some(args.window));
    let id = injector.swarm_id();
    let shape = LiveShape {
        params,
        algorithm,
        window: DiscardWindow::Window(args.window),
        chunk_size: Some(args.chunk_size.bytes()),
    };
    let cs = args.chunk_size;
    let setup = SwarmSetup::live_source(
        injector,
        shape,
        cs,
        Box::new(LiveRing::new(cs, args.window)),
        PickerKind::Sequential.build(MediaRate::default(), VodWindows::default()),
    );
    let rt = runtime()?;
    rt.block_on(async {
        let mut config = node_config(args.listen, args.upload_limit, None);
        args.uploads.apply(&mut config.endpoint);
        config.endpoint.congestion = args.congestion.clone();
        // A source serves whoever comes; it does not go looking for
        // viewers among the addresses they tell it.
        config.endpoint.pex_auto_connect = false;
        let (node, mut events, task) = ppspp_udp::start(config)
            .await
            .with_context(|| format!("cannot listen on {}", args.listen))?;
        let swarm = node.add_swarm(setup).await?;
        let url = LiveUrl {
            peer: Some(args.announce.unwrap_or_else(|| announce_addr(node.local_addr()))),
            id,
            chunk_size: cs,
            munro: Some(params.munro),
            profile,
            window: Some(args.window),
            method,
        };
        println!("{url}");
        use std::io::Write;
        std::io::stdout().flush()?;
        let (tx, mut chunks) = mpsc::channel::<Vec<u8>>(QUEUE);
        let (chunk_bytes, rate) = (cs.bytes_usize(), args.rate);
        let reader = tokio::task::spawn_blocking(move || read_chunks(input, chunk_bytes, rate, &tx));
        let mut input_open = true;
        let outcome = loop {
            tokio::select! {
                r = interrupted() => break r.map_err(anyhow::Error::from),
                c = chunks.recv(), if input_open => match c {
                    Some(data) => { node.push_live(swarm, data).await?; }
                    None => {
                        input_open = false;
                        eprintln!("ppspp: the input ended; serving what was signed until interrupted");
                    }
                },
                e = events.recv() => if e.is_none() { break Err(anyhow!("the node stopped")) },
            }
        };
        drop(chunks);
        node.shutdown().await?;
        task.await??;
        // The reader ends with its input (or at its next read once the
        // queue is gone); not waited for, as stdin may never end.
        drop(reader);
        outcome
    })?;
    rt.shutdown_timeout(Duration::from_millis(100));
    Ok(())
}

/// Reads `input` into whole chunks of `chunk_bytes` and queues them, no
/// faster than `rate` bytes per second if given; a last partial chunk
/// goes too. Chunks are whole because a live chunk cannot grow once
/// signed; a pipe that delivers a few bytes at a time is read until a
/// chunk is full.
fn read_chunks(
    mut input: Box<dyn Read + Send>,
    chunk_bytes: usize,
    rate: Option<u64>,
    out: &mpsc::Sender<Vec<u8>>,
) -> std::io::Result<()> {
    let start = Instant::now();
    let mut sent: u64 = 0;
    loop {
        let mut chunk = vec![0u8; chunk_bytes];
        let mut filled = 0;
        while filled < chunk_bytes {
            match input.read(&mut chunk[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if filled == 0 {
            return Ok(());
        }
        chunk.truncate(filled);
        if let Some(r) = rate.filter(|&r| r > 0) {
            let due = Duration::from_secs_f64(sent as f64 / r as f64);
            if let Some(wait) = due.checked_sub(start.elapsed()) {
                std::thread::sleep(wait);
            }
        }
        sent += filled as u64;
        let last = filled < chunk_bytes;
        if out.blocking_send(chunk).is_err() || last {
            return Ok(());
        }
    }
}
