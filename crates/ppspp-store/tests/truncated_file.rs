//! A content file cut short after the checkpoint loses the chunks past the
//! new end (the one cut in the middle too); those before it are kept.

mod common;

use common::{chunks_of, content_path, open, seeder};
use ppspp_core::{ChunkIndex, HashFunction};

#[test]
fn chunks_past_the_end_of_a_truncated_file_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(10 * 100 + 50, 100, 11, HashFunction::Sha256); // 11 chunks
    let (mut a, _) = open(&path, &s.meta);
    for c in [0, 2, 3, 4, 5, 7, 10] {
        a.receive(&s, c);
    }
    a.checkpoint();
    drop(a);

    // Cut in the middle of chunk 4.
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.set_len(4 * 100 + 30).unwrap();
    drop(file);

    let (mut b, report) = open(&path, &s.meta);
    assert_eq!((report.rehashed, report.dropped), (7, 4));
    assert_eq!(chunks_of(&b.have), vec![0, 2, 3]);
    for c in [4, 5, 7, 10] {
        assert!(!b.tree.is_verified(ChunkIndex(c)));
    }
    // The length stays known; the lost chunks come back when re-fetched.
    assert_eq!(b.tree.content_len(), Some(1050));
    for c in [10, 4, 5, 7] {
        b.receive(&s, c);
    }
    assert_eq!(b.read(10), s.chunk(10));
    assert_eq!(b.read(4), s.chunk(4));
}
