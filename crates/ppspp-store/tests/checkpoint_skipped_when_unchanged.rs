//! A checkpoint is skipped when nothing changed since the last one (written
//! or restored), and written as soon as something did.

mod common;

use common::{content_path, open, seeder};
use ppspp_core::HashFunction;
use ppspp_store::checkpoint_path;

#[test]
fn an_unchanged_snapshot_is_not_written_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let ck = checkpoint_path(&path);
    let s = seeder(6 * 64, 64, 16, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    a.receive(&s, 2);
    a.checkpoint();
    assert!(ck.exists());

    // Removing the file makes a skipped checkpoint visible.
    std::fs::remove_file(&ck).unwrap();
    a.checkpoint();
    assert!(!ck.exists(), "nothing changed: skipped");

    a.receive(&s, 3);
    a.checkpoint();
    assert!(ck.exists(), "a chunk was written: saved");
    drop(a);

    // The state restored from a trusted checkpoint counts as saved.
    let (mut b, _) = open(&path, &s.meta);
    std::fs::remove_file(&ck).unwrap();
    b.checkpoint();
    assert!(!ck.exists());
    b.receive(&s, 5);
    b.checkpoint();
    assert!(ck.exists());
}
