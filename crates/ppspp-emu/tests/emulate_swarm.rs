//! A scenario emulated in real time: real nodes on their own loopback
//! addresses, started on the scenario's plan, shaped by its network model;
//! set beside the simulator's run of the same scenario and seed.

use ppspp_emu::emulate;
use ppspp_lab::scenario::{parse, Role};

/// A flash crowd of 6 leechers on 2 Mbit/s uplinks and a 4 Mbit/s seeder,
/// 400 kB: a few seconds of real time.
const SCENARIO: &str = r#"
name = "emu-flash"
seed = 3
duration = "60s"
stop_when_done = true

[content]
size = "400KB"

[network]
groups = ["all"]
delay = [["10ms"]]

[classes.server]
up = "4Mbit/s"
down = "10Mbit/s"
queue = "100ms"

[classes.home]
up = "2Mbit/s"
down = "8Mbit/s"
queue = "200ms"
delay = "5ms"

[[peers]]
name = "seeder"
class = "server"
role = "seeder"

[[peers]]
name = "leechers"
count = 6
class = "home"
role = "leecher"
arrival = { kind = "flash", at = "1s" }
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flash_crowd_completes_in_real_time_as_in_the_simulator() {
    let scenario = parse(SCENARIO, "emu-flash.toml").unwrap();
    let out = emulate::run(scenario, 3).await.unwrap();
    let leechers: Vec<_> = out
        .peers
        .iter()
        .filter(|p| p.role == Role::Leecher)
        .collect();
    assert_eq!(leechers.len(), 6);
    let mut took = Vec::new();
    for p in &leechers {
        assert_eq!(p.failed, None);
        let done = p.complete_s.expect("every leecher completes");
        let joined = p.join_s.unwrap();
        assert!(joined >= 1.0, "joined at {joined}");
        let r = p.report.as_ref().expect("its figures");
        assert!(r.complete, "{r:?}");
        took.push(done - joined);
    }
    // 400 kB cannot come through a leecher's 8 Mbit/s downlink in the
    // model in less than 0.4 s.
    let mean = took.iter().sum::<f64>() / took.len() as f64;
    assert!(took.iter().all(|t| *t >= 0.4), "{took:?}");
    // The seeder's uplink carried at least one copy of the content.
    let net = &out.shaper.net;
    let (up, _) = net.access_links(ppspp_lab::packet::HostId(0)).unwrap();
    assert!(net.link(up).stats().bytes_out >= 400_000);
    // Nobody left before the end, so every datagram was between attached
    // nodes.
    assert_eq!(out.shaper.stats.unknown, 0, "{:?}", out.shaper.stats);
    // Ended when the last leecher completed, not at 60 s.
    assert!(out.wall_s < 30.0, "{}", out.wall_s);

    // The simulator's run of the same scenario and seed.
    let sim = ppspp_lab::run::run(SCENARIO, "emu-flash.toml", Some(3), None, |_| {}).unwrap();
    let sim_took: Vec<f64> = sim
        .peers
        .iter()
        .filter(|p| p.role == Role::Leecher)
        .map(|p| p.complete_s.unwrap() - p.join_s.unwrap())
        .collect();
    let sim_mean = sim_took.iter().sum::<f64>() / sim_took.len() as f64;
    eprintln!("mean download: emulated {mean:.2} s, simulated {sim_mean:.2} s");
    eprintln!(
        "lateness p99 {} µs",
        out.shaper.lateness_us.value_at_quantile(0.99)
    );
    // Issue 27's fidelity goal is within 10-15 %; this first check only
    // keeps the two in the same regime (a shared CI machine runs it).
    assert!(
        mean > 0.5 * sim_mean && mean < 2.0 * sim_mean,
        "emulated {mean:.2} s against simulated {sim_mean:.2} s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn leechers_leave_as_planned_and_the_rest_go_on() {
    // Each leecher stays 1 s after completing, then its node stops and
    // leaves the model (it keeps its address: late datagrams to it cross
    // the model and the kernel drops them).
    // The run lasts its whole 10 s (downloads end by about 5 s), so that
    // every leecher's linger ends before it.
    let text = format!("{SCENARIO}departure = {{ kind = \"leave-when-done\", linger = \"1s\" }}\n")
        .replace(
            "duration = \"60s\"\nstop_when_done = true",
            "duration = \"10s\"\nstop_when_done = false",
        );
    let scenario = parse(&text, "emu-leave.toml").unwrap();
    let out = emulate::run(scenario, 3).await.unwrap();
    for p in out.peers.iter().filter(|p| p.role == Role::Leecher) {
        let done = p.complete_s.expect("completes");
        let left = p.leave_s.expect("leaves before the end");
        assert!(left >= done + 1.0, "completed at {done}, left at {left}");
        assert!(p.report.as_ref().is_some_and(|r| r.complete));
    }
    // The seeder stays to the end.
    assert_eq!(out.peers[0].leave_s, None);
    assert!(out.wall_s >= 10.0, "{}", out.wall_s);
    assert_eq!(out.shaper.stats.unknown, 0, "{:?}", out.shaper.stats);
}
