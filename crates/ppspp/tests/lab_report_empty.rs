//! `ppspp lab report DIR` refuses a folder with no results (it once wrote
//! a page of "no data" notes and exited 0), and one whose sweep.csv lists
//! no runs.

use std::process::Command;

fn report(dir: &std::path::Path) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_ppspp"))
        .args(["lab", "report"])
        .arg(dir)
        .output()
        .expect("run ppspp");
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn a_folder_without_results_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (ok, err) = report(dir.path());
    assert!(!ok);
    assert!(err.contains("no results to report"), "{err}");
    assert!(err.contains(&dir.path().display().to_string()), "{err}");
    assert!(!dir.path().join("report.html").exists());

    std::fs::write(
        dir.path().join("sweep.csv"),
        "run,content.size,seed,leechers\n",
    )
    .unwrap();
    let (ok, err) = report(dir.path());
    assert!(!ok);
    assert!(err.contains("sweep.csv lists no runs"), "{err}");
    assert!(!dir.path().join("sweep.html").exists());
}
