//! Chunks written and checkpointed come back on reopening — same verified
//! set, same trusted hashes, nothing re-hashed — and the restored tree goes
//! on verifying the rest of the content.

mod common;

use common::{content_path, open, seeder, trusted};
use ppspp_core::{ChunkIndex, HashFunction};

#[test]
fn reopening_restores_the_checkpoint_and_the_download_continues() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(37 * 16 + 5, 16, 3, HashFunction::Sha1); // 38 chunks
    let n = s.chunk_count();
    let first = [5u64, 6, 7, 30, 0, 37, 12, 13, 21];

    let (mut a, report) = open(&path, &s.meta);
    assert_eq!(report, trusted());
    for &c in &first {
        a.receive(&s, c);
    }
    a.checkpoint();
    let mut nodes: Vec<_> = a.tree.trusted_nodes().collect();
    nodes.sort();
    let have = a.have.clone();
    drop(a);

    let (mut b, report) = open(&path, &s.meta);
    assert_eq!(report, trusted());
    assert_eq!(b.have, have);
    let mut restored: Vec<_> = b.tree.trusted_nodes().collect();
    restored.sort();
    assert_eq!(restored, nodes);
    assert_eq!(b.tree.verified_count(), first.len() as u64);
    assert_eq!(b.tree.content_len(), Some(s.data.len() as u64));
    assert_eq!(b.storage.content_len(), Some(s.data.len() as u64));
    for &c in &first {
        assert!(b.tree.is_verified(ChunkIndex(c)));
        assert_eq!(b.read(c), s.chunk(c), "chunk {c}");
        // A resumed leecher serves the same hashes as the seeder.
        assert_eq!(
            b.tree.uncles(ChunkIndex(c), |_| false),
            Some(s.tree.uncles(ChunkIndex(c), |_| false))
        );
    }
    assert_eq!(b.tree.peaks(), Some(s.tree.peaks()));

    // No peaks come now (the leecher has chunks): the restored hashes must
    // carry every further verification.
    for c in (0..n).filter(|c| !first.contains(c)) {
        b.receive(&s, c);
    }
    assert_eq!(b.tree.verified_count(), n);
    b.checkpoint();
    drop(b);
    assert_eq!(std::fs::read(&path).unwrap(), s.data);

    let (c, report) = open(&path, &s.meta);
    assert_eq!(report, trusted());
    assert_eq!(c.have.count(), n);
}
