//! A download whose data fits but whose checkpoint cannot be written must
//! not end as a success: `get` waits for its last checkpoint, says on
//! stderr which checkpoint failed and why, exits non-zero, and leaves no
//! temporary checkpoint file.
//!
//! The checkpoint is made unwritable the way that works for root too: a
//! directory at `OUT.ppspp.tmp`, created once `get` has opened its output
//! and written its first checkpoint, of nothing yet (opening refuses a
//! directory that is already there), and before any data can
//! arrive — the seeder starts only then, on the port the URL names, and
//! `get` reaches it with a handshake retry.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// Waits (up to 60 s) for `path` to exist.
fn wait_for(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{path:?} never appeared"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_unwritable_final_checkpoint_fails_the_download() {
    let dir = tempfile::tempdir().unwrap();
    let len = 300_000usize; // below the first progress checkpoint: only the final one
    let data = random_bytes(len, 61);
    let src = write_file(dir.path(), "src", &data);
    let hashed = ppspp(&["hash", src.to_str().unwrap()]);
    assert_ok(&hashed, "hash");
    let root = String::from_utf8(hashed.stdout).unwrap().trim().to_string();
    let port = closed_port();
    let url = format!("ppspp://{port}/{root}?cs=1024&hf=sha1&cl={len}");

    let out = dir.path().join("out");
    let mut get = spawn_get(&url, &out, &["--connect-timeout", "30"]);
    // The checkpoint written at open (of nothing yet) says the output is
    // open; the later ones are to fail.
    wait_for(&ppspp_store::checkpoint_path(&out));
    let tmp = ppspp_store::checkpoint_tmp_path(&out);
    std::fs::create_dir(&tmp).unwrap();
    let seeder = Command::new(bin())
        .arg("seed")
        .arg(&src)
        .args(["--listen", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn seeder");
    let _seeder = Proc(seeder);

    let mut stderr = Vec::new();
    std::io::Read::read_to_end(&mut get.0.stderr.take().unwrap(), &mut stderr).unwrap();
    let res = std::process::Output {
        status: get.0.wait().unwrap(),
        stdout: Vec::new(),
        stderr,
    };
    let tmp_shown = tmp.display().to_string();
    let err = assert_fails_with(&res, &["cannot write the checkpoint of", &tmp_shown]);
    // One line says it all: the file and the cause.
    let line = err
        .lines()
        .find(|l| l.contains("cannot write the checkpoint"))
        .unwrap();
    assert!(line.contains("Is a directory"), "{err}");
    assert!(line.contains("the content is complete"), "{err}");
    assert_eq!(
        err.matches("cannot write the checkpoint").count(),
        1,
        "{err}"
    );
    // The data is all there; the only thing at the temporary path is the
    // directory put there, and the only checkpoint (written at the start)
    // claims nothing.
    assert_eq!(std::fs::read(&out).unwrap(), data);
    assert!(tmp.is_dir());
    let meta = ppspp_store::SwarmMeta::new(
        ppspp_core::HashFunction::Sha1,
        ppspp_core::hash::Hash::from_hex(&root).unwrap(),
        ppspp_core::ChunkSize::DEFAULT,
    );
    let existing = ppspp_store::probe_download(&out, &meta).unwrap();
    assert!(
        matches!(existing, ppspp_store::Existing::Download { chunks: 0, .. }),
        "{existing:?}"
    );
}
