//! Live interop between the nodes themselves and libswift, both ways
//! (issue 24, item 5): a libswift client (`swift -t … -k`) hooks in on
//! `ppspp live --signatures libswift` and stores the stream as it was fed;
//! `ppspp stream tswift://…` receives a libswift source's stream and
//! serves its HLS segments byte for byte as libswift was fed. Runs
//! whenever `../shared/tools/libswift/swift` is there; says so and passes
//! when it is not.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use common::gateway::Streamer;
use common::{bin, first_line, libswift, Proc};

/// Byte `i` of the stream fed to a source.
fn stream_byte(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// Feeds 10 KiB of the stream every 50 ms into `stdin` until `stop` (a
/// libswift client ignores munros more than 30 s old: the feed goes on).
fn feed(mut stdin: impl Write + Send + 'static, stop: Arc<AtomicBool>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut at = 0u64;
        while !stop.load(Ordering::Relaxed) {
            let block: Vec<u8> = (at..at + 10_240).map(stream_byte).collect();
            if stdin.write_all(&block).and_then(|_| stdin.flush()).is_err() {
                return;
            }
            at += 10_240;
            std::thread::sleep(Duration::from_millis(50));
        }
    })
}

#[test]
fn a_libswift_client_hooks_in_on_ppspp_live_and_stores_the_stream() {
    let Some(swift) = libswift::binary() else {
        eprintln!("libswift not found beside the repository: live interop test skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(bin())
        .args([
            "live",
            "-",
            "--listen",
            "127.0.0.1:0",
            "--signatures",
            "libswift",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn ppspp live");
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = feed(child.stdin.take().unwrap(), stop.clone());
    let (_source, url) = first_line(child, "live", "ppspp://");
    let rest = url.trim_start_matches("ppspp://");
    let (addr, path) = rest.split_once('/').unwrap();
    let hex = path.split('?').next().unwrap();
    std::thread::sleep(Duration::from_secs(2));
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let log = dir.path().join("client.log");
    let log_file = std::fs::File::create(&log).unwrap();
    let client = Command::new(&swift)
        .args(["-t", addr, "-h", hex, "-k", "-o"])
        .arg(&out)
        .stdout(log_file.try_clone().unwrap())
        .stderr(log_file)
        .spawn()
        .expect("spawn libswift client");
    let _client = Proc(client);
    let file = out.join(&hex[..40]);
    // Wait until it stored 64 chunks past its hook-in.
    let start = Instant::now();
    let (hook, data) = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let hook = text
            .lines()
            .find_map(|l| l.split("hook-in on (0,").nth(1))
            .and_then(|r| r.split(')').next())
            .and_then(|n| n.parse::<u64>().ok());
        let data = std::fs::read(&file).unwrap_or_default();
        if let Some(h) = hook.filter(|h| data.len() as u64 >= (h + 64) * 1024) {
            break (h, data);
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "libswift stored {} bytes, hook-in {hook:?}; log tail:\n{}",
            data.len(),
            text.lines().rev().take(20).collect::<Vec<_>>().join("\n")
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    stop.store(true, Ordering::Relaxed);
    let _ = feeder.join();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        !text.contains("signature wrong"),
        "libswift refused our signature"
    );
    // It hooked in near the live edge, not at the start (2 s of feed are
    // about 400 chunks), and stored the stream as fed from there.
    assert!(hook > 0 && hook % 32 == 0, "hook-in at chunk {hook}");
    let from = (hook * 1024) as usize;
    let stored = &data[from..];
    let fed: Vec<u8> = (from as u64..data.len() as u64).map(stream_byte).collect();
    assert!(stored == &fed[..], "libswift stored other bytes than fed");
}

#[test]
fn ppspp_stream_receives_a_libswift_source_and_serves_it_as_fed() {
    let Some(swift) = libswift::binary() else {
        eprintln!("libswift not found beside the repository: live interop test skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let addr = libswift::free_addr();
    let url_file = dir.path().join("src.url");
    let mut child = Command::new(&swift)
        .args(["-i", "-", "-f"])
        .arg(dir.path().join("storage.dat"))
        .args(["-l", &addr, "-r"])
        .arg(&url_file)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn libswift live source");
    let stop = Arc::new(AtomicBool::new(false));
    let feeder = feed(child.stdin.take().unwrap(), stop.clone());
    let _source = Proc(child);
    let start = Instant::now();
    let hex = loop {
        let text = std::fs::read_to_string(&url_file).unwrap_or_default();
        if let Some(h) = text.trim().rsplit('/').next().filter(|h| h.len() > 40) {
            break h.to_string();
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no src.url");
        std::thread::sleep(Duration::from_millis(50));
    };
    let viewer = Command::new(bin())
        .args(["stream", &format!("tswift://{addr}/{hex}")])
        .args(["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        .args(["--bitrate", "1Mbit/s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn ppspp stream");
    let (proc, http) = first_line(viewer, "stream", "http://");
    let s = Streamer { proc, url: http };
    // The playlist's newest segment, then its bytes: segment n is the
    // stream's bytes from the 188-byte boundary at n × 250,000 (2 s of
    // the 1 Mbit/s given) to the next one.
    let playlist = loop {
        let r = s.request("GET", &format!("{}/live.m3u8", s.path()), &[]);
        if r.status == 200 {
            break String::from_utf8(r.body).unwrap();
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "no playlist: {}",
            r.status
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    let n: u64 = playlist
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("seg/")?.strip_suffix(".ts")?.parse().ok())
        .expect("a segment listed");
    let r = s.request("GET", &format!("{}/seg/{n}.ts", s.path()), &[]);
    assert_eq!(r.status, 200);
    let seg_start = |n: u64| (n * 250_000).div_ceil(188) * 188;
    let fed: Vec<u8> = (seg_start(n)..seg_start(n + 1)).map(stream_byte).collect();
    assert!(
        r.body == fed,
        "segment {n}: other bytes than libswift was fed"
    );
    let st = s.stats();
    assert_eq!(st["munros_refused"], 0, "{st}");
    stop.store(true, Ordering::Relaxed);
    let _ = feeder.join();
}
