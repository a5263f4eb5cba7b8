//! A leecher killed with SIGKILL halfway, or interrupted with SIGINT,
//! resumes from its checkpoint: the second run completes and receives only
//! what the checkpoint did not hold (give or take a few duplicates). The
//! checks hold at any speed: a CI machine under load once ran these
//! downloads ten times slower than usual, and thresholds on time or on a
//! share of the file then failed while resuming worked.

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
    let stderr = first.0.stderr.take().unwrap();
    let (pct, _) = progress_until(stderr, 40.0);
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
    // Killed at 40 % or more with a checkpoint every 0.2 s: it resumes
    // from a good part of the file, and fetches only the rest.
    let (at_start, total) = resumed_only_the_rest(&s, len);
    assert!(
        at_start * 5 >= total,
        "resumed from only {at_start} of {total}: {s}"
    );
}

/// Checks that a resumed run received only the chunks its checkpoint did
/// not hold, give or take 5 % and a few chunks of duplicates; returns the
/// chunks it started with and the chunks in all.
fn resumed_only_the_rest(s: &serde_json::Value, len: usize) -> (u64, u64) {
    let at_start = s["chunks_at_start"].as_u64().unwrap();
    let total = s["chunks_total"].as_u64().unwrap();
    let received = s["payload_bytes_received"].as_u64().unwrap();
    assert!(at_start > 0 && at_start < total, "{s}");
    let missing = (len as u64).div_ceil(total) * (total - at_start);
    assert!(
        received <= missing + missing / 20 + 16 * 1024,
        "received {received} bytes, {missing} were missing: {s}"
    );
    (at_start, total)
}

/// Reads `get`'s progress lines (stderr is not a terminal) until it has
/// `pct` % or more (or a minute passed); returns the last share seen and
/// the lines read.
fn progress_until(stderr: impl std::io::Read, pct: f64) -> (f64, Vec<String>) {
    let started = Instant::now();
    let (mut got, mut lines) = (0.0f64, Vec::new());
    let mut reader = BufReader::new(stderr);
    let mut line = String::new();
    while reader.read_line(&mut line).unwrap_or(0) > 0 {
        if let Some(p) = line
            .split('(')
            .nth(1)
            .and_then(|r| r.split('%').next())
            .and_then(|p| p.parse().ok())
        {
            got = p;
        }
        lines.push(std::mem::take(&mut line));
        if got >= pct || started.elapsed() > Duration::from_secs(60) {
            break;
        }
    }
    (got, lines)
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
    let mut stderr = first.0.stderr.take().unwrap();
    let (pct, _) = progress_until(&mut stderr, 20.0);
    assert!((20.0..100.0).contains(&pct), "first run got to {pct}%");
    let pid = first.0.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let status = first.0.wait().unwrap();
    let mut err = String::new();
    {
        use std::io::Read;
        let _ = stderr.read_to_string(&mut err);
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
    // The clean shutdown checkpointed at least what the progress line
    // showed before the signal.
    let (at_start, total) = resumed_only_the_rest(&s, len);
    assert!(
        at_start as f64 >= total as f64 * pct / 100.0 - 1.0,
        "resumed from {at_start} of {total} after {pct}%: {s}"
    );
}
