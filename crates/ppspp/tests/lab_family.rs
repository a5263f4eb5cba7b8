//! `ppspp lab sweep FOLDER --algorithms …`: a family of scenarios runs for
//! each algorithm and seed, and its tables hold one row per scenario and
//! algorithm whose figures are those of the runs' own summary.json.

use std::path::Path;
use std::process::Command;

use ppspp_lab::sweep::apply;

const VOD_SMALL: &str = include_str!("../../../scenarios/vod-small.toml");

/// vod-small cut down to 4 viewers of an 8 s video, named `name`, with
/// the extra keys `sets`.
fn tiny(name: &str, sets: &[(&str, &str)]) -> String {
    let mut t = apply(VOD_SMALL, "name", &format!("\"{name}\"")).unwrap();
    t = apply(&t, "description", &format!("\"tiny {name}\"")).unwrap();
    t = apply(&t, "peers.viewers.count", "4").unwrap();
    t = apply(&t, "content.size", "1000000B").unwrap();
    for (k, v) in sets {
        t = apply(&t, k, v).unwrap();
    }
    t
}

fn csv_rows(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (head, rows)
}

fn col(head: &[String], name: &str) -> usize {
    head.iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {head:?}"))
}

#[test]
fn a_family_sweep_tabulates_every_scenario_and_algorithm() {
    let dir = tempfile::tempdir().unwrap();
    let family = dir.path().join("tiny-family");
    std::fs::create_dir(&family).unwrap();
    std::fs::write(family.join("a-plain.toml"), tiny("a-plain", &[])).unwrap();
    let seeking = tiny("b-seek", &[("peers.viewers.player.seek.per_minute", "6")]);
    std::fs::write(family.join("b-seek.toml"), seeking).unwrap();
    std::fs::write(family.join("notes.md"), "not a scenario").unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_ppspp"))
        .args(["lab", "sweep"])
        .arg(&family)
        .args([
            "--algorithms",
            "linear,std-vod",
            "--seeds",
            "1",
            "--jobs",
            "2",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // One run per scenario × algorithm, scenario first.
    let (head, rows) = csv_rows(&out.join("sweep.csv"));
    assert_eq!(head[..4], ["run", "scenario", "algorithm", "seed"]);
    let points: Vec<(&str, &str)> = rows.iter().map(|r| (&*r[1], &*r[2])).collect();
    assert_eq!(
        points,
        [
            ("a-plain", "linear"),
            ("a-plain", "std-vod"),
            ("b-seek", "linear"),
            ("b-seek", "std-vod")
        ]
    );
    // Each point's summary row holds its run's own figures (one seed: the
    // mean is the run's value, the deviation 0).
    let (shead, srows) = csv_rows(&out.join("sweep_summary.csv"));
    assert_eq!(srows.len(), 4);
    let seek_col = col(&head, "seeks_per_viewer");
    for (k, row) in rows.iter().enumerate() {
        let run = out.join(format!("runs/run{k:04}"));
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(summary["name"], row[1].as_str());
        let play = &summary["playback"];
        let s = &srows[k];
        assert_eq!((&*s[0], &*s[1], &*s[2]), (&*row[1], &*row[2], "1"));
        for (figure, json) in [
            ("stalls_per_viewer", &play["stalls_per_viewer"]),
            ("stall_s_per_viewer", &play["stall_s_per_viewer"]),
            ("startup_mean_s", &play["startup_s"]["mean"]),
            ("continuity", &play["continuity"]),
        ] {
            let want = json.as_f64().unwrap();
            let mean: f64 = s[col(&shead, &format!("{figure}_mean"))].parse().unwrap();
            let sd: f64 = s[col(&shead, &format!("{figure}_sd"))].parse().unwrap();
            assert!(
                (mean - want).abs() < 1e-3,
                "run {k} {figure}: {mean} vs {want}"
            );
            assert_eq!(sd, 0.0, "run {k} {figure}");
        }
        // Only the second scenario's viewers seek.
        let seeks: f64 = row[seek_col].parse().unwrap();
        assert_eq!(seeks, play["seeks_per_viewer"].as_f64().unwrap());
        assert_eq!(seeks > 0.0, row[1] == "b-seek", "run {k}: {seeks}");
    }

    // The tables and the page: scenarios by algorithms, and the family.
    let md = std::fs::read_to_string(out.join("sweep_summary.md")).unwrap();
    assert!(md.starts_with("# tiny-family: sweep\n"), "{md}");
    assert!(
        md.contains("## stalls per viewer\n\n| scenario | linear | std-vod |\n"),
        "{md}"
    );
    for scenario in ["a-plain", "b-seek"] {
        assert_eq!(
            md.matches(&format!("\n| {scenario} | ")).count(),
            2 + 6,
            "{scenario}: two grid rows, a row in each figure's table\n{md}"
        );
    }
    let html = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert!(html.contains("<title>tiny-family: sweep</title>"), "{html}");
    assert!(html.contains("<td>tiny b-seek</td>"), "{html}");
    for plot in [
        "stalls_per_viewer",
        "stall_s_per_viewer",
        "startup_mean_s",
        "continuity",
    ] {
        let svg = std::fs::read_to_string(out.join(format!("plots/sweep_{plot}.svg"))).unwrap();
        assert!(
            svg.contains("\nb-seek\n") && svg.contains("\nstd-vod\n"),
            "{plot}"
        );
    }
    assert!(out.join("family.toml").is_file());
}

#[test]
fn an_unknown_algorithm_is_refused_with_the_known_ones() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.toml"), tiny("a", &[])).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ppspp"))
        .args(["lab", "sweep"])
        .arg(dir.path())
        .args(["--algorithms", "linear,fastest"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown algorithm 'fastest'"), "{err}");
    assert!(err.contains("swift-vod"), "{err}");
}
