//! An error a `--set` override causes names the override, in `lab run` and
//! in `lab sweep`, never a line of the scenario file (unrelated) or of a
//! sweep point's file (never written when the point is refused).

mod common;
use common::{ppspp, SMALL};

#[test]
fn set_errors_name_the_override() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let scenario = scenario.to_str().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();

    let o = ppspp(&["lab", "run", scenario, "--set", "content.size=big"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--set content.size=big: 'big' is not a size"),
        "{err}"
    );
    assert!(!err.contains("small.toml:"), "{err}");

    let o = ppspp(&["lab", "run", scenario, "--set", "peers.home.count=2"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--set peers.home.count=2: "), "{err}");
    assert!(err.contains("seeder, leechers"), "{err}");

    let o = ppspp(&[
        "lab",
        "sweep",
        scenario,
        "--set",
        "content.size=100KB,big",
        "--out",
        out,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("--set content.size=big: 'big' is not a size"),
        "{err}"
    );
    assert!(!err.contains("point001.toml"), "{err}");
    // Refused before anything ran.
    assert!(!std::path::Path::new(out).join("sweep.csv").exists());
}
