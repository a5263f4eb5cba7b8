//! An emulated run writes the results folder and the report a simulated
//! run writes (`ppspp_lab::results::RUN_FILES`), from its real nodes'
//! reports and the shaper's model, with the emulation's own figures.

use ppspp_emu::{emulate, results};
use ppspp_lab::report::REPORT_HTML;
use ppspp_lab::results::RUN_FILES;
use ppspp_lab::scenario::parse;

mod common;
use common::column;

/// The shared flash crowd as four viewers of a 2 Mbit/s video, 300 kB, on
/// a 6 Mbit/s seeder, its uplink queue and its bytes sent recorded, and
/// each viewer's time to hold the first 100 kB.
fn scenario() -> String {
    let text = common::SCENARIO
        .replace("size = \"400KB\"", "size = \"300KB\"")
        .replace("up = \"4Mbit/s\"", "up = \"6Mbit/s\"")
        .replace("count = 6", "count = 4");
    format!(
        "{text}player = {{ bitrate = \"2Mbit/s\", prebuffer = \"1s\", rebuffer = \"1s\" }}\n\
         [record]\ninterval = \"250ms\"\nqueues = [\"seeder.up\"]\nrates = [\"seeder\"]\nstartup_bytes = \"100KB\"\n"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emulated_run_writes_the_simulators_folder_and_report() {
    let text = scenario();
    let outcome = emulate::run(parse(&text, "emu-folder.toml").unwrap(), 5)
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (summary, peers) = results::write(dir.path(), &text, &outcome).unwrap();
    for f in RUN_FILES.iter().chain([&REPORT_HTML]) {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    assert_eq!((summary.leechers, summary.completed), (4, 4));
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).unwrap();

    // peers.csv: every viewer completed, started playing, and got the
    // whole content, some of it from the seeder.
    let peers_csv = read("peers.csv");
    assert_eq!(peers_csv.lines().count(), 6, "{peers_csv}");
    let bytes = column(&peers_csv, "bytes_down");
    let from_seeder = column(&peers_csv, "bytes_down_from_seeders");
    let startup = column(&peers_csv, "startup_s");
    let first_100kb = column(&peers_csv, "startup_bytes_s");
    let download = column(&peers_csv, "download_s");
    for i in 1..5 {
        let (t, all): (f64, f64) = (
            first_100kb[i].parse().unwrap(),
            download[i].parse().unwrap(),
        );
        assert!(t > 0.0 && t < all, "{peers_csv}");
        assert_eq!(bytes[i], "300000", "{peers_csv}");
        assert!(from_seeder[i].parse::<u64>().unwrap() > 0, "{peers_csv}");
        assert!(!startup[i].is_empty(), "{peers_csv}");
    }
    // The seeder sent at least what the viewers verified from it (more by
    // the duplicates and what was in flight at the end).
    let sent: u64 = column(&peers_csv, "bytes_up")[0].parse().unwrap();
    let got: u64 = from_seeder[1..]
        .iter()
        .map(|b| b.parse::<u64>().unwrap())
        .sum();
    assert!(sent >= got && got > 0, "{sent} {got}");
    assert!(peers.iter().all(|p| p.messages_sent.total_bytes() > 0));

    // progress.csv: sampled every 250 ms, ending with everyone complete.
    let progress = read("progress.csv");
    let rows: Vec<&str> = progress.lines().skip(1).collect();
    assert!(rows.len() >= 4, "{progress}");
    let last: Vec<&str> = rows.last().unwrap().split(',').collect();
    assert_eq!(&last[1..4], ["5", "4", "4"], "{progress}");

    // links.csv: the recorded queue's samples; link_stats.csv: the model's
    // counters, the seeder's uplink having carried the content at least
    // once.
    assert!(read("links.csv")
        .lines()
        .skip(1)
        .all(|l| l.contains(",seeder.up,")));
    assert!(read("links.csv").lines().count() > 10);
    let stats = read("link_stats.csv");
    let out: u64 = column(&stats, "bytes_out")[0].parse().unwrap();
    assert!(out >= 300_000, "{stats}");

    // rates.csv: the seeder's bytes the model delivered, growing to at
    // least the content.
    let rates = read("rates.csv");
    let sent: Vec<u64> = rates
        .lines()
        .skip(1)
        .map(|l| {
            assert!(l.contains(",ppspp:seeder[0],"), "{l}");
            l.rsplit(',').next().unwrap().parse().unwrap()
        })
        .collect();
    assert!(
        sent.len() >= 4 && sent.windows(2).all(|w| w[0] <= w[1]),
        "{rates}"
    );
    assert!(*sent.last().unwrap() >= 300_000, "{rates}");

    // summary.json: the emulation's figures, consistent with the model's.
    let json: serde_json::Value = serde_json::from_str(&read("summary.json")).unwrap();
    let e = &json["emulation"];
    assert_eq!(e["datagrams_offered"], json["packets"]["sent"]);
    assert_eq!(e["datagrams_unknown"], 0);
    assert!(e["timer_wakeups"].as_u64().unwrap() > 0, "{e}");
    assert!(e["cpu_s"].as_f64().unwrap() > 0.0, "{e}");
    assert!(json["trace_hash"].as_str().unwrap().is_empty());
    let report = read(REPORT_HTML);
    assert!(report.contains("emulated in real time"));
    assert!(!report.contains("Trace hash"));
}
