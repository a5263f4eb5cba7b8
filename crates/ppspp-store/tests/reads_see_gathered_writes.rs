//! Chunks written (and gathered for one larger write) are read back exactly,
//! whatever the order of reads and writes around them: a leecher serves its
//! chunks to others while it downloads.

mod common;

use common::{content_path, open, seeder};
use ppspp_core::HashFunction;

#[test]
fn interleaved_writes_and_reads_in_one_block() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(64 * 1024, 1024, 3, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    // Receive chunk 5 (gathered, not yet in the file), read a neighbour in
    // the same cache block (which loads the block), then read chunk 5.
    a.receive(&s, 5);
    a.receive(&s, 6);
    assert_eq!(a.read(6), s.chunk(6));
    a.receive(&s, 9);
    a.receive(&s, 10);
    assert_eq!(a.read(5), s.chunk(5));
    assert_eq!(a.read(10), s.chunk(10));
    assert_eq!(a.read(9), s.chunk(9));
    // Out of order and back again.
    for c in [40u64, 20, 21, 63, 0] {
        a.receive(&s, c);
        assert_eq!(a.read(c), s.chunk(c), "chunk {c}");
    }
    for c in [5u64, 6, 9, 10, 40, 20, 21, 63, 0] {
        assert_eq!(a.read(c), s.chunk(c), "chunk {c} again");
    }
}
