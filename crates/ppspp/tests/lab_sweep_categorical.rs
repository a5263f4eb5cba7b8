//! A sweep over a categorical axis (algorithms, as README's example) gets
//! bar charts of its figures, not "No numeric axis to plot against."; its
//! page names the scenario and links every run's report.

use std::process::Command;

const SMALL: &str = include_str!("../../ppspp-lab/tests/small_swarm.toml");

#[test]
fn a_categorical_sweep_gets_bars_and_links_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let out = dir.path().join("sweep");
    let o = Command::new(env!("CARGO_BIN_EXE_ppspp"))
        .args(["lab", "sweep"])
        .arg(&scenario)
        .args(["--set", "peers.leechers.algorithm=rarest-first,sequential"])
        .args(["--seeds", "2", "--jobs", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert!(!html.contains("No numeric axis"), "{html}");
    assert!(html.contains("<title>small-swarm: sweep</title>"), "{html}");
    let svg = std::fs::read_to_string(out.join("plots/sweep_download_mean_s.svg")).unwrap();
    assert!(
        svg.contains("<rect") && svg.contains("\nsequential\n"),
        "{svg}"
    );
    for run in 0..4 {
        let link = format!("runs/run{run:04}/report.html");
        assert!(html.contains(&format!("<a href=\"{link}\">")), "{link}");
        assert!(out.join(&link).is_file(), "{link}");
    }
}
