//! Errors name what failed and give each cause once: a store or Merkle
//! error whose message repeated its source printed the OS error twice
//! behind anyhow's chain (`…: No such file or directory (os error 2): No
//! such file or directory (os error 2)`).

mod common;

use std::process::Command;

use common::*;

fn run(args: &[&str]) -> String {
    let out = Command::new(bin()).args(args).output().expect("run ppspp");
    assert!(!out.status.success(), "{args:?} succeeded");
    stderr_of(&out)
}

#[test]
fn get_and_stream_name_a_missing_directory_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("c4").join("v.mp4");
    let path = out.to_str().unwrap();
    let id = "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a";
    let want =
        format!("ppspp: error: cannot open {path}: No such file or directory (os error 2)\n");
    let peer = ["--peer", "127.0.0.1:9", "--listen", "127.0.0.1:0"];
    let get: Vec<&str> = ["get", id, "-o", path]
        .iter()
        .chain(&peer)
        .copied()
        .collect();
    assert_eq!(run(&get), want);
    let stream: Vec<&str> = ["stream", id, "-o", path]
        .iter()
        .chain(&peer)
        .copied()
        .collect();
    assert_eq!(run(&stream), want);
}

#[test]
fn seed_names_a_missing_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("nothing.mp4");
    let path = file.to_str().unwrap();
    assert_eq!(
        run(&["seed", path, "--listen", "127.0.0.1:0"]),
        format!("ppspp: error: cannot open {path}: No such file or directory (os error 2)\n")
    );
}

/// A read error while hashing (the Merkle error wraps the I/O error).
#[cfg(target_os = "linux")]
#[test]
fn hash_and_seed_name_a_read_error_once() {
    let want = "ppspp: error: cannot hash /proc/self/mem: cannot read the content: \
                Input/output error (os error 5)\n";
    assert_eq!(run(&["hash", "/proc/self/mem"]), want);
    assert_eq!(
        run(&["seed", "/proc/self/mem", "--listen", "127.0.0.1:0"]),
        want
    );
}

#[test]
fn lab_names_a_write_error_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = write_file(dir.path(), "a-file", b"");
    let out = file.join("results");
    let err = run(&[
        "lab",
        "run",
        "--set",
        "content.size=100kB",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        err.starts_with("ppspp: error: cannot write results"),
        "{err}"
    );
    assert!(err.ends_with(": Not a directory (os error 20)\n"), "{err}");
    assert_eq!(err.matches("Not a directory").count(), 1, "{err}");
}
