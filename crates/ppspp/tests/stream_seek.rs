//! A request far ahead of the download moves the playhead there: with the
//! seeder limited to 4 Mbit/s, a range at 80 % of a 60 s video gets its
//! first byte within 2 s, long before the download would reach it in order.

mod common;

use std::io::Read;
use std::time::{Duration, Instant};

use common::gateway::{make_video, send, stream};
use common::*;

#[test]
fn a_range_at_80_percent_is_fetched_first() {
    let dir = tempfile::tempdir().unwrap();
    let video = make_video(dir.path(), 60);
    let len = std::fs::metadata(&video).unwrap().len();
    let seeder = seed(&video, &["--upload-limit", "4Mbit/s"]);
    let s = stream(&seeder.url, &dir.path().join("out.mp4"), &[]);
    // Let the download get going from the start, as a player's would.
    let t = Instant::now();
    while s.stats()["chunks_verified"].as_u64().unwrap_or(0) == 0 {
        assert!(t.elapsed() < Duration::from_secs(30), "no chunk arrived");
        std::thread::sleep(Duration::from_millis(50));
    }
    // A player reading from the start, still reading when it seeks: its
    // older response must not pull the playhead back.
    let (mut old, status, _) = send(&s.addr(), "GET", &s.path(), &[]);
    assert_eq!(status, 200);
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while old.read(&mut buf).is_ok_and(|n| n > 0) {}
    });
    std::thread::sleep(Duration::from_millis(500));

    let at = len * 8 / 10;
    let sent = Instant::now();
    let (mut body, status, _) = send(
        &s.addr(),
        "GET",
        &s.path(),
        &[("Range", &format!("bytes={at}-"))],
    );
    assert_eq!(status, 206);
    let mut first = [0u8; 1];
    body.read_exact(&mut first).expect("first byte");
    let took = sent.elapsed();
    let st = s.stats();
    assert!(
        took < Duration::from_secs(2),
        "first byte after {took:?}; stats {st}"
    );
    // Not there because everything was: the download is far from done.
    let (have, total) = (
        st["chunks_verified"].as_u64().unwrap(),
        st["chunks_total"].as_u64().unwrap(),
    );
    assert!(have < total, "the download finished first: {st}");
    let video_bytes = std::fs::read(&video).unwrap();
    assert_eq!(first[0], video_bytes[at as usize]);
    // The playhead is at the most recent request's position, not where
    // the older response is.
    assert!(st["playhead"]["byte"].as_u64().unwrap() >= at, "{st}");
    eprintln!("first byte at 80 % after {took:?}");
    drop(s);
    let _ = reader.join();
}
