//! `get` told to download from itself — its own listen address, or the
//! loopback address of its wildcard bind — says so at once instead of
//! waiting for an answer that cannot come (issue 20: a node must never
//! connect to itself).

mod common;

use std::process::Command;

use common::*;

const ID: &str = "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a";

fn get_listening(listen: &str, peer: &str, out: &std::path::Path) -> std::process::Output {
    Command::new(bin())
        .arg("get")
        .arg(ID)
        .arg("-o")
        .arg(out)
        .args(["--listen", listen, "--peer", peer])
        .args(["--connect-timeout", "60", "--idle-timeout", "600"])
        .output()
        .expect("run get")
}

#[test]
fn our_own_listen_address_is_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let port = closed_port().port();
    let me = format!("127.0.0.1:{port}");
    let res = get_listening(&me, &me, &out);
    // Both budgets are a minute or more: only the own-address check ends
    // this run, and it says so.
    assert_fails_with(&res, &[&me, "is this node's own address"]);
    assert_no_output(&out);
}

#[test]
fn a_wildcard_bind_knows_its_loopback_address() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let port = closed_port().port();
    let res = get_listening(
        &format!("0.0.0.0:{port}"),
        &format!("127.0.0.1:{port}"),
        &out,
    );
    assert_fails_with(&res, &["is this node's own address"]);
}
