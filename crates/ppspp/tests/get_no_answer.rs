//! `get` from peers that never answer the handshake — a closed port, a
//! host that drops everything — fails once the handshake retries are used
//! up (`--connect-timeout`, default 15 s), not after the idle timeout, says
//! that nobody answered and names the peers, and leaves no output file or
//! checkpoint behind.

mod common;

use common::*;

const ID: &str = "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a";

#[test]
fn a_closed_port_and_a_silent_host_are_reported_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.mp4");
    let closed = closed_port().to_string();
    let silent = silent_peer();
    let silent_addr = silent.local_addr().unwrap().to_string();
    let res = get(
        ID,
        &out,
        &[
            "--peer",
            &closed,
            "--peer",
            &silent_addr,
            "--connect-timeout",
            "2",
            "--idle-timeout",
            "600",
        ],
    );
    let err = assert_fails_with(
        &res,
        &[
            "ppspp: error: no peer answered: no answer from ",
            &closed,
            &silent_addr,
            "to the handshake within 2.0 s",
        ],
    );
    assert!(!err.contains("refused"), "{err}");
    assert_no_output(&out);
}

/// With the default budget, and an idle timeout far beyond it: the failure
/// comes from the handshake retries (the message says so), 15 s in.
#[test]
fn the_default_budget_is_fifteen_seconds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let silent = silent_peer();
    let addr = silent.local_addr().unwrap().to_string();
    let res = get(ID, &out, &["--peer", &addr, "--idle-timeout", "600"]);
    assert_fails_with(
        &res,
        &["no peer answered: no answer from ", &addr, "within 15 s"],
    );
    assert_no_output(&out);
}
