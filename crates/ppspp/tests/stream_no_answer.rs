//! `ppspp stream` shares `get`'s diagnosis: when no peer answers the
//! handshake it fails once the retries are used up, naming the peer,
//! instead of serving a player forever what it cannot fetch, and leaves no
//! output behind.

mod common;

use std::process::Command;

use common::*;

#[test]
fn stream_fails_when_no_peer_answers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cache-entry");
    let silent = silent_peer();
    let addr = silent.local_addr().unwrap().to_string();
    let res = Command::new(bin())
        .args(["stream", "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a", "-o"])
        .arg(&out)
        .args(["--listen", "127.0.0.1:0", "--peer", &addr])
        .args(["--connect-timeout", "1"])
        .output()
        .expect("run stream");
    let no_answer = format!("no answer from {addr} to the handshake within 1.0 s");
    assert_fails_with(&res, &["ppspp: error: no peer answered: ", &no_answer]);
    assert_no_output(&out);
}
