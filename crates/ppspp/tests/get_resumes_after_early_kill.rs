//! A `get` killed (SIGKILL) shortly after it started writing, with the
//! default checkpoint settings, resumes from a checkpoint taken by
//! progress: the first comes after about 1 MiB verified, long before the
//! first interval (5 s). The rerun starts with what that checkpoint holds
//! and does not download it again.

mod common;

use std::os::unix::fs::MetadataExt;
use std::time::{Duration, Instant};

use common::*;

#[test]
fn killed_early_resumes_from_a_progress_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let len = 6_000_000usize;
    let data = random_bytes(len, 91);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--upload-limit", "1MB/s"]);
    let out = dir.path().join("out");
    let mut first = spawn_get(&seeder.url, &out, &[]);
    // Kill once 1.5 MiB reached the file (its blocks; the file is sparse
    // at full length once the size is known): about 1.5 s in at 1 MB/s.
    let start = Instant::now();
    loop {
        let written = std::fs::metadata(&out).map_or(0, |m| m.blocks() * 512);
        if written >= 3 << 19 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "get wrote {written} bytes in 60 s"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    first.0.kill().unwrap(); // SIGKILL: no checkpoint on the way out
    first.0.wait().unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "not an early kill: the interval's checkpoint may have come"
    );

    let st = dir.path().join("stats.json");
    let second = get(&seeder.url, &out, &["--stats-json", st.to_str().unwrap()]);
    assert_ok(&second, "second run");
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    let s = stats(&st);
    let at_start = s["chunks_at_start"].as_u64().unwrap();
    assert!(at_start >= 1024, "resumed from {at_start} chunks: {s}");
    // What the checkpoint held is not fetched again (a few duplicates of
    // the end game aside).
    let received = s["payload_bytes_received"].as_u64().unwrap();
    let missing = len as u64 - at_start * 1024;
    assert!(
        received <= missing + 64 * 1024,
        "received {received} with {missing} missing: {s}"
    );
}

/// Killed before its first progress checkpoint (a few chunks in), the
/// download is still recognised as this swarm's by the next run, which
/// needs no `--force`: its checkpoint (of nothing yet) was written when
/// the output was opened.
#[test]
fn killed_before_any_progress_checkpoint_is_not_someone_elses_file() {
    let dir = tempfile::tempdir().unwrap();
    let len = 3_000_000usize;
    let data = random_bytes(len, 92);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--upload-limit", "200kB/s"]);
    let out = dir.path().join("out");
    let mut first = spawn_get(&seeder.url, &out, &[]);
    let start = Instant::now();
    while std::fs::metadata(&out).map_or(0, |m| m.blocks()) == 0 {
        assert!(start.elapsed() < Duration::from_secs(60), "nothing written");
        std::thread::sleep(Duration::from_millis(5));
    }
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let written = std::fs::metadata(&out).unwrap().blocks() * 512;
    assert!(
        written < 1 << 20,
        "killed too late: {written} bytes written"
    );
    let second = get(&seeder.url, &out, &[]);
    assert_ok(&second, "second run, without --force");
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
}
