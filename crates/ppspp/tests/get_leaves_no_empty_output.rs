//! A `get` that stores nothing — it times out, or is interrupted before
//! any chunk arrives — removes the output file and checkpoint it created,
//! and leaves a file that was there before as it was.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::*;

const ID: &str = "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a";

#[test]
fn a_failed_download_leaves_nothing_new() {
    let dir = tempfile::tempdir().unwrap();
    let silent = silent_peer();
    let peer = silent.local_addr().unwrap().to_string();
    let out = dir.path().join("out");
    let res = get(ID, &out, &["--peer", &peer, "--idle-timeout", "2"]);
    assert_fails_with(&res, &["ppspp: error: "]);
    assert_no_output(&out);

    // A file that was there stays, as it was; no checkpoint appears.
    let empty = write_file(dir.path(), "empty", b"");
    let res = get(ID, &empty, &["--peer", &peer, "--idle-timeout", "2"]);
    assert_fails_with(&res, &["ppspp: error: "]);
    assert_eq!(std::fs::read(&empty).unwrap(), b"");
    assert!(!ppspp_store::checkpoint_path(&empty).exists());
}

#[test]
fn an_interrupt_before_any_data_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let silent = silent_peer();
    let out = dir.path().join("out");
    let mut child = Command::new(bin())
        .args(["get", ID, "-o"])
        .arg(&out)
        .args(["--listen", "127.0.0.1:0", "--idle-timeout", "600"])
        .args(["--peer", &silent.local_addr().unwrap().to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn get");
    // The first progress line: the download is under way (its Ctrl-C
    // handler installed).
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    assert!(first.contains("0 B"), "{first}");
    let pid = child.id().to_string();
    let sent = Command::new("kill").args(["-INT", &pid]).status().unwrap();
    assert!(sent.success());
    let status = child.wait().unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(
        !status.success(),
        "an interrupted download is not a success"
    );
    assert_eq!(
        rest.last().map(String::as_str),
        Some("ppspp: error: interrupted before any data arrived"),
        "{rest:?}"
    );
    assert_no_output(&out);
}
