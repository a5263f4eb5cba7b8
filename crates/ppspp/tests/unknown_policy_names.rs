//! An unknown picker or congestion controller name is refused where it was
//! typed (a flag, a `--set`, a scenario file), naming the known ones,
//! before anything runs: never a silent fallback to another algorithm.

mod common;

use common::{assert_fails_with, ppspp, SMALL};

const PICKERS: &str =
    "(known: sequential, rarest-first, linear, std-vod, swift-vod, buffer-vod, live)";
const CONTROLLERS: &str = "(known: ledbat, fixed; ledbat:<N>ms sets LEDBAT's target)";

#[test]
fn node_flags_refuse_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("v.bin");
    let out = out.to_str().unwrap();
    let id = "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a";
    let peer = ["--peer", "127.0.0.1:9", "--listen", "127.0.0.1:0"];
    let with = |cmd: &str, flag: &str, value: &str| {
        let mut args = vec![cmd, id, "-o", out];
        args.extend(peer);
        args.extend([flag, value]);
        ppspp(&args)
    };
    for cmd in ["get", "stream"] {
        let o = with(cmd, "--algorithm", "random");
        let err = assert_fails_with(&o, &["unknown algorithm 'random'", PICKERS]);
        // A usage error, before anything was opened.
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        let o = with(cmd, "--congestion", "cubic");
        let err = assert_fails_with(&o, &["unknown congestion controller 'cubic'", CONTROLLERS]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
    }
    assert!(!std::path::Path::new(out).exists());
    let file = dir.path().join("content.bin");
    std::fs::write(&file, b"some content").unwrap();
    let o = ppspp(&[
        "seed",
        file.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--congestion",
        "LEDBAT",
    ]);
    let err = assert_fails_with(&o, &["unknown congestion controller 'LEDBAT'", CONTROLLERS]);
    assert_eq!(o.status.code(), Some(2), "{err}");
}

#[test]
fn the_lab_refuses_unknown_names_in_sets_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("small.toml");
    std::fs::write(&scenario, SMALL).unwrap();
    let scenario = scenario.to_str().unwrap();
    let out = dir.path().join("out");
    let out_arg = out.to_str().unwrap();

    let o = ppspp(&[
        "lab",
        "run",
        scenario,
        "--set",
        "peers.leechers.congestion=cubic",
        "--out",
        out_arg,
    ]);
    assert_fails_with(
        &o,
        &[&format!(
            "ppspp: error: --set peers.leechers.congestion=cubic: \
             unknown congestion controller 'cubic' {CONTROLLERS}"
        )],
    );
    let o = ppspp(&[
        "lab",
        "run",
        scenario,
        "--set",
        "peers.leechers.algorithm=random",
        "--out",
        out_arg,
    ]);
    assert_fails_with(
        &o,
        &[&format!(
            "ppspp: error: --set peers.leechers.algorithm=random: \
             unknown algorithm 'random' {PICKERS}"
        )],
    );

    let text = SMALL.replace(
        "role = \"leecher\"",
        "role = \"leecher\"\nalgorithm = \"psychic\"",
    );
    let line = text
        .lines()
        .position(|l| l.starts_with("algorithm"))
        .unwrap()
        + 1;
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, text).unwrap();
    let bad = bad.to_str().unwrap();
    let o = ppspp(&["lab", "run", bad, "--out", out_arg]);
    assert_fails_with(
        &o,
        &[&format!(
            "ppspp: error: {bad}:{line}: algorithm = \"psychic\": \
             unknown algorithm 'psychic' {PICKERS}"
        )],
    );
    // Refused before anything ran.
    assert!(!out.join("summary.json").exists());
}
