//! The simulator's behaviour, pinned: the trace hashes of the repository's
//! own scenarios, recorded on main before the protocol core was reshaped
//! (issue 22, at fc06186). A refactor of the core or the lab must leave
//! every one of them unchanged, bit for bit; a change that means to alter
//! behaviour updates them here and says why in its commit.
//!
//! The 1,000-peer scale run's first 60 virtual seconds
//! (`ppspp lab run scenarios/scale-1000.toml --seed 1 --set duration=60s`,
//! b6aca018…0473) takes a minute even in a release build, so it is checked
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
        "e84c8c9a364e73b5594f3ede04d12237f54ceb91c5f719a2a31b50dc95ec4449"
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
        "322610670606137f0887c1f81616063dd5f29e526f7515ae8b9718c424155f46"
    );
}

#[test]
fn e1_vod_32_viewers_std_vod() {
    assert_eq!(
        e1_at_32("std-vod"),
        "660414dc778c9b35ed8a93e61c6680c6a82bb1fb0ac6f001f8b80f62576c91be"
    );
}

#[test]
fn e1_vod_32_viewers_swift_vod() {
    assert_eq!(
        e1_at_32("swift-vod"),
        "da497b971129295ecbab329e15b6858ba3ee8ffbc42f66b96fc73222a1517735"
    );
}
