//! Live viewers (RFC 7574 §6.1): a source makes a stream at its bitrate,
//! every viewer hooks in near the live edge, plays with a bounded lag to
//! the end of the stream, its bytes add up, and the figures reach the
//! results folder and the report; the same seed gives the same run.

use ppspp_core::ChunkSize;
use ppspp_lab::live::MediaClock;
use ppspp_lab::run::{run, Outcome};
use ppspp_lab::scenario::Role;
use ppspp_lab::sweep::apply;

const SCENARIO: &str = include_str!("../../../scenarios/live-small.toml");
const STREAM_S: u64 = 20;

/// `live-small`, smaller: 5 viewers of a 20 s stream.
fn small() -> String {
    let mut text = apply(SCENARIO, "peers.viewers.count", "5").unwrap();
    text = apply(&text, "live.duration", &format!("{STREAM_S}s")).unwrap();
    apply(&text, "duration", "30s").unwrap()
}

fn run_small(out: Option<&std::path::Path>) -> Outcome {
    run(&small(), "live-small.toml", Some(1), out, |_| {}).unwrap()
}

#[test]
fn viewers_hook_in_play_the_stream_and_their_bytes_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_small(Some(dir.path()));
    let clock = MediaClock::new(ChunkSize::DEFAULT, 1_000_000);
    // The stream: 20 s of 8192 µs chunks, whole 32-chunk munros.
    let made = clock.chunks_in_us(STREAM_S * 1_000_000) / 32 * 32;
    let source = o.peers.iter().find(|p| p.role == Role::Seeder).unwrap();
    assert_eq!(source.live.as_ref().unwrap().made, made);
    let viewers: Vec<_> = o.peers.iter().filter(|p| p.role == Role::Leecher).collect();
    assert_eq!(viewers.len(), 5);
    let mut from_source = 0;
    for p in &viewers {
        let play = p.live.as_ref().unwrap().playback.as_ref().unwrap();
        let hook = play.hook_in.expect("every viewer hooks in");
        // Near the live edge when it joined, a few munros behind it.
        let edge = clock.chunks_in_us((p.join_s.unwrap() * 1e6) as u64);
        assert!(hook <= edge && edge - hook <= 8 * 32, "{hook} vs {edge}");
        assert!(play.startup.is_some() && play.ended.is_some(), "{play:?}");
        // Played from the hook-in to the end: what it did not play it
        // skipped.
        assert_eq!(play.played + play.skipped, made - hook, "{play:?}");
        let c = play.continuity(clock).unwrap();
        assert!(c >= 0.99, "continuity {c}");
        let lag_max = *play.lags_ms.last().unwrap();
        assert!(lag_max <= 5_000, "lag {lag_max} ms");
        assert!(p.bytes_down >= play.played * 1024);
        assert_eq!(
            p.bytes_down,
            p.bytes_down_from_seeders + p.bytes_down_from_peers
        );
        // Every 16th chunk it verified is timed from the source making
        // it. None can come sooner than its munro's signature: a sampled
        // chunk is the 1st or the 17th of its 32-chunk munro, so it waits
        // for 15 more chunks to be made at least (§6.1.2).
        let verified_sampled = (hook.div_ceil(16)..made.div_ceil(16)).count();
        assert!(play.delivery_ms.len() >= verified_sampled - 1, "{play:?}");
        let munro_wait_ms = (clock.span_us(15) / 1000) as u32;
        assert!(
            play.delivery_ms[0] >= munro_wait_ms,
            "{:?}",
            play.delivery_ms
        );
        // A chunk plays after it arrived: the lag is no less.
        let median = play.delivery_ms[play.delivery_ms.len() / 2];
        assert!(median <= play.lags_ms[play.lags_ms.len() / 2], "{play:?}");
        from_source += p.bytes_down_from_seeders;
        assert!(p.complete_s.is_some(), "ending the stream completes it");
    }
    // What the viewers got from the source, the source sent (the stream
    // ended: nothing is in flight).
    assert!(from_source <= source.bytes_up && from_source * 100 >= source.bytes_up * 95);
    let live = o.live.as_ref().expect("a live summary");
    assert_eq!(
        (live.viewers, live.hooked, live.started, live.ended),
        (5, 5, 5, 5)
    );
    let x = source.bytes_up as f64 / (made as f64 * 1024.0);
    assert!((live.source_upload_x - x).abs() < 1e-9);
    assert!(live.lag_s[1] <= 5.0, "{live:?}");
    assert!(live.delivery_s[0] > 0.1 && live.delivery_s[0] <= live.delivery_s[1]);
    // The VoD-style playback summary counts the live viewers too.
    let playback = o.summary.playback.as_ref().unwrap();
    assert_eq!((playback.viewers, playback.started), (5, 5));
    // The results folder and the report carry the live figures.
    let csv = std::fs::read_to_string(dir.path().join("live.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 6);
    assert!(csv.lines().nth(1).unwrap().contains(",source,"));
    let json = std::fs::read_to_string(dir.path().join("summary.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["live"]["viewers"], 5);
    assert_eq!(v["live"]["delivery_s"]["p95"], live.delivery_s[1]);
    // live.csv: a viewer's delivery quantiles, in the last two columns.
    let row: Vec<&str> = csv.lines().nth(2).unwrap().split(',').collect();
    let p50: f64 = row[row.len() - 2].parse().unwrap();
    assert!(p50 > 0.1 && p50 <= row[row.len() - 1].parse::<f64>().unwrap());
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("Live lag p95 (s)") && html.contains("Live source upload"));
    assert!(html.contains("Live delivery delay p95 (s)"));
}

#[test]
fn a_live_run_is_deterministic() {
    let (a, b) = (run_small(None), run_small(None));
    assert_eq!(a.summary.trace_hash, b.summary.trace_hash);
    assert_eq!(a.csv, b.csv);
    assert_eq!(a.live, b.live);
}
