//! `ppspp`: the command-line front of the ppspp node and lab.

mod cmd;

/// mimalloc rather than the system allocator: the lab's working set is
/// hundreds of megabytes of per-peer state touched at random, and mimalloc
/// backs its arenas with transparent huge pages where the system allows it
/// (`madvise` mode), which saves most TLB misses. On the 1,000-peer
/// benchmark it cut wall time by about 11 % on two threads; see
/// `bench/lab_scale.py`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// A Peer-to-Peer Streaming Peer Protocol (RFC 7574) node and lab.
#[derive(Debug, Parser)]
#[command(name = "ppspp", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the Merkle root (the swarm id) of a file as lowercase hex.
    Hash(cmd::hash::HashArgs),
    /// Serve a file: print its swarm URL on stdout, then serve until interrupted.
    Seed(cmd::seed::SeedArgs),
    /// Be the source of a live stream read from stdin or a file: print its
    /// swarm URL on stdout, then sign and serve it as it arrives.
    Live(cmd::live::LiveArgs),
    /// Download a swarm's content from the given and discovered peers.
    Get(cmd::get::GetArgs),
    /// Download a swarm and serve it over HTTP to a media player meanwhile.
    Stream(cmd::stream::StreamArgs),
    /// The lab: run scenarios in the deterministic simulator, or in real
    /// time on real sockets.
    #[command(subcommand)]
    Lab(cmd::lab::LabCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cmd::log::init(match cli.command {
        Command::Lab(cmd::lab::LabCommand::Emulate(_)) => cmd::log::Clock::Wall,
        Command::Lab(_) => cmd::log::Clock::Virtual,
        _ => cmd::log::Clock::Wall,
    });
    let result = match cli.command {
        Command::Hash(args) => cmd::hash::run(&args),
        Command::Seed(args) => cmd::seed::run(&args),
        Command::Live(args) => cmd::live::run(&args),
        Command::Get(args) => cmd::get::run(&args),
        Command::Stream(args) => cmd::stream::run(&args),
        Command::Lab(cmd) => cmd::lab::run(&cmd),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ppspp: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
