//! `ppspp lab run` and `ppspp lab sweep`: a results folder, a determinism
//! check that passes, scenario errors with file and line, and a sweep table.

mod common;
use common::{ppspp, SMALL};

/// A temporary folder holding the small swarm's scenario file.
fn small_scenario() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    (dir, scenario)
}

#[test]
fn run_writes_the_results_folder_and_checks_determinism() {
    let (dir, scenario) = small_scenario();
    let out = dir.path().join("out");
    let o = ppspp(&[
        "lab",
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--check-determinism",
        "--threads",
        "2",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(stdout.contains("5 completed"), "{stdout}");
    assert!(stdout.contains("determinism   ok"), "{stdout}");
    // The second run took one thread.
    assert!(stdout.contains("on 1 thread(s)"), "{stdout}");
    for f in [
        "scenario.toml",
        "peers.csv",
        "stalls.csv",
        "links.csv",
        "waits.csv",
        "traced_flows.csv",
        "link_stats.csv",
        "progress.csv",
        "flows.csv",
        "rates.csv",
        "summary.json",
        "report.html",
        "plots/completion_cdf.svg",
        "plots/progress.svg",
        "plots/queue_ccdf.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // No flow traced: no queueing-delay plot.
    assert!(!out.join("plots/wait_ccdf.svg").exists());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["completed"], 5);
    assert_eq!(summary["seed"], 7);
    let hash = summary["trace_hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert!(stdout.contains(hash));
    // The messages sent, by type: DATA carried at least the 5 downloads
    // (200 KB each), and the overhead line names the largest shares.
    // Dropped datagrams, by why: every reason is reported, each a count.
    for why in [
        "too_short",
        "unknown_channel",
        "undecodable",
        "not_a_handshake",
        "refused",
        "malformed",
    ] {
        assert!(summary["datagrams_dropped"][why].is_u64(), "{why}");
    }
    let data = summary["messages_sent"]["DATA"]["bytes"].as_u64().unwrap();
    assert!(data >= 5 * 200_000, "{data}");
    assert!(
        summary["messages_sent"]["HAVE"]["messages"]
            .as_u64()
            .unwrap()
            > 0
    );
    assert!(
        stdout.contains("bytes sent") && stdout.contains("DATA "),
        "{stdout}"
    );
    // The recorded seeder uplink has occupancy samples.
    let links = std::fs::read_to_string(out.join("links.csv")).unwrap();
    assert!(links.lines().count() > 100);
}

#[test]
fn run_takes_overrides() {
    let (dir, scenario) = small_scenario();
    let out = dir.path().join("out");
    let o = ppspp(&[
        "lab",
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--set",
        "peers.leechers.count=2",
        "--set",
        "peers.leechers.arrival.times=[\"1s\", \"2s\"]",
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("(2 leechers, 2 completed)"), "{stdout}");
    // The scenario as run carries the overrides.
    let run = std::fs::read_to_string(out.join("scenario.toml")).unwrap();
    assert!(run.contains("count = 2"), "{run}");
    let bad = ppspp(&["lab", "run", scenario.to_str().unwrap(), "--set", "nokey"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("KEY=VALUE"));
}

#[test]
fn scenario_errors_name_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("bad.toml");
    std::fs::write(
        &scenario,
        SMALL.replace("queue = \"200ms\"", "queue = \"200ms\"\nspeed = 3"),
    )
    .unwrap();
    let o = ppspp(&["lab", "run", scenario.to_str().unwrap()]);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    let line = SMALL
        .lines()
        .position(|l| l == "queue = \"200ms\"")
        .unwrap()
        + 2;
    assert!(err.contains(&format!("bad.toml:{line}:")), "{err}");
    assert!(err.contains("unknown field `speed`"), "{err}");
    assert!(err.contains("hint:"), "{err}");
}

#[test]
fn sweep_runs_the_grid_and_writes_one_table() {
    let (dir, scenario) = small_scenario();
    let out = dir.path().join("sweep");
    let o = ppspp(&[
        "lab",
        "sweep",
        scenario.to_str().unwrap(),
        "--set",
        "content.size=100KB,200KB",
        "--seeds",
        "2",
        "--jobs",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 5, "{table}");
    assert!(rows[0].starts_with("run,content.size,seed,leechers,completed"));
    assert!(rows[1].starts_with("0,100KB,1,5,5,"), "{table}");
    assert!(rows[4].starts_with("3,200KB,2,5,5,"), "{table}");
    // Different seeds, different traces.
    let hash = |r: &str| r.rsplit(',').next().unwrap().to_string();
    assert_ne!(hash(rows[1]), hash(rows[2]));
    // The sweep's report: one summary row per grid point, and
    // `ppspp lab report` writes it again.
    let summary = std::fs::read_to_string(out.join("sweep_summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 3, "{summary}");
    assert!(
        summary.lines().nth(1).unwrap().starts_with("100KB,2,"),
        "{summary}"
    );
    std::fs::remove_file(out.join("sweep.html")).unwrap();
    let o = ppspp(&["lab", "report", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert!(html.contains("<td>200KB</td>"), "{html}");
}

/// scenarios/live-small.toml cut to 3 viewers and 10 s of stream, written
/// into `dir`.
fn tiny_live_scenario(dir: &std::path::Path) -> std::path::PathBuf {
    let text = include_str!("../../../scenarios/live-small.toml")
        .replace("count = 20", "count = 3")
        .replace("duration = \"60s\"", "duration = \"10s\"")
        .replace("duration = \"75s\"", "duration = \"20s\"")
        .replace("spread = \"5s\"", "spread = \"1s\"");
    let scenario = dir.join("live.toml");
    std::fs::write(&scenario, text).unwrap();
    scenario
}

#[test]
fn a_live_sweep_tabulates_lag_continuity_and_source_upload() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = tiny_live_scenario(dir.path());
    let out = dir.path().join("out");
    let o = ppspp(&[
        "lab",
        "sweep",
        scenario.to_str().unwrap(),
        "--seeds",
        "1",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Each run's row carries its summary's `live` figures.
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let head: Vec<&str> = table.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = table.lines().nth(1).unwrap().split(',').collect();
    let cell = |name: &str| {
        let i = head.iter().position(|h| *h == name).unwrap();
        row[i].parse::<f64>().unwrap()
    };
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("runs/run0000/summary.json")).unwrap(),
    )
    .unwrap();
    let live = &summary["live"];
    let near = |a: f64, b: f64| (a - b).abs() < 1e-3;
    assert!(near(
        cell("live_continuity"),
        live["continuity"]["mean"].as_f64().unwrap()
    ));
    assert!(near(
        cell("lag_p50_s"),
        live["lag_s"]["p50"].as_f64().unwrap()
    ));
    assert!(near(
        cell("lag_p95_s"),
        live["lag_s"]["p95"].as_f64().unwrap()
    ));
    assert!(near(
        cell("skips_per_viewer"),
        live["skips_per_viewer"].as_f64().unwrap()
    ));
    assert!(near(
        cell("source_upload_x"),
        live["source_upload_x"].as_f64().unwrap()
    ));
    // The summary table and the page show them per grid point.
    let means = std::fs::read_to_string(out.join("sweep_summary.csv")).unwrap();
    let head: Vec<&str> = means.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = means.lines().nth(1).unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == "lag_p95_s_mean").unwrap();
    assert!(near(row[i].parse().unwrap(), cell("lag_p95_s")), "{means}");
    let html = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert!(html.contains("live lag p95 (s)"), "{html}");
}

#[test]
fn a_live_run_prints_its_lag_continuity_and_source_upload() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = tiny_live_scenario(dir.path());
    let out = dir.path().join("out");
    let o = ppspp(&[
        "lab",
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let live = stdout
        .lines()
        .find(|l| l.starts_with("live          lag s p50 "))
        .unwrap_or_else(|| panic!("no live line: {stdout}"));
    assert!(live.contains("continuity mean "), "{live}");
    let bytes = stdout
        .lines()
        .find(|l| l.starts_with("live bytes "))
        .unwrap_or_else(|| panic!("no live bytes line: {stdout}"));
    // The same figures as summary.json's `live` object.
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let x = summary["live"]["source_upload_x"].as_f64().unwrap();
    let delivery = stdout
        .lines()
        .find(|l| l.starts_with("live delivery "))
        .unwrap_or_else(|| panic!("no live delivery line: {stdout}"));
    let p95 = summary["live"]["delivery_s"]["p95"].as_f64().unwrap();
    assert!(
        delivery.ends_with(&format!("p95 {p95:.2}")),
        "{delivery} vs {p95}"
    );
    assert!(
        bytes.contains(&format!("sent {x:.2}x the stream")),
        "{bytes} vs {x}"
    );
}
