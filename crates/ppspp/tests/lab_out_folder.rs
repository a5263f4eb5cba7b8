//! Results folders never mix old files with new: a sweep refuses a folder
//! that is not empty unless `--force`, which removes what a sweep wrote
//! (and only that); a run goes into an empty folder or over an earlier
//! run's, and refuses one holding other files unless `--force`.

mod common;
use common::{ppspp, SMALL};
use std::path::Path;
use std::process::Output;

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn refused(o: &Output) -> String {
    assert!(
        !o.status.success(),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn scenario(dir: &Path) -> String {
    let path = dir.join("small.toml");
    std::fs::write(&path, SMALL).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_sweep_refuses_a_used_folder_and_force_clears_its_own_files() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(dir.path());
    let out = dir.path().join("sweep");
    let o = out.to_str().unwrap();
    let sweep = |sizes: &str, seeds: &str, force: bool| {
        let mut args = vec!["lab", "sweep", &scenario, "--set", sizes, "--seeds", seeds];
        args.extend(["--jobs", "2", "--out", o]);
        if force {
            args.push("--force");
        }
        ppspp(&args)
    };
    ok(&sweep("content.size=100KB,200KB", "2", false));
    assert!(out.join("runs/run0003/summary.json").is_file());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let before = std::fs::read_to_string(out.join("sweep.csv")).unwrap();

    let err = refused(&sweep("content.size=100KB", "1", false));
    assert!(
        err.contains("not empty") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("sweep.csv")).unwrap(),
        before
    );

    ok(&sweep("content.size=100KB", "1", true));
    let table = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(!out.join("runs/run0001").exists(), "an old run is left");
    assert!(
        !out.join("runs/point001.toml").exists(),
        "an old point is left"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_run_goes_over_its_own_folder_but_not_beside_other_files() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = scenario(dir.path());
    let out = dir.path().join("run");
    let o = out.to_str().unwrap();
    ok(&ppspp(&["lab", "run", &scenario, "--out", o]));
    // Again: the earlier run's files are replaced.
    ok(&ppspp(&["lab", "run", &scenario, "--out", o]));
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let err = refused(&ppspp(&["lab", "run", &scenario, "--out", o]));
    assert!(
        err.contains("notes.txt") && err.contains("--force"),
        "{err}"
    );
    ok(&ppspp(&["lab", "run", &scenario, "--out", o, "--force"]));
    assert!(out.join("notes.txt").is_file() && out.join("summary.json").is_file());
}
