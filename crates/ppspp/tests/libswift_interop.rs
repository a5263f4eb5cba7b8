//! ppspp and libswift, the reference implementation, exchange content both
//! ways over loopback, 1 KiB chunks, SHA-1: byte-exact files at 3000 B,
//! 1 MB and 20 MB, and mixed swarms with a seeder of one kind and a leecher
//! of each. Runs whenever `../shared/tools/libswift/swift` is there (CI
//! installs its run-time packages); says so and passes when it is not.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::libswift;
use common::*;

/// A hang guard for one transfer, far above what any takes.
const LIMIT: Duration = Duration::from_secs(240);

const SIZES: [usize; 3] = [3000, 1_000_000, 20_000_000];

fn swift_or_skip() -> Option<PathBuf> {
    let swift = libswift::binary();
    if swift.is_none() {
        eprintln!("libswift not found beside the repository: interop tests skipped");
    }
    swift
}

fn content(dir: &Path, len: usize) -> (PathBuf, Vec<u8>) {
    let data = random_bytes(len, len as u64 * 31 + 7);
    let path = write_file(dir, &format!("src-{len}"), &data);
    (path, data)
}

fn root_of(file: &Path) -> String {
    let out = std::process::Command::new(bin())
        .arg("hash")
        .arg(file)
        .output()
        .unwrap();
    assert_ok(&out, "hash");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn assert_same(path: &Path, data: &[u8], what: &str) {
    let got = std::fs::read(path).unwrap_or_else(|e| panic!("{what}: {path:?}: {e}"));
    assert_eq!(got.len(), data.len(), "{what}: length");
    assert!(got == data, "{what}: content differs");
}

#[test]
fn ppspp_seeds_to_libswift() {
    let Some(swift) = swift_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    for len in SIZES {
        let (src, data) = content(dir.path(), len);
        let seeder = seed(&src, &[]);
        let out = dir.path().join(format!("swift-dl-{len}"));
        let get = libswift::spawn_get(&swift, &seeder.addr(), &seeder.id(), &out, None);
        let status = libswift::wait(get, LIMIT);
        let what = format!("ppspp → libswift, {len} B");
        assert!(status.success(), "{what}: {status}");
        assert_same(&out.join(seeder.id()), &data, &what);
    }
}

#[test]
fn libswift_seeds_to_ppspp() {
    let Some(swift) = swift_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    for len in SIZES {
        let (src, data) = content(dir.path(), len);
        let root = root_of(&src);
        let seeder = libswift::seed(&swift, &src, &dir.path().join(format!("swift-seed-{len}")));
        let out = dir.path().join(format!("ppspp-dl-{len}"));
        let stats_path = dir.path().join(format!("stats-{len}.json"));
        let res = get(
            &root,
            &out,
            &[
                "--peer",
                &seeder.addr,
                "--stats-json",
                stats_path.to_str().unwrap(),
            ],
        );
        let what = format!("libswift → ppspp, {len} B");
        assert_ok(&res, &what);
        // Our first handshake, with options 8 and 9, is taken as sent: no
        // complaint about it (libswift marks them "?hs"), and no retry
        // without them was needed.
        let log = seeder.log();
        assert!(
            log.contains("opened as channel"),
            "{what}: no channel in libswift's log"
        );
        assert!(!log.contains("?hs"), "{what}: libswift refused a handshake");
        // (Its log names a handshake to channel 0, an opening one, "id 0".)
        let openings = log
            .lines()
            .filter(|l| l.starts_with("StaticOnHandshake") && l.contains(" id 0 "))
            .count();
        assert_eq!(
            openings, 1,
            "{what}: more than one opening handshake reached libswift"
        );
        assert_same(&out, &data, &what);
        let s = stats(&stats_path);
        assert_eq!(s["chunks_rejected"], 0, "{what}");
        assert_eq!(
            s["peers"][&seeder.addr]["payload_bytes_received"].as_u64(),
            Some(len as u64),
            "{what}: {s}"
        );
    }
}

#[test]
fn libswift_seeder_with_a_ppspp_and_a_libswift_leecher() {
    let Some(swift) = swift_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let len = 5_000_000;
    let (src, data) = content(dir.path(), len);
    let root = root_of(&src);
    let seeder = libswift::seed(&swift, &src, &dir.path().join("swift-seed"));
    let swift_addr = libswift::free_addr();
    let swift_out = dir.path().join("swift-dl");
    let swift_get = libswift::spawn_get(&swift, &seeder.addr, &root, &swift_out, Some(&swift_addr));
    let out = dir.path().join("ppspp-dl");
    let res = get(
        &root,
        &out,
        &["--peer", &seeder.addr, "--peer", &swift_addr],
    );
    assert_ok(&res, "ppspp leecher in a libswift swarm");
    assert_same(&out, &data, "ppspp leecher");
    // Listening, it seeds on once complete: wait for its file instead.
    libswift::wait_for_file(&swift_get, &swift_out.join(&root), &data, LIMIT);
}

#[test]
fn ppspp_seeder_with_a_libswift_and_a_ppspp_leecher() {
    let Some(swift) = swift_or_skip() else { return };
    let dir = tempfile::tempdir().unwrap();
    let len = 5_000_000;
    let (src, data) = content(dir.path(), len);
    let seeder = seed(&src, &[]);
    let swift_addr = libswift::free_addr();
    let swift_out = dir.path().join("swift-dl");
    let swift_get = libswift::spawn_get(
        &swift,
        &seeder.addr(),
        &seeder.id(),
        &swift_out,
        Some(&swift_addr),
    );
    let out = dir.path().join("ppspp-dl");
    let res = get(&seeder.url, &out, &["--peer", &swift_addr]);
    assert_ok(&res, "ppspp leecher in a ppspp swarm with libswift");
    assert_same(&out, &data, "ppspp leecher");
    libswift::wait_for_file(&swift_get, &swift_out.join(seeder.id()), &data, LIMIT);
}
