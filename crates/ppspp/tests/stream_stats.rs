//! `/<id>/stats` reports the stream's state as JSON, and a player that goes
//! away in the middle of a response does not end the gateway.

mod common;

use std::io::Read;
use std::time::Duration;

use common::gateway::{send, stream};
use common::*;

#[test]
fn stats_and_a_player_that_hangs_up() {
    let dir = tempfile::tempdir().unwrap();
    let len = 4 * 1024 * 1024;
    let data = random_bytes(len, 21);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--upload-limit", "4Mbit/s"]);
    let mut s = stream(
        &seeder.url,
        &dir.path().join("out"),
        // A 5 s high-priority set: the flag is taken.
        &["--bitrate", "2Mbit/s", "--high-window", "5"],
    );

    // A player reads the start, then hangs up mid-response.
    let (mut body, status, _) = send(&s.addr(), "GET", &s.path(), &[]);
    assert_eq!(status, 200);
    let mut some = vec![0u8; 100_000];
    body.read_exact(&mut some).unwrap();
    assert!(some == data[..100_000]);
    drop(body);
    std::thread::sleep(Duration::from_millis(500));
    assert!(s.is_running(), "the gateway exited when the player hung up");

    let st = s.stats();
    for key in [
        "content_length",
        "chunk_size",
        "chunks_verified",
        "chunks_total",
        "complete",
        "buffer_ahead_bytes",
        "buffer_ahead_s",
        "download_rate_bytes_per_s",
        "upload_rate_bytes_per_s",
        "peers_connected",
        "stalls",
        "stall_time_s",
        "player",
        "waits",
        "wait_time_s",
    ] {
        assert!(!st[key].is_null(), "{key} missing: {st}");
    }
    // The player model watches from the first request.
    let player = &st["player"];
    let state = player["state"].as_str().unwrap_or_default();
    assert!(
        ["prebuffering", "playing", "stalled", "ended"].contains(&state),
        "{st}"
    );
    assert_eq!(player["stalls"], st["stalls"]);
    assert!(player["playhead_chunk"].as_u64().is_some(), "{st}");
    assert_eq!(st["content_length"], len as u64);
    assert_eq!(st["chunk_size"], 1024);
    assert_eq!(st["chunks_total"], (len / 1024) as u64);
    assert_eq!(st["complete"], false, "{st}");
    assert_eq!(st["peers_connected"], 1);
    assert_eq!(st["bitrate_bps"], 2_000_000);
    assert!(
        st["download_rate_bytes_per_s"].as_f64().unwrap() > 0.0,
        "{st}"
    );
    assert!(st["playhead"]["byte"].as_u64().unwrap() >= 100_000, "{st}");
    assert_eq!(
        st["playhead"]["chunk"].as_u64().unwrap(),
        st["playhead"]["byte"].as_u64().unwrap() / 1024
    );
    // Buffer seconds are buffer bytes at the bitrate.
    let ahead = st["buffer_ahead_bytes"].as_f64().unwrap();
    let secs = st["buffer_ahead_s"].as_f64().unwrap();
    assert!((secs - ahead * 8.0 / 2e6).abs() < 1e-6, "{st}");

    // Still serving: a later request gets the right bytes.
    let r = s.request("GET", &s.path(), &[("Range", "bytes=2000000-2000999")]);
    assert_eq!(r.status, 206);
    assert!(r.body == data[2_000_000..2_001_000]);
    assert!(s.is_running());
    let st = s.stats();
    assert!(st["stall_time_s"].as_f64().unwrap() >= 0.0);
}
