//! A peer that refuses `get` (it is full for a moment, or serves another
//! swarm until it is restarted) is tried again with backoff within the
//! handshake budget, with a warning meanwhile, instead of failing the
//! download at the first refusal (issue 21, item 1).

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

#[test]
fn a_peer_that_refused_is_tried_again() {
    let dir = tempfile::tempdir().unwrap();
    let wanted = random_bytes(80_000, 7);
    let other = write_file(dir.path(), "other", &random_bytes(50_000, 8));
    let src = write_file(dir.path(), "src", &wanted);
    // The URL of the wanted swarm, from a seeder that is stopped at once.
    let url = {
        let s = seed(&src, &[]);
        s.url.replace(&s.addr(), "{peer}")
    };
    // The peer first serves another swarm: it refuses ours.
    let first = seed(&other, &[]);
    let at = first.addr();
    let url = url.replace("{peer}", &at);
    let out = dir.path().join("out");
    let mut get = spawn_get(&url, &out, &[]);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(get.0.try_wait().unwrap().is_none(), "get gave up at once");
    // Restarted with our swarm on the same address.
    drop(first);
    let started = Instant::now();
    let mut second = Proc(
        Command::new(bin())
            .arg("seed")
            .arg(&src)
            .args(["--listen", &at])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let status = loop {
        if let Some(s) = get.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "get did not finish"
        );
        assert!(second.0.try_wait().unwrap().is_none(), "the seeder exited");
        std::thread::sleep(Duration::from_millis(100));
    };
    let mut err = String::new();
    std::io::Read::read_to_string(get.0.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "get failed: {err}");
    assert_eq!(std::fs::read(&out).unwrap(), wanted);
    assert!(
        err.contains("refused swarm") && err.contains("trying again"),
        "no warning while retrying: {err}"
    );
}
