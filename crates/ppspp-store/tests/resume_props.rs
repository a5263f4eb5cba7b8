//! Property test: whatever the order of chunks, checkpoints and crashes, a
//! download resumes with every checkpointed chunk, claims only chunks whose
//! bytes are right, and finishes with the seeder's exact content.

mod common;

use std::collections::BTreeSet;

use common::{chunks_of, content_path, open, seeder};
use ppspp_core::{ChunkIndex, HashFunction};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Step {
    Receive(u64),
    Checkpoint,
    Crash,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        prop_oneof![
            6 => any::<u64>().prop_map(Step::Receive),
            2 => Just(Step::Checkpoint),
            1 => Just(Step::Crash),
        ],
        0..60,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn downloads_survive_crashes(
        chunks in 1u64..40,
        tail in 1usize..=16,
        meta_len in any::<bool>(),
        salt in any::<u8>(),
        plan in steps(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = content_path(&dir);
        let s = seeder((chunks as usize - 1) * 16 + tail, 16, salt, HashFunction::Sha1);
        let meta = if meta_len { s.meta.clone().with_content_len(s.data.len() as u64) } else { s.meta.clone() };
        let n = s.chunk_count();
        let (mut l, _) = open(&path, &meta);
        let mut saved: BTreeSet<u64> = BTreeSet::new();
        for step in plan {
            match step {
                Step::Receive(c) => {
                    let c = c % n;
                    if !l.have.contains(ChunkIndex(c)) {
                        l.receive(&s, c);
                    }
                }
                Step::Checkpoint => {
                    l.checkpoint();
                    saved = chunks_of(&l.have).into_iter().collect();
                }
                Step::Crash => {
                    drop(l);
                    let (back, report) = open(&path, &meta);
                    l = back;
                    prop_assert_eq!(report.warning, None);
                    prop_assert_eq!(report.dropped, 0);
                    let have: BTreeSet<u64> = chunks_of(&l.have).into_iter().collect();
                    prop_assert_eq!(&have, &saved);
                    prop_assert_eq!(l.tree.verified_count(), have.len() as u64);
                    for &c in &have {
                        prop_assert_eq!(l.read(c), s.chunk(c));
                    }
                }
            }
        }
        for c in 0..n {
            if !l.have.contains(ChunkIndex(c)) {
                l.receive(&s, c);
            }
        }
        l.checkpoint();
        drop(l);
        prop_assert_eq!(std::fs::read(&path).unwrap(), s.data.clone());
        let (l, report) = open(&path, &meta);
        prop_assert_eq!(report.rehashed, 0);
        prop_assert_eq!(l.have.count(), n);
    }
}
