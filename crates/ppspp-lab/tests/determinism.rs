//! Same scenario + same seed ⇒ the same trace hash and CSVs, bit for bit;
//! another seed ⇒ another trace.

use ppspp_lab::run::run;

const SMALL: &str = include_str!("small_swarm.toml");

fn flash(seed_text: &str) -> String {
    // The small swarm with a flash crowd (random arrival times from the
    // seed) and a lossy uplink (random losses from the seed).
    SMALL
        .replace(
            "arrival = { kind = \"times\", times = [\"1s\", \"6s\", \"11s\", \"16s\", \"21s\"] }",
            "arrival = { kind = \"flash\", at = \"1s\", spread = \"3s\" }",
        )
        .replace(
            "delay = \"5ms\"",
            "delay = \"5ms\"\nloss = { kind = \"bernoulli\", p = 0.01 }",
        )
        .replace("seed = 7", seed_text)
}

#[test]
fn same_seed_same_trace_and_csvs() {
    let text = flash("seed = 3");
    let a = run(&text, "a", None, None, |_| {}).unwrap();
    let b = run(&text, "b", None, None, |_| {}).unwrap();
    assert_eq!(a.summary.trace_hash, b.summary.trace_hash);
    assert_eq!(a.summary.events, b.summary.events);
    for ((name, x), (_, y)) in a.csv.iter().zip(&b.csv) {
        assert_eq!(x, y, "{name} differs");
    }
    assert_eq!(a.summary.completed, 5);
    // A seed from the command line overrides the file's, and changes the
    // run.
    let c = run(&text, "c", Some(4), None, |_| {}).unwrap();
    assert_ne!(a.summary.trace_hash, c.summary.trace_hash);
    assert_eq!(c.summary.seed, 4);
}
