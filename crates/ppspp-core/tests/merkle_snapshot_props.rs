//! Property test: a receiver's partial tree saved as its trusted frontier and
//! restored is the same tree — same trusted hashes, same verified chunks,
//! same uncles served — and keeps verifying; a corrupt saved hash is refused.

use std::collections::BTreeSet;

use ppspp_core::{Bin, Binmap, ChunkIndex, ChunkSize, Hash, HashFunction, MerkleTree, PartialTree};
use proptest::prelude::*;

fn holds(held: &BTreeSet<u64>, bin: Bin) -> bool {
    held.range(bin.first_chunk().0..=bin.last_chunk().0)
        .next()
        .is_some()
}

/// Receives `order` from `tree` as a leecher would: peaks first, then the
/// uncles the sender chooses, then the chunk.
fn receive(tree: &MerkleTree, data: &[u8], cs: usize, rx: &mut PartialTree, order: &[u64]) {
    let mut held: BTreeSet<u64> = (0..tree.chunk_count())
        .filter(|c| rx.is_verified(ChunkIndex(*c)))
        .collect();
    for &c in order {
        if held.is_empty() {
            rx.accept_peaks(&tree.peaks()).unwrap();
        }
        for (b, h) in tree.uncles(ChunkIndex(c), |b| holds(&held, b)) {
            rx.accept_uncle(b, h).unwrap();
        }
        let bytes = data.chunks(cs).nth(c as usize).unwrap();
        rx.verify_chunk(ChunkIndex(c), bytes).unwrap();
        held.insert(c);
    }
}

fn verified(rx: &PartialTree, n: u64) -> Binmap {
    let mut map = Binmap::new();
    for c in (0..n).filter(|c| rx.is_verified(ChunkIndex(*c))) {
        map.set_chunk(ChunkIndex(c));
    }
    map
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn restored_partial_trees_equal_the_original(
        cs in 1usize..=8,
        len in 1usize..=400,
        order in any::<u64>(),
        take in 0.0f64..=1.0,
        corrupt in any::<(usize, usize, u8)>(),
        f in prop::sample::select(HashFunction::ALL.to_vec()),
    ) {
        let data: Vec<u8> = (0..len).map(|i| (i as u64 * 2654435761 % 256) as u8).collect();
        let size = ChunkSize::new(cs as u64).unwrap();
        let tree = MerkleTree::from_bytes(&data, size, f).unwrap();
        let n = tree.chunk_count();
        // A seeded shuffle of the chunks; the first `take` of them arrive.
        let mut chunks: Vec<u64> = (0..n).collect();
        let mut s = order | 1;
        for i in (1..chunks.len()).rev() {
            s ^= s << 13; s ^= s >> 7; s ^= s << 17;
            chunks.swap(i, (s % (i as u64 + 1)) as usize);
        }
        let got = ((n as f64 * take) as usize).max(1);
        let (first, rest) = chunks.split_at(got);

        let mut rx = PartialTree::new(f, tree.root(), size).unwrap();
        receive(&tree, &data, cs, &mut rx, first);
        let have = verified(&rx, n);
        let frontier: Vec<(Bin, Hash)> = rx.trusted_frontier().collect();
        let mut back = PartialTree::restore(
            f, tree.root(), size, rx.proven_chunk_count(), rx.content_len(),
            frontier.iter().copied(), &have,
        ).unwrap();
        for b in 0..=tree.root_bin().base_right().0 {
            prop_assert_eq!(back.trusted(Bin(b)), rx.trusted(Bin(b)), "bin {}", b);
        }
        prop_assert_eq!(verified(&back, n), have.clone());
        prop_assert_eq!(back.content_len(), rx.content_len());
        prop_assert_eq!(back.peaks(), Some(tree.peaks()));
        for c in 0..n {
            let chunk = ChunkIndex(c);
            prop_assert_eq!(back.uncles(chunk, |_| false), rx.uncles(chunk, |_| false));
            if have.contains(chunk) {
                prop_assert_eq!(back.uncles(chunk, |_| false), Some(tree.uncles(chunk, |_| false)));
            }
        }

        // The restored tree takes the rest of the content.
        receive(&tree, &data, cs, &mut back, rest);
        prop_assert_eq!(back.verified_count(), n);
        prop_assert_eq!(back.content_len(), Some(len as u64));

        // Any flipped bit in a saved hash is refused.
        let (which, byte, bit) = corrupt;
        let mut bad = frontier.clone();
        let i = which % bad.len();
        let mut raw = bad[i].1.as_bytes().to_vec();
        let at = byte % raw.len();
        raw[at] ^= 1 << (bit % 8);
        bad[i].1 = Hash::from_slice(&raw);
        let refused = PartialTree::restore(
            f, tree.root(), size, rx.proven_chunk_count(), rx.content_len(), bad, &have,
        );
        prop_assert!(refused.is_err());
    }
}
