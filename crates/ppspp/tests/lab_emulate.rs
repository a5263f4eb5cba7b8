//! `ppspp lab emulate`: a scenario in real time writes a results folder
//! and report, and prints the emulation's figures; a scenario the emulator
//! cannot run is refused with its reason before anything is written.

use std::process::Command;

/// A seeder and three leechers, 200 kB: a couple of seconds.
const TINY: &str = r#"
name = "tiny"
seed = 2
duration = "30s"
stop_when_done = true
[content]
size = "200KB"
[classes.server]
up = "8Mbit/s"
down = "8Mbit/s"
[classes.home]
up = "2Mbit/s"
down = "8Mbit/s"
delay = "5ms"
[[peers]]
name = "seeder"
class = "server"
role = "seeder"
[[peers]]
name = "leechers"
count = 3
class = "home"
role = "leecher"
"#;

#[test]
fn a_scenario_runs_in_real_time_into_a_results_folder() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("tiny.toml");
    std::fs::write(&scenario, TINY).unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_ppspp"))
        .args(["lab", "emulate"])
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        stdout.contains("peers         4 (3 leechers, 3 completed)"),
        "{stdout}"
    );
    assert!(stdout.contains("lateness ms   p50 "), "{stdout}");
    assert!(stdout.contains("timers ms     p50 "), "{stdout}");
    let report = out.join("report.html");
    assert_eq!(
        stdout.lines().last(),
        Some(format!("report        {}", report.display()).as_str()),
        "{stdout}"
    );
    let html = std::fs::read_to_string(report).unwrap();
    assert!(html.contains("emulated in real time"));
    let peers = std::fs::read_to_string(out.join("peers.csv")).unwrap();
    assert_eq!(peers.lines().count(), 5, "{peers}");
}

#[test]
fn what_cannot_run_in_real_time_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let bittorrent = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/e2-bittorrent.toml"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_ppspp"))
        .args(["lab", "emulate", bittorrent, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("cannot emulate"), "{stderr}");
    assert!(stderr.contains("runs BitTorrent"), "{stderr}");
    assert!(!out.exists());
}
