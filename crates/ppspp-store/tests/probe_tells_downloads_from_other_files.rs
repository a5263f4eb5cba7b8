//! `probe_download` tells a download of the swarm (content file and its
//! checkpoint) from a file that is not one, without touching either.

mod common;

use common::{content_path, open, seeder};
use ppspp_core::HashFunction;
use ppspp_store::{checkpoint_path, probe_download, Existing};

#[test]
fn downloads_and_other_files_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(16 * 32, 32, 21, HashFunction::Sha1);
    assert_eq!(probe_download(&path, &s.meta).unwrap(), Existing::Nothing);

    std::fs::write(&path, b"someone's notes").unwrap();
    match probe_download(&path, &s.meta).unwrap() {
        Existing::Other { len, why } => {
            assert_eq!(len, 15);
            assert!(why.contains("no checkpoint"), "{why}");
        }
        e => panic!("a file without a checkpoint is {e:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"someone's notes");
    std::fs::remove_file(&path).unwrap();

    // A download begun: 4 of 16 chunks.
    let (mut a, _) = open(&path, &s.meta);
    for c in 0..4 {
        a.receive(&s, c);
    }
    a.checkpoint();
    drop(a);
    let begun = Existing::Download {
        chunks: 4,
        complete: false,
    };
    assert_eq!(probe_download(&path, &s.meta).unwrap(), begun);

    // Of another swarm: not ours to overwrite.
    let other = seeder(16 * 32, 32, 22, HashFunction::Sha1);
    match probe_download(&path, &other.meta).unwrap() {
        Existing::Other { why, .. } => assert!(why.contains("another swarm"), "{why}"),
        e => panic!("another swarm's download is {e:?}"),
    }

    // Completed.
    let (mut a, _) = open(&path, &s.meta);
    for c in 4..16 {
        a.receive(&s, c);
    }
    a.checkpoint();
    drop(a);
    let done = Existing::Download {
        chunks: 16,
        complete: true,
    };
    assert_eq!(probe_download(&path, &s.meta).unwrap(), done);

    // A damaged checkpoint says so.
    std::fs::write(checkpoint_path(&path), b"PPSPPCKP garbage").unwrap();
    match probe_download(&path, &s.meta).unwrap() {
        Existing::Other { why, .. } => assert!(why.contains("unreadable"), "{why}"),
        e => panic!("a damaged checkpoint is {e:?}"),
    }
}
