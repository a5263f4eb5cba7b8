//! A run in which no leecher completes is an error (on stderr, non-zero
//! exit) unless the scenario says `allow_incomplete = true`; either way
//! its results are written and its table prints `—`, never NaN.

use std::process::{Command, Output};

const SMALL: &str = include_str!("../../ppspp-lab/tests/small_swarm.toml");

fn lab_run(dir: &std::path::Path, extra: &[&str]) -> Output {
    let scenario = dir.join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    // The first leecher arrives at 1 s: a 1 s run completes nobody.
    Command::new(env!("CARGO_BIN_EXE_ppspp"))
        .args(["lab", "run"])
        .arg(&scenario)
        .args(["--set", "duration=1s", "--out"])
        .arg(dir.join("out"))
        .args(extra)
        .output()
        .expect("run ppspp")
}

#[test]
fn a_run_completing_nobody_fails_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let o = lab_run(dir.path(), &[]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(!o.status.success(), "{stdout}");
    assert!(
        stderr.contains("none of the 5 leechers completed") && stderr.contains("allow_incomplete"),
        "{stderr}"
    );
    // The results are there to look at.
    assert!(dir.path().join("out/summary.json").is_file());
    assert!(!stdout.contains("NaN"), "{stdout}");
    assert!(
        stdout.contains("—             no leecher completed"),
        "{stdout}"
    );

    let dir = tempfile::tempdir().unwrap();
    let o = lab_run(dir.path(), &["--set", "allow_incomplete=true"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("(5 leechers, 0 completed)"), "{stdout}");
    assert!(!stdout.contains("NaN"), "{stdout}");
}
