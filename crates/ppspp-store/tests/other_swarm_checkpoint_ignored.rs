//! A checkpoint written for another swarm (another root, hash function,
//! chunk size or size) is ignored with a warning, and the file is kept.

mod common;

use common::{content_path, open, seeder};
use ppspp_core::{ChunkSize, HashFunction};

#[test]
fn a_checkpoint_of_another_swarm_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(16 * 32, 32, 13, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    for c in 0..4 {
        a.receive(&s, c);
    }
    a.checkpoint();
    drop(a);

    let other = seeder(16 * 32, 32, 14, HashFunction::Sha1);
    let other_fn = seeder(16 * 32, 32, 13, HashFunction::Sha256);
    let mut other_cs = s.meta.clone();
    other_cs.chunk_size = ChunkSize::new(64).unwrap();
    let other_size = s.meta.clone().with_chunk_count(17);
    for (meta, why) in [
        (&other.meta, "another swarm"),
        (&other_fn.meta, "another swarm"),
        (&other_cs, "chunk size"),
        (&other_size, "size"),
    ] {
        let (b, report) = open(&path, meta);
        let warning = report.warning.expect("a warning");
        assert!(warning.contains(why), "{warning}");
        assert!(b.have.is_empty());
        assert_eq!(b.tree.root(), meta.root);
        assert_eq!(std::fs::read(&path).unwrap(), s.data[..4 * 32]);
    }

    // The right swarm, with or without the size in its metadata.
    for meta in [s.meta.clone(), s.meta.clone().with_content_len(16 * 32)] {
        let (b, report) = open(&path, &meta);
        assert_eq!(report.warning, None);
        assert_eq!(b.have.count(), 4);
    }
}
