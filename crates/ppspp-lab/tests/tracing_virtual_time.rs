//! With a subscriber installed, a run's tracing lines carry the simulated
//! time (`ppspp_lab::log::VirtualTime`) and the peer's name (the `peer`
//! span), and the run's results are the same as without one.

mod common;

use common::traced::run_traced;
use ppspp_lab::run::run;
use tracing::Level;

const SMALL: &str = include_str!("small_swarm.toml");

#[test]
fn lines_carry_virtual_time_and_peer_name() {
    let untraced = run(SMALL, "small_swarm.toml", None, None, |_| {}).unwrap();

    let (traced, text) = run_traced(SMALL, "small_swarm.toml", Level::DEBUG);

    // The first leecher joins at 1 s and completes 0.2–1 s later, in a
    // span that names it, at a virtual (not a wall-clock) time.
    let joined = text
        .lines()
        .find(|l| l.contains("peer{name=leechers[0]}") && l.ends_with("joining"))
        .unwrap_or_else(|| panic!("no join line for leechers[0]:\n{text}"));
    assert!(joined.trim_start().starts_with("1.000000s"), "{joined}");
    let complete = text
        .lines()
        .find(|l| l.contains("peer{name=leechers[0]}") && l.ends_with("swarm complete"))
        .unwrap_or_else(|| panic!("no completion line for leechers[0]:\n{text}"));
    let secs: f64 = complete
        .split_whitespace()
        .next()
        .unwrap()
        .trim_end_matches('s')
        .parse()
        .unwrap();
    assert!((1.2..2.0).contains(&secs), "{complete}");
    assert!(text.contains("peer{name=seeder}"), "{text}");

    // Tracing observes the run and changes nothing in it.
    assert_eq!(traced.summary.trace_hash, untraced.summary.trace_hash);
    assert_eq!(traced.summary.completed, untraced.summary.completed);
}
