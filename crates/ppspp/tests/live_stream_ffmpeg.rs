//! A live H.264 stream end to end with real ffmpeg (issue 24, item 3):
//! ffmpeg's test source → `ppspp live -` → a viewer → a second viewer that
//! fetches from the first → ffmpeg decodes 30 s of the second viewer's
//! endless MPEG-TS response without a decoding error; a viewer that joins
//! late starts near the live edge, its HLS playlist plays, and `/stats`
//! reports the lag behind the source.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::gateway::{require_ffmpeg, Streamer};
use common::{bin, first_line, Proc};

/// The live source: ffmpeg encoding its test pattern in real time (`-re`)
/// as MPEG-TS at about 1 Mbit/s, a keyframe a second, piped into
/// `ppspp live`. Returns both processes and the swarm URL.
fn live_source(secs: u32) -> (Proc, Proc, String) {
    require_ffmpeg();
    let mut ffmpeg = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i"])
        .arg(format!("testsrc=duration={secs}:size=320x240:rate=25"))
        .args([
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-tune",
            "zerolatency",
        ])
        .args(["-g", "25", "-b:v", "800k", "-pix_fmt", "yuv420p"])
        .args(["-f", "mpegts", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn ffmpeg");
    let input = ffmpeg.stdout.take().unwrap();
    let ffmpeg = Proc(ffmpeg);
    let child = Command::new(bin())
        .args(["live", "-", "--listen", "127.0.0.1:0"])
        .stdin(Stdio::from(input))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn ppspp live");
    let (source, url) = first_line(child, "live", "ppspp://");
    (ffmpeg, source, url)
}

/// `url` with its peer address replaced by `addr` (to chain viewers).
fn via(url: &str, addr: &str) -> String {
    let rest = url.trim_start_matches("ppspp://");
    let path = rest.split_once('/').unwrap().1;
    format!("ppspp://{addr}/{path}")
}

/// A viewer of `url`, its UDP port fixed so another viewer can fetch
/// from it.
fn viewer(url: &str, udp: u16, extra: &[&str]) -> Streamer {
    let child = Command::new(bin())
        .args([
            "stream",
            url,
            "--http",
            "127.0.0.1:0",
            "--bitrate",
            "1Mbit/s",
        ])
        .args(["--listen", &format!("127.0.0.1:{udp}")])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn stream");
    let (proc, url) = first_line(child, "stream", "http://");
    Streamer { proc, url }
}

/// A free UDP port on loopback.
fn free_udp_port() -> u16 {
    std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Runs ffmpeg on `input` for `secs` of media: whether it succeeded,
/// what it said on stderr, and the frames it decoded.
fn decode(input: &str, secs: u32) -> (bool, String, u64) {
    let res = Command::new("ffmpeg")
        .args([
            "-nostdin",
            "-v",
            "error",
            "-rw_timeout",
            "20000000",
            "-i",
            input,
        ])
        .args([
            "-t",
            &secs.to_string(),
            "-f",
            "null",
            "-progress",
            "pipe:1",
            "-",
        ])
        .output()
        .expect("run ffmpeg");
    let frames = String::from_utf8_lossy(&res.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("frame="))
        .filter_map(|n| n.trim().parse().ok())
        .max()
        .unwrap_or(0);
    (
        res.status.success(),
        String::from_utf8_lossy(&res.stderr).into_owned(),
        frames,
    )
}

#[test]
fn a_live_stream_reaches_chained_viewers_and_decodes_cleanly() {
    let (_ffmpeg, _source, url) = live_source(75);
    let source_addr = url
        .trim_start_matches("ppspp://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    assert!(url.contains("live=1"), "{url}");
    let a_port = free_udp_port();
    let a = viewer(&url, a_port, &[]);
    let b_port = free_udp_port();
    // The second viewer fetches from the first only (no peers from PEX).
    let b = viewer(
        &via(&url, &format!("127.0.0.1:{a_port}")),
        b_port,
        &["--no-pex"],
    );
    assert_ne!(source_addr, format!("127.0.0.1:{a_port}"));

    // 30 s of media from the second viewer, decoded as it arrives.
    let started = Instant::now();
    let (ok, stderr, _) = decode(&b.url, 30);
    assert!(ok, "ffmpeg failed on the chained viewer: {stderr}");
    assert!(stderr.trim().is_empty(), "decoding errors: {stderr}");
    // Live: 30 s of media take about 30 s to arrive, not less.
    assert!(
        started.elapsed() >= Duration::from_secs(25),
        "{:?}",
        started.elapsed()
    );
    let sb = b.stats();
    assert_eq!(sb["live"], true, "{sb}");
    assert_eq!(sb["munros_refused"], 0, "{sb}");
    // ffmpeg's ultrafast test pattern comes to about 550 kbit/s: some
    // 2,000 chunks of 1 KiB in 30 s.
    assert!(sb["chunks_verified"].as_u64().unwrap() > 1000, "{sb}");
    assert_eq!(
        sb["peers_connected"], 1,
        "the second viewer's one peer is the first: {sb}"
    );
    let sa = a.stats();
    assert!(
        sa["payload_bytes_sent"].as_u64().unwrap() > 0,
        "the first viewer relays to the second: {sa}"
    );

    // A viewer joining now, 30 s into the stream, starts near the edge,
    // not at the stream's start.
    let edge_then = sb["edge_chunk"].as_u64().unwrap();
    let c = viewer(&url, free_udp_port(), &[]);
    let (_, _, frames) = decode(&format!("{}/live.m3u8", c.url), 4);
    assert!(
        frames >= 50,
        "HLS from the late viewer: {frames} frames in 4 s"
    );
    let sc = c.stats();
    let hook = sc["hook_in_chunk"].as_u64().expect("hooked in");
    // The default delay is 3 s of the 1 Mbit/s given with --bitrate: 12
    // munros of 32 KiB, plus one.
    assert!(
        hook + 14 * 32 >= edge_then && hook <= edge_then + 200,
        "the late viewer hooked in at chunk {hook}, the edge was at {edge_then}: {sc}"
    );
    // Reading the endless stream shows the lag behind the source.
    let (ok, stderr, _) = decode(&c.url, 3);
    assert!(ok && stderr.trim().is_empty(), "{stderr}");
    let sc = c.stats();
    let lag = sc["lag_s"].as_f64().expect("a lag once something played");
    assert!((0.0..8.0).contains(&lag), "lag {lag} s: {sc}");
    // Segments no stream reaches are refused at once, whatever the number.
    for n in ["18446744073709551615", "99999999"] {
        let asked = Instant::now();
        let r = c.request("GET", &format!("{}/seg/{n}.ts", c.path()), &[]);
        assert_eq!(r.status, 404, "segment {n}");
        assert!(asked.elapsed() < Duration::from_secs(5));
    }
}
