//! One seeder, one leecher, over real loopback UDP: byte-identical files for
//! edge sizes, 1 KiB and 8 KiB chunks, SHA-1 and SHA-256.

mod common;

use common::*;

#[test]
fn sizes_chunk_sizes_and_hash_functions() {
    let dir = tempfile::tempdir().unwrap();
    for cs in [1024usize, 8192] {
        for hash in ["sha1", "sha256"] {
            for len in [1, cs, cs + 1, 3 * 1024 * 1024 + 17] {
                let what = format!("{len} bytes, {cs}-byte chunks, {hash}");
                let data = random_bytes(len, len as u64 ^ cs as u64);
                let src = write_file(dir.path(), &format!("src-{cs}-{hash}-{len}"), &data);
                let seeder = seed(&src, &["--chunk-size", &cs.to_string(), "--hash", hash]);
                let out = dir.path().join(format!("out-{cs}-{hash}-{len}"));
                let stats_path = dir.path().join(format!("stats-{cs}-{hash}-{len}.json"));
                let res = get(
                    &seeder.url,
                    &out,
                    &["--stats-json", stats_path.to_str().unwrap()],
                );
                assert_ok(&res, &what);
                assert!(
                    std::fs::read(&out).unwrap() == data,
                    "{what}: content differs"
                );
                let s = stats(&stats_path);
                assert_eq!(s["payload_bytes_received"], len as u64, "{what}");
                assert_eq!(s["chunks_verified"], len.div_ceil(cs) as u64, "{what}");
                assert_eq!(s["chunks_rejected"], 0, "{what}");
                assert_eq!(s["complete"], true, "{what}");
                let per_peer = s["peers"][seeder.addr()]["payload_bytes_received"].as_u64();
                assert_eq!(per_peer, Some(len as u64), "{what}: {s}");
            }
        }
    }
}

#[test]
fn a_bare_swarm_id_with_a_peer_works_too() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(100_000, 7);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &[]);
    let id = seeder.id();
    let out = dir.path().join("out");
    let res = get(&id, &out, &["--peer", &seeder.addr()]);
    assert_ok(&res, "bare id");
    assert_eq!(std::fs::read(&out).unwrap(), data);
}

#[test]
fn no_peer_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let res = get("d6e7fb96c98bd9ffc4d71aed40b0d351096d993a", &out, &[]);
    assert!(!res.status.success());
    assert!(String::from_utf8_lossy(&res.stderr).contains("no peer"));
}
