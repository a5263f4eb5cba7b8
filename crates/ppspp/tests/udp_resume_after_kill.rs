//! A leecher killed with SIGKILL halfway resumes from its checkpoint: the
//! second run completes and receives well under the whole file again.

mod common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use common::*;

#[test]
fn killed_leecher_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let len = 8_000_000usize;
    let data = random_bytes(len, 77);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--upload-limit", "1MB/s"]);
    let out = dir.path().join("out");
    let mut first = spawn_get(&seeder.url, &out, &["--checkpoint-interval", "0.2"]);
    // Progress lines (stderr is not a terminal) say how far it got.
    let stderr = first.0.stderr.take().unwrap();
    let started = Instant::now();
    let mut pct = 0.0f64;
    for line in BufReader::new(stderr).lines().map_while(Result::ok) {
        if let Some(p) = line
            .split('(')
            .nth(1)
            .and_then(|r| r.split('%').next())
            .and_then(|p| p.parse().ok())
        {
            pct = p;
        }
        if pct >= 40.0 || started.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    assert!((40.0..100.0).contains(&pct), "first run got to {pct}%");
    first.0.kill().unwrap(); // SIGKILL: no chance to checkpoint on the way out
    first.0.wait().unwrap();
    let st = dir.path().join("stats.json");
    let second = get(&seeder.url, &out, &["--stats-json", st.to_str().unwrap()]);
    assert_ok(&second, "second run");
    assert!(
        std::fs::read(&out).unwrap() == data,
        "content differs after resume"
    );
    let s = stats(&st);
    let received = s["payload_bytes_received"].as_u64().unwrap();
    assert!(s["chunks_at_start"].as_u64().unwrap() > 0, "{s}");
    assert!(
        (received as f64) < 0.6 * len as f64,
        "second run received {received} of {len}: {s}"
    );
}

#[test]
fn interrupted_leecher_checkpoints_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let len = 6_000_000usize;
    let data = random_bytes(len, 78);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--upload-limit", "1MB/s"]);
    let out = dir.path().join("out");
    // A long checkpoint interval: only the clean shutdown writes one.
    let mut first = spawn_get(&seeder.url, &out, &["--checkpoint-interval", "600"]);
    std::thread::sleep(Duration::from_millis(3000));
    let pid = first.0.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let status = first.0.wait().unwrap();
    let mut err = String::new();
    if let Some(mut e) = first.0.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    assert!(
        !status.success(),
        "an interrupted download is not a success"
    );
    assert!(err.contains("interrupted"), "{err}");
    assert!(
        ppspp_store::checkpoint_path(&out).exists(),
        "no checkpoint on Ctrl-C"
    );
    let st = dir.path().join("stats.json");
    let second = get(&seeder.url, &out, &["--stats-json", st.to_str().unwrap()]);
    assert_ok(&second, "resumed run");
    assert!(
        std::fs::read(&out).unwrap() == data,
        "content differs after resume"
    );
    let s = stats(&st);
    let at_start = s["chunks_at_start"].as_u64().unwrap();
    assert!(at_start > 1000, "resumed from only {at_start} chunks: {s}");
    assert!(
        s["payload_bytes_received"].as_u64().unwrap() < len as u64,
        "{s}"
    );
}
