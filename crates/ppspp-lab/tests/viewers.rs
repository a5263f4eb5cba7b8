//! Viewers: leechers with a player watch the video while it downloads, and
//! their startup delay, stalls and continuity reach the results. The
//! streaming pickers follow the playhead, so viewers start long before
//! their download completes; rarest-first ignores it, so its viewers wait.

use ppspp_lab::run::{run, Outcome};
use ppspp_lab::scenario::Role;
use ppspp_lab::sweep::apply;

const SCENARIO: &str = include_str!("../../../scenarios/vod-small.toml");

/// The example scenario, smaller: 8 viewers of a 20 s video.
fn small(algorithm: &str) -> String {
    let mut text = apply(SCENARIO, "peers.viewers.count", "8").unwrap();
    text = apply(&text, "content.size", "2500000B").unwrap();
    apply(&text, "peers.viewers.algorithm", algorithm).unwrap()
}

fn run_small(algorithm: &str) -> Outcome {
    run(&small(algorithm), "vod-small.toml", Some(1), None, |_| {}).unwrap()
}

#[test]
fn viewers_report_startup_stalls_and_continuity() {
    for algorithm in ["linear", "std-vod"] {
        let o = run_small(algorithm);
        let viewers: Vec<_> = o.peers.iter().filter(|p| p.role == Role::Leecher).collect();
        assert_eq!(viewers.len(), 8);
        for p in &viewers {
            let play = p.playback.expect("a viewer has playback metrics");
            let startup = play
                .startup_delay
                .expect("every viewer starts")
                .as_secs_f64();
            let download = p.complete_s.unwrap() - p.join_s.unwrap();
            // Streaming: playback starts well before the download is done
            // (the prebuffer is a quarter of this short video).
            assert!(
                startup < 0.8 * download,
                "{algorithm}: {startup} of {download}"
            );
            let ci = play.continuity().expect("chunks were due");
            assert!((0.0..=1.0).contains(&ci), "{algorithm}: {ci}");
            // 20 s of video at 1 Mbit/s in 1 KiB chunks, all due by the end.
            assert_eq!(play.chunks_due, 2442, "{algorithm}");
        }
        let seeder = o.peers.iter().find(|p| p.role == Role::Seeder).unwrap();
        assert!(seeder.playback.is_none());
        let summary = o.summary.playback.as_ref().expect("a playback summary");
        assert_eq!((summary.viewers, summary.started), (8, 8));
        let peers_csv = &o
            .csv
            .iter()
            .find(|(name, _)| *name == "peers.csv")
            .unwrap()
            .1;
        let header = peers_csv.lines().next().unwrap();
        assert!(
            header.ends_with(
                "startup_s,stalls,stall_s,continuity,seeks,seek_waits,seek_wait_s,startup_bytes_s"
            ),
            "{header}"
        );
        let seeder_row = peers_csv.lines().nth(1).unwrap();
        assert!(seeder_row.ends_with(",,,,,,,"), "{seeder_row}");
    }
}

#[test]
fn rarest_first_ignores_the_playhead_and_starts_late() {
    let startup = |o: &Outcome| o.summary.playback.as_ref().unwrap().startup_s[0];
    let vod = startup(&run_small("std-vod"));
    let rarest = startup(&run_small("rarest-first"));
    assert!(
        rarest > 2.0 * vod,
        "rarest-first {rarest} s, std-vod {vod} s"
    );
}

#[test]
fn a_player_on_a_seeder_is_refused() {
    let text = SCENARIO.replacen(
        "role = \"seeder\"",
        "role = \"seeder\"\nplayer = { bitrate = \"1Mbit/s\" }",
        1,
    );
    let err = run(&text, "vod-small.toml", Some(1), None, |_| {})
        .err()
        .expect("refused");
    let msg = err.to_string();
    assert!(msg.contains("not a leecher"), "{msg}");
    assert!(msg.contains("vod-small.toml"), "{msg}");
}

/// A group's `high_window` sizes std-vod's in-order set: one shorter than
/// the prebuffer leaves most of the prebuffer to the rarest-first sets, so
/// viewers start later.
#[test]
fn the_high_window_is_a_group_key() {
    let startup = |high: &str| {
        let text = apply(&small("std-vod"), "peers.viewers.high_window", high).unwrap();
        let o = run(&text, "vod-small.toml", Some(1), None, |_| {}).unwrap();
        o.summary.playback.as_ref().unwrap().startup_s[0]
    };
    let (whole, short) = (startup("5s"), startup("500ms"));
    eprintln!("mean startup: 5 s high set {whole} s, 0.5 s high set {short} s");
    assert!(short > 1.5 * whole, "0.5 s: {short} s, 5 s: {whole} s");
}

/// Viewers with a seek model seek, the seeks reach the per-peer results
/// and the summary, and the waits after them are kept apart from stalls.
#[test]
fn viewers_that_seek_count_seeks_apart_from_stalls() {
    let text = apply(
        &small("std-vod"),
        "peers.viewers.player.seek.per_minute",
        "6",
    )
    .unwrap();
    let o = run(&text, "vod-small.toml", Some(1), None, |_| {}).unwrap();
    let viewers: Vec<_> = o.peers.iter().filter_map(|p| p.playback).collect();
    assert_eq!(viewers.len(), 8);
    let seeks: u32 = viewers.iter().map(|v| v.seeks).sum();
    // 8 viewers, 20 s of video each at 6 a minute: 16 expected, but seeks
    // back replay content; a few at least.
    assert!(seeks >= 4, "{seeks} seeks");
    for v in &viewers {
        assert!(v.seek_waits <= v.seeks, "{v:?}");
        assert!(v.seek_wait_time.is_zero() == (v.seek_waits == 0), "{v:?}");
    }
    let s = o.summary.playback.as_ref().unwrap();
    assert_eq!(s.mean_seeks, f64::from(seeks) / 8.0);
    let waits: u32 = viewers.iter().map(|v| v.seek_waits).sum();
    assert_eq!(s.mean_seek_waits, f64::from(waits) / 8.0);
    // The same seed seeks the same; without seeks the run is another.
    let again = run(&text, "vod-small.toml", Some(1), None, |_| {}).unwrap();
    assert_eq!(again.summary.trace_hash, o.summary.trace_hash);
    let plain = run(&small("std-vod"), "vod-small.toml", Some(1), None, |_| {}).unwrap();
    assert_ne!(plain.summary.trace_hash, o.summary.trace_hash);
    let none = plain.summary.playback.as_ref().unwrap();
    assert_eq!((none.mean_seeks, none.mean_seek_waits), (0.0, 0.0));
}

#[test]
fn a_seek_rate_out_of_range_is_refused() {
    for rate in ["0", "-1", "61"] {
        let text = apply(SCENARIO, "peers.viewers.player.seek.per_minute", rate).unwrap();
        let msg = run(&text, "vod-small.toml", Some(1), None, |_| {})
            .err()
            .expect("refused")
            .to_string();
        assert!(msg.contains("seek rate"), "{rate}: {msg}");
        assert!(msg.contains("'viewers'"), "{rate}: {msg}");
    }
}
