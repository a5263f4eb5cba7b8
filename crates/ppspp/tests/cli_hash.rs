//! `ppspp hash`: roots on stdout and nothing else; clear errors otherwise.

mod common;
use common::ppspp;
use std::path::Path;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.to_str().unwrap().to_string()
}

fn pat251(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

#[test]
fn prints_the_documented_roots() {
    let dir = tempfile::tempdir().unwrap();
    // A subset of the roots table in the wire notes, computed by libswift.
    let cases: [(&str, Vec<u8>, &str, &str); 5] = [
        (
            "123",
            b"123\n".to_vec(),
            "1024",
            "a8fdc205a9f19cc1c7507a60c4f01b13d11d7fd0",
        ),
        (
            "dollar",
            vec![b'$'; 1028],
            "8192",
            "75c6da265c89ae4c96943fafc89c3478fdb17757",
        ),
        (
            "pat3000",
            pat251(3000),
            "1024",
            "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a",
        ),
        (
            "zero",
            vec![0; 5120],
            "1024",
            "2857f8d88fa98b6a54a94be8841913492885c1f7",
        ),
        (
            "pat1m",
            pat251(1_000_000),
            "1024",
            "1e1f88d862496e4db2b81edf33aab0195cb80107",
        ),
    ];
    for (name, bytes, cs, root) in cases {
        let path = write(dir.path(), name, &bytes);
        let out = ppspp(&["hash", &path, "--chunk-size", cs]);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            format!("{root}\n"),
            "{name}"
        );
        assert!(
            out.stderr.is_empty(),
            "{name}: stderr {:?}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn defaults_are_sha1_and_1024_byte_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "pat", &pat251(3000));
    let default = ppspp(&["hash", &path]);
    let explicit = ppspp(&["hash", &path, "--chunk-size", "1024", "--hash", "sha1"]);
    assert_eq!(
        String::from_utf8(default.stdout).unwrap(),
        "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a\n"
    );
    assert_eq!(
        explicit.stdout,
        b"d6e7fb96c98bd9ffc4d71aed40b0d351096d993a\n"
    );
}

#[test]
fn sha256_gives_a_64_hex_digit_root() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "a", b"a");
    let out = ppspp(&["hash", &path, "--hash", "sha256"]);
    assert!(out.status.success());
    // One chunk: the root is the SHA-256 of the content.
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb\n"
    );
}

/// Runs `ppspp hash` expecting failure; returns stderr.
fn fails(args: &[&str]) -> String {
    let out = ppspp(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(
        out.stdout.is_empty(),
        "{args:?} printed {:?} on stdout",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(!err.trim().is_empty());
    err
}

#[test]
fn clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "f", b"hello");
    let missing = dir.path().join("missing").to_str().unwrap().to_string();
    assert!(fails(&["hash", &missing]).contains("No such file"));
    assert!(fails(&["hash", dir.path().to_str().unwrap()]).contains("is a directory"));
    assert!(fails(&["hash", &file, "--chunk-size", "0"]).contains("at least 1 byte"));
    assert!(fails(&["hash", &file, "--chunk-size", "1000000000"]).contains("too large"));
    assert!(fails(&["hash", &file, "--chunk-size", "many"]).contains("not a number"));
    assert!(fails(&["hash", &file, "--hash", "md5"]).contains("unknown hash function 'md5'"));
    let empty = write(dir.path(), "empty", b"");
    assert!(fails(&["hash", &empty]).contains("is empty"));
    assert!(fails(&["hash"]).contains("FILE"));
}

#[cfg(target_os = "linux")]
#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    // A file that opens but fails on read: offset 0 of a process's memory is
    // never mapped, so reading it is an I/O error even for root.
    assert!(fails(&["hash", "/proc/self/mem"]).contains("Input/output error"));
    // A file without read permission (root reads anything, so only check
    // when the permission bites).
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "secret", b"x");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&file).is_err() {
        assert!(fails(&["hash", &file]).contains("Permission denied"));
    }
}
