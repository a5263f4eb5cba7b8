//! DATA carries the sender's wall clock (RFC 7574 §8.6), and each peer
//! group may run its clock ahead of the lab's (`clock_offset`). The
//! one-way delays a receiver sees are then off by the difference, which
//! LEDBAT's base delay cancels (RFC 6817 §3.4): the run is the same, bit
//! for bit, however far apart the clocks are.

use ppspp_lab::run::run;

const SMALL: &str = include_str!("small_swarm.toml");

fn with_offsets(seeder: &str, leechers: &str) -> String {
    SMALL
        .replace(
            "role = \"seeder\"",
            &format!("role = \"seeder\"\nclock_offset = \"{seeder}\""),
        )
        .replace(
            "role = \"leecher\"",
            &format!("role = \"leecher\"\nclock_offset = \"{leechers}\""),
        )
}

#[test]
fn clock_offsets_between_peers_change_nothing() {
    let base = run(SMALL, "base", None, None, |_| {}).unwrap();
    assert_eq!(base.summary.completed, 5);
    for (seeder, leechers) in [("0s", "3s"), ("2h", "0s"), ("1s", "250ms")] {
        let text = with_offsets(seeder, leechers);
        assert_ne!(text, SMALL);
        let shifted = run(&text, "shifted", None, None, |_| {}).unwrap();
        assert_eq!(
            shifted.summary.trace_hash, base.summary.trace_hash,
            "seeder {seeder} ahead, leechers {leechers} ahead"
        );
    }
}

#[test]
fn a_clock_offset_needs_a_unit() {
    let err = run(&with_offsets("0s", "3"), "bad", None, None, |_| {})
        .err()
        .expect("a unitless offset is refused")
        .to_string();
    assert!(err.contains("clock_offset"), "{err}");
}
