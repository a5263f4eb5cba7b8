//! A real player end to end: ffmpeg decodes an H.264 MP4 that `ppspp
//! stream` serves over HTTP while it downloads it from a seeder.

mod common;

use std::process::Command;

use common::gateway::{make_video, stream};
use common::*;

#[test]
fn ffmpeg_decodes_the_stream_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let video = make_video(dir.path(), 60);
    // Limited so that ffmpeg reads while the download is under way.
    let seeder = seed(&video, &["--upload-limit", "40Mbit/s"]);
    let out = dir.path().join("out.mp4");
    let s = stream(&seeder.url, &out, &[]);
    let res = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i", &s.url, "-f", "null", "-"])
        .output()
        .expect("run ffmpeg");
    let stderr = String::from_utf8_lossy(&res.stderr);
    assert!(res.status.success(), "ffmpeg failed: {stderr}");
    assert!(stderr.trim().is_empty(), "ffmpeg complained: {stderr}");
    // Everything it read was verified, and it read everything.
    let st = s.stats();
    assert_eq!(st["complete"], true, "{st}");
    assert_eq!(st["chunks_verified"], st["chunks_total"], "{st}");
    assert!(std::fs::read(&out).unwrap() == std::fs::read(&video).unwrap());
}
