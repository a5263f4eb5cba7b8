//! A verified chunk changed behind the store's back (a byte flipped, the
//! file's modification time changed) is found by re-hashing and dropped;
//! the other chunks are kept.

mod common;

use std::os::unix::fs::FileExt;

use common::{chunks_of, content_path, open, seeder, set_mtime};
use ppspp_core::{ChunkIndex, HashFunction};

#[test]
fn a_corrupted_chunk_is_dropped_and_the_others_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(12 * 32 + 7, 32, 9, HashFunction::Sha1); // 13 chunks
    let (mut a, _) = open(&path, &s.meta);
    for c in 0..13 {
        a.receive(&s, c);
    }
    a.checkpoint();
    drop(a);

    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.write_all_at(&[s.data[5 * 32 + 17] ^ 0x40], 5 * 32 + 17)
        .unwrap();
    drop(file);
    set_mtime(&path, 1_000_000_000);

    let (mut b, report) = open(&path, &s.meta);
    assert_eq!(report.rehashed, 13);
    assert_eq!(report.dropped, 1);
    assert_eq!(report.warning, None);
    let kept: Vec<u64> = (0..13).filter(|c| *c != 5).collect();
    assert_eq!(chunks_of(&b.have), kept);
    assert!(!b.tree.is_verified(ChunkIndex(5)));
    assert_eq!(b.tree.verified_count(), 12);
    // Its trusted hash stays: the chunk verifies again when re-fetched.
    b.receive(&s, 5);
    assert_eq!(b.read(5), s.chunk(5));
    b.checkpoint();
    drop(b);

    let (c, report) = open(&path, &s.meta);
    assert_eq!(report.rehashed, 0);
    assert_eq!(c.have.count(), 13);
}
