//! The simulator's behaviour, pinned: the trace hashes of the repository's
//! own scenarios, first recorded before the protocol core was reshaped
//! (issue 22, at fc06186) and recorded again when DATA in flight began to
//! count as held in choosing the hashes a DATA carries (issue 24), and
//! again when a request the peer passed over began to count as lost and
//! a request late at a peer stopped being asked of that peer again (issue
//! 24), and again when PEX answers began to name a random sample of
//! the peers instead of the first 32 in address order (issue 26; only
//! swarms of more than 33 peers change: flash-crowd and scale-1000). A
//! refactor of the core or the lab must leave every one of them unchanged,
//! bit for bit; a change that means to alter behaviour updates them here
//! and says why in its commit.
//!
//! The 1,000-peer scale run's first 60 virtual seconds
//! (`ppspp lab run scenarios/scale-1000.toml --seed 1 --set duration=60s`,
//! 74e7a0eb…1245) takes a minute even in a release build, so it is checked
//! by `bench/trace_pins.sh`, not here.

use std::path::PathBuf;

use ppspp_lab::run::run_with_threads;
use ppspp_lab::scenario::{apply_overrides, Override};

/// Runs the repository's scenario `name` with `--seed 1` and `sets`,
/// returning its trace hash.
fn trace_hash(name: &str, sets: &[&str]) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "..", "..", "scenarios", name]
        .iter()
        .collect();
    let text = std::fs::read_to_string(&path).unwrap();
    let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let (text, _) = apply_overrides(&text, name, &overrides).unwrap();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    run_with_threads(&text, name, Some(1), threads, None, |_| {})
        .unwrap()
        .summary
        .trace_hash
}

#[test]
fn flash_crowd() {
    assert_eq!(
        trace_hash("flash-crowd.toml", &[]),
        "176fcb6d776d4b49343b5c4e13866a5cb7115b30bd4f0e620c7c1ff29c123633"
    );
}

fn e1_at_32(algorithm: &str) -> String {
    trace_hash(
        "e1-vod.toml",
        &[
            "peers.leechers.count=32",
            &format!("peers.leechers.algorithm={algorithm}"),
        ],
    )
}

#[test]
fn e1_vod_32_viewers_linear() {
    assert_eq!(
        e1_at_32("linear"),
        "69c198762d01a2eb882447b45b1835f5f319fbf527b87433e063d7aa55465c56"
    );
}

#[test]
fn e1_vod_32_viewers_std_vod() {
    assert_eq!(
        e1_at_32("std-vod"),
        "44beb64ceac6afd05a31056449828e1f426f426dc0c0556d3a63caf60f12335f"
    );
}

#[test]
fn e1_vod_32_viewers_swift_vod() {
    assert_eq!(
        e1_at_32("swift-vod"),
        "02b2e762250e30d3263626946a30ca9b8cc07752ff41ddc98205d71aeba84883"
    );
}
