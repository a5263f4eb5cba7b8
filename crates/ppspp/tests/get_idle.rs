//! `get` from a peer that takes us on but sends nothing (here a leecher
//! that has none of the content): after the idle timeout it fails saying
//! that the peer answered but sent no chunk, naming it, and leaves no
//! output behind.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::*;

const ID: &str = "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a";

#[test]
fn a_peer_that_sends_nothing_is_named_after_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    // The empty peer: a `get` of the swarm with a fixed port, waiting on a
    // peer that never answers.
    let port = closed_port();
    let silent = silent_peer();
    let mut empty = Proc(
        Command::new(bin())
            .args(["get", ID, "-o"])
            .arg(dir.path().join("empty-peer"))
            .args(["--listen", &port.to_string()])
            .args(["--peer", &silent.local_addr().unwrap().to_string()])
            .args(["--connect-timeout", "600", "--idle-timeout", "600"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the empty peer"),
    );
    // Its first progress line (2 s in) says its swarm is up: it will
    // answer handshakes rather than refuse them.
    let mut line = String::new();
    let stderr = empty.0.stderr.take().unwrap();
    BufReader::new(stderr).read_line(&mut line).unwrap();
    assert!(line.contains("0 peers"), "the empty peer printed {line:?}");

    let out = dir.path().join("out");
    let res = get(
        ID,
        &out,
        &["--peer", &port.to_string(), "--idle-timeout", "3"],
    );
    let named = format!("{port} answered but sent no chunk");
    assert_fails_with(&res, &["ppspp: error: no data in 3.0 s: ", &named]);
    assert_no_output(&out);
}
