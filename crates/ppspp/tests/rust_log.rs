//! `RUST_LOG` turns on the node's and the lab's tracing output on stderr;
//! without it the binary prints nothing more than it always did.

mod common;

use std::process::{Command, Output};

use common::*;

/// `ppspp ARGS…` with `RUST_LOG` set to `log`, or unset.
fn ppspp_with(log: Option<&str>, args: &[&str]) -> Output {
    let mut c = Command::new(bin());
    c.args(args);
    match log {
        Some(v) => c.env("RUST_LOG", v),
        None => c.env_remove("RUST_LOG"),
    };
    c.output().expect("run ppspp")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn lab_lines_carry_virtual_time_and_peer_names() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let run = |log: Option<&str>, out: &str| {
        let out = dir.path().join(out);
        let o = ppspp_with(
            log,
            &[
                "lab",
                "run",
                scenario.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    let quiet = run(None, "quiet");
    assert_eq!(stderr(&quiet), "", "nothing on stderr without RUST_LOG");
    let traced = run(Some("ppspp_lab=debug"), "traced");
    let err = stderr(&traced);
    // leechers[0] joins at 1 s of virtual time.
    let join = err
        .lines()
        .find(|l| l.contains("peer{name=leechers[0]}") && l.ends_with("joining"))
        .unwrap_or_else(|| panic!("no join line:\n{err}"));
    assert!(join.trim_start().starts_with("1.000000s DEBUG"), "{join}");
    // The run itself is the same either way.
    let hash = |o: &Output| {
        let out = String::from_utf8_lossy(&o.stdout).into_owned();
        out.lines()
            .find(|l| l.starts_with("trace_hash"))
            .map(str::to_owned)
    };
    assert!(hash(&quiet).is_some());
    assert_eq!(hash(&quiet), hash(&traced));
}

#[test]
fn udp_driver_reports_swarms_and_channels() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(50_000, 3);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &[]);
    let get = |log: Option<&str>, out: &str| {
        let out = dir.path().join(out);
        let o = ppspp_with(
            log,
            &[
                "get",
                &seeder.url,
                "-o",
                out.to_str().unwrap(),
                "--listen",
                "127.0.0.1:0",
                "--idle-timeout",
                "30",
            ],
        );
        assert_ok(&o, out.to_str().unwrap());
        assert_eq!(std::fs::read(&out).unwrap(), data);
        o
    };
    let quiet = stderr(&get(None, "quiet"));
    for word in ["ppspp_udp", "DEBUG", "INFO", "TRACE"] {
        assert!(!quiet.contains(word), "{word} without RUST_LOG:\n{quiet}");
    }
    let traced = stderr(&get(Some("ppspp_udp=debug"), "traced"));
    for line in ["swarm added", "channel connected", "swarm complete"] {
        assert!(traced.contains(line), "no {line:?} line:\n{traced}");
    }
    assert!(traced.contains("node{addr=127.0.0.1:"), "{traced}");
    assert!(
        !traced.contains("datagram received"),
        "trace lines at debug"
    );
}

#[test]
fn a_bad_filter_is_reported_and_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let src = write_file(dir.path(), "f", b"hello");
    let o = ppspp_with(Some("ppspp_udp=loud"), &["hash", src.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).starts_with("ppspp: ignoring RUST_LOG"),
        "{}",
        stderr(&o)
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim().len(), 40);
}
