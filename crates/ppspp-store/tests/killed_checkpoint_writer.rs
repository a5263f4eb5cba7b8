//! A checkpoint writer killed before its rename leaves `PATH.ppspp.tmp`
//! behind: the previous checkpoint is used and the leftover removed.

mod common;

use common::{chunks_of, content_path, open, seeder, trusted};
use ppspp_core::HashFunction;
use ppspp_store::checkpoint_path;

#[test]
fn a_leftover_temporary_checkpoint_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(10 * 16, 16, 15, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    for c in [0, 1, 2] {
        a.receive(&s, c);
    }
    a.checkpoint();
    let old = std::fs::read(checkpoint_path(&path)).unwrap();
    // The next checkpoint, as far as a killed writer got with it.
    for c in [3, 4] {
        a.receive(&s, c);
    }
    a.checkpoint();
    let newer = std::fs::read(checkpoint_path(&path)).unwrap();
    drop(a);
    let tmp = dir.path().join("content.bin.ppspp.tmp");
    std::fs::write(&tmp, &newer[..newer.len() / 2]).unwrap();
    std::fs::write(checkpoint_path(&path), &old).unwrap();

    let (b, report) = open(&path, &s.meta);
    assert_eq!(chunks_of(&b.have), vec![0, 1, 2]);
    // Chunks 3 and 4 were written after the checkpoint in use.
    assert_eq!((report.rehashed, report.dropped), (3, 0));
    assert_eq!(report.warning, None);
    assert!(!tmp.exists());
    drop(b);

    // The re-hash was recorded: the next start trusts it.
    let (b, report) = open(&path, &s.meta);
    assert_eq!(report, trusted());
    assert_eq!(chunks_of(&b.have), vec![0, 1, 2]);
}
