//! Chunks written after the last checkpoint (or with no checkpoint at all)
//! are not claimed after a crash: they are fetched again.

mod common;

use common::{chunks_of, content_path, open, seeder, trusted};
use ppspp_core::{ChunkIndex, HashFunction};

#[test]
fn chunks_written_after_the_last_checkpoint_are_not_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    // 32-byte chunks: with 64 every chunk would be two SHA-256 hashes long,
    // which a bare swarm id cannot tell from inner nodes (ppspp-core's
    // `merkle/verify/claim.rs`), so nothing would verify.
    let s = seeder(20 * 32, 32, 7, HashFunction::Sha256);

    let (mut a, _) = open(&path, &s.meta);
    for c in [0, 1, 2, 9] {
        a.receive(&s, c);
    }
    a.checkpoint();
    for c in [3, 4, 15] {
        a.receive(&s, c);
    }
    drop(a); // killed: no checkpoint for 3, 4, 15

    let (mut b, report) = open(&path, &s.meta);
    assert_eq!(chunks_of(&b.have), vec![0, 1, 2, 9]);
    for c in [3, 4, 15] {
        assert!(!b.tree.is_verified(ChunkIndex(c)));
    }
    // The later writes changed the file, so what is claimed was re-hashed.
    assert_eq!(report.rehashed, 4);
    assert_eq!(report.dropped, 0);
    assert_eq!(report.warning, None);
    // They verify again when fetched again.
    b.receive(&s, 3);
    assert!(b.tree.is_verified(ChunkIndex(3)));
}

#[test]
fn without_any_checkpoint_nothing_is_claimed() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(5 * 64, 64, 8, HashFunction::Sha1);

    let (mut a, _) = open(&path, &s.meta);
    for c in 0..5 {
        a.receive(&s, c);
    }
    drop(a);
    assert_eq!(std::fs::read(&path).unwrap(), s.data, "the bytes are there");

    let (b, report) = open(&path, &s.meta);
    assert_eq!(report, trusted());
    assert!(b.have.is_empty());
    assert_eq!(b.tree.verified_count(), 0);
    assert_eq!(b.tree.chunk_count(), None);
}
