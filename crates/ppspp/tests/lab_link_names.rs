//! Links are named as the scenario names them (`seeder.up`,
//! `leechers[2].down`) in links.csv, link_stats.csv and the report, and
//! `lab run` ends by saying where the report is.

use std::process::Command;

const SMALL: &str = include_str!("../../ppspp-lab/tests/small_swarm.toml");

#[test]
fn results_and_report_name_links() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    // A seeder link that drops: the report's drops table lists it.
    std::fs::write(
        &scenario,
        SMALL.replace(
            "queue = \"100ms\"",
            "queue = \"100ms\"\nloss = { kind = \"bernoulli\", p = 0.01 }",
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_ppspp"))
        .args(["lab", "run"])
        .arg(&scenario)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let report = out.join("report.html");
    assert_eq!(
        stdout.lines().last(),
        Some(format!("report        {}", report.display()).as_str()),
        "{stdout}"
    );

    let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
    let links = read("links.csv");
    assert!(links.starts_with("link,name,t_s,"), "{links}");
    assert!(links.lines().nth(1).unwrap().starts_with("0,seeder.up,"));
    let stats = read("link_stats.csv");
    assert!(stats.starts_with("link,name,capacity_bps,"), "{stats}");
    // The seeder (one peer) by its group's name, the leechers by index.
    for (i, name) in [
        (0, "seeder.up"),
        (1, "seeder.down"),
        (2, "leechers[0].up"),
        (11, "leechers[4].down"),
    ] {
        assert!(
            stats
                .lines()
                .any(|l| l.starts_with(&format!("{i},{name},"))),
            "{name}: {stats}"
        );
    }
    let html = read("report.html");
    assert!(html.contains("<tr><td>seeder.up</td>"), "{html}");
    assert!(read("plots/queue_ccdf.svg").contains("seeder.up ("));
    assert!(!html.contains("link 0"));
}
