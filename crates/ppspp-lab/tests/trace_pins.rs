//! The simulator's behaviour, pinned: the trace hashes of the repository's
//! own scenarios, first recorded before the protocol core was reshaped
//! (issue 22, at fc06186) and recorded again when DATA in flight began to
//! count as held in choosing the hashes a DATA carries (issue 24). A
//! refactor of the core or the lab must leave every one of them unchanged,
//! bit for bit; a change that means to alter behaviour updates them here
//! and says why in its commit.
//!
//! The 1,000-peer scale run's first 60 virtual seconds
//! (`ppspp lab run scenarios/scale-1000.toml --seed 1 --set duration=60s`,
//! 39ac87dd…5762) takes a minute even in a release build, so it is checked
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
        "9f354f05b34f1f1b50e8809c556c2186ab5a617c52763a7a3c481c785da3e17f"
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
        "5c6d6724f4d8af8cf396b0368fd805c809047361f94cdc654757a53c3d346439"
    );
}

#[test]
fn e1_vod_32_viewers_std_vod() {
    assert_eq!(
        e1_at_32("std-vod"),
        "c25c8e2ebfe171f0f59c2971ba1eadd04aa7ccd45b4be72390846e4b8f178690"
    );
}

#[test]
fn e1_vod_32_viewers_swift_vod() {
    assert_eq!(
        e1_at_32("swift-vod"),
        "cd8b56aa873030e8f6b396f7afdb896d8be0c9858ba787179fb4ba6bc448dfc4"
    );
}
