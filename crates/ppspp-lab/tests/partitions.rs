//! A run split into partitions on several threads gives exactly what one
//! thread gives: the same trace hash, event count and CSVs. The scenario
//! mixes what could go wrong across partitions: peers in different delay
//! groups, random loss on uplinks, peers that leave when done (the
//! tracker hears of it a window later) and peers with random lifetimes
//! that arrive while others leave, and a seeder that leaves.

use ppspp_lab::run::run_with_threads;
use ppspp_lab::scenario;
use ppspp_lab::sim::Simulation;

const SCENARIO: &str = r#"
name = "partitions"
seed = 11
duration = "120s"
stop_when_done = true

[content]
size = "300KB"
chunk_size = "1024B"

[swarm]
tracker_peers = 3
max_peers = 6

[network]
groups = ["near", "far"]
delay = [["15ms", "40ms"], ["40ms", "15ms"]]

[classes.server]
up = "4Mbit/s"
down = "10Mbit/s"
queue = "100ms"
delay = "1ms"
group = "near"

[classes.near]
up = "1Mbit/s"
down = "8Mbit/s"
queue = "200ms"
delay = "2ms"
group = "near"
loss = { kind = "bernoulli", p = 0.005 }

[classes.far]
up = "1Mbit/s"
down = "8Mbit/s"
queue = "200ms"
delay = "2ms"
group = "far"

[[peers]]
name = "seeder"
class = "server"
role = "seeder"
departure = { kind = "weibull", shape = 2.0, scale = "200s" }

[[peers]]
name = "second-seeder"
class = "server"
role = "seeder"

[[peers]]
name = "near"
count = 9
class = "near"
role = "leecher"
upload_slots = 2
arrival = { kind = "flash", at = "1s", spread = "4s" }
departure = { kind = "leave-when-done", linger = "2s" }

[[peers]]
name = "far"
count = 8
class = "far"
role = "leecher"
upload_slots = 2
arrival = { kind = "poisson", rate = 1.0, start = "2s" }

[record]
queues = ["seeder.up", "far[0].down"]
rates = ["near"]
"#;

#[test]
fn one_two_and_three_threads_give_the_same_run() {
    let runs: Vec<_> = [1, 2, 3]
        .iter()
        .map(|&t| run_with_threads(SCENARIO, "partitions.toml", None, t, None, |_| {}).unwrap())
        .collect();
    let one = &runs[0];
    // The run is not trivial: peers completed, some left.
    assert_eq!(one.summary.completed, 17);
    assert!(one.peers.iter().any(|p| p.leave_s.is_some()));
    // It stopped at a progress sample (every second), once all were done.
    assert_eq!(one.summary.virtual_s.fract(), 0.0);
    assert!(one.summary.virtual_s < 120.0);
    for other in &runs[1..] {
        assert_eq!(one.summary.trace_hash, other.summary.trace_hash);
        assert_eq!(one.summary.events, other.summary.events);
        assert_eq!(one.summary.virtual_s, other.summary.virtual_s);
        for ((name, a), (_, b)) in one.csv.iter().zip(&other.csv) {
            assert_eq!(a, b, "{name} differs");
        }
    }
}

#[test]
fn the_threads_are_used_only_where_the_topology_allows() {
    let split = |text: &str, threads| {
        let s = scenario::parse(text, "t.toml").unwrap();
        Simulation::with_threads(s, None, threads)
            .unwrap()
            .partitions()
    };
    assert_eq!(split(SCENARIO, 2), 2);
    assert_eq!(split(SCENARIO, 64), 19);
    // Without any delay between hosts a packet could cross partitions
    // within one instant: one partition.
    let flat = SCENARIO
        .replace("delay = \"1ms\"", "")
        .replace("delay = \"2ms\"", "")
        .replace(
            "delay = [[\"15ms\", \"40ms\"], [\"40ms\", \"15ms\"]]",
            "delay = [[\"0ms\", \"40ms\"], [\"40ms\", \"0ms\"]]",
        );
    assert_eq!(split(&flat, 2), 1);
}
