//! When the content file's length and modification time are what the
//! checkpoint recorded, the checkpoint is trusted without re-hashing (so a
//! change that keeps both goes unnoticed: the cheap check is by design).

mod common;

use std::os::unix::fs::FileExt;

use common::{chunks_of, content_path, open, seeder, trusted};
use ppspp_core::HashFunction;

#[test]
fn an_untouched_file_is_trusted_without_rehashing() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(8 * 32, 32, 10, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    for c in [1, 2, 6] {
        a.receive(&s, c);
    }
    a.checkpoint();
    drop(a);
    let recorded = std::fs::metadata(&path).unwrap().modified().unwrap();

    // Change a byte but put the modification time back.
    let file = std::fs::File::options().write(true).open(&path).unwrap();
    file.write_all_at(&[s.data[2 * 32] ^ 1], 2 * 32).unwrap();
    file.set_modified(recorded).unwrap();
    drop(file);

    let (b, report) = open(&path, &s.meta);
    assert_eq!(report, trusted());
    assert_eq!(chunks_of(&b.have), vec![1, 2, 6]);

    // Touching the time alone is enough to re-hash, and finds the change.
    common::set_mtime(&path, 1_234_567_890);
    drop(b);
    let (b, report) = open(&path, &s.meta);
    assert_eq!((report.rehashed, report.dropped), (3, 1));
    assert_eq!(chunks_of(&b.have), vec![1, 6]);
}
