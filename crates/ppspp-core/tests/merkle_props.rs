//! Property tests of the Merkle module: the parallel streaming builder
//! against a naive recursive reference, peaks round trips, and a receiver
//! that verifies every chunk in random order — and refuses corrupt chunks
//! and uncles without being poisoned by them.

use std::collections::BTreeSet;
use std::io::Read;

use ppspp_core::merkle::{
    self, chunk_count_from_peaks, peak_bins, root_from_peaks, BuildOptions, Parallelism,
};
use ppspp_core::{
    Bin, ChunkIndex, ChunkSize, Hash, HashFunction, MerkleTree, PartialTree, VerifyError,
};
use proptest::prelude::*;

/// RFC 7574 §5.1 written as plainly as possible: the hash of `bin` over
/// `leaves`, with empty subtrees (and parents of two of them) all zero.
fn reference_node(f: HashFunction, leaves: &[Hash], bin: Bin) -> Hash {
    if bin.first_chunk().0 >= leaves.len() as u64 {
        return f.zero();
    }
    match bin.children() {
        None => leaves[bin.first_chunk().0 as usize],
        Some((l, r)) => f.parent(&reference_node(f, leaves, l), &reference_node(f, leaves, r)),
    }
}

fn reference_root_bin(n: u64) -> Bin {
    let mut layer = 0;
    while (1u64 << layer) < n {
        layer += 1;
    }
    Bin::new(layer, 0).unwrap()
}

fn leaves_of(f: HashFunction, data: &[u8], cs: usize) -> Vec<Hash> {
    data.chunks(cs).map(|c| f.digest(c)).collect()
}

/// A reader that hands out 1–7 bytes per call.
struct ShortReads<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for ShortReads<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.step = self.step % 7 + 1;
        let n = self.step.min(buf.len()).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// A small deterministic generator for chunk orders and corruption spots.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn shuffled(&mut self, n: u64) -> Vec<u64> {
        let mut v: Vec<u64> = (0..n).collect();
        for i in (1..v.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            v.swap(i, j);
        }
        v
    }
}

fn hash_fn() -> impl Strategy<Value = HashFunction> {
    prop::sample::select(HashFunction::ALL.to_vec())
}

/// Content up to ~200 chunks with a chunk size of 1..=64 or one of a few
/// larger sizes.
fn content() -> impl Strategy<Value = (usize, Vec<u8>)> {
    prop_oneof![
        1usize..=64,
        prop::sample::select(vec![100usize, 256, 1000, 1024])
    ]
    .prop_flat_map(|cs| (Just(cs), prop::collection::vec(any::<u8>(), 1..=cs * 200)))
}

/// Whether any chunk in `held` lies under `bin`.
fn holds(held: &BTreeSet<u64>, bin: Bin) -> bool {
    held.range(bin.first_chunk().0..=bin.last_chunk().0)
        .next()
        .is_some()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn builders_agree_with_reference(
        (cs, data) in content(),
        f in hash_fn(),
        block_chunks in 1usize..=16,
        depth in 1usize..=3,
        parallel in any::<bool>(),
    ) {
        let size = ChunkSize::new(cs as u64).unwrap();
        let leaves = leaves_of(f, &data, cs);
        let n = leaves.len() as u64;
        let root_bin = reference_root_bin(n);
        let expect_root = reference_node(f, &leaves, root_bin);
        let parallelism = if parallel { Parallelism::Parallel } else { Parallelism::Sequential };
        let opts = BuildOptions { block_bytes: block_chunks * cs, queue_depth: depth, parallelism };

        let streamed = MerkleTree::from_reader_with(
            ShortReads { data: &data, step: block_chunks }, size, f, &opts).unwrap();
        let in_memory = MerkleTree::from_bytes(&data, size, f).unwrap();
        let in_memory_par = MerkleTree::from_bytes_with(&data, size, f, Parallelism::Parallel).unwrap();
        let by_chunks = MerkleTree::from_chunks(data.chunks(cs), size, f).unwrap();
        let by_leaves = MerkleTree::from_leaf_hashes(f, leaves.clone(), data.len() as u64, size).unwrap();
        for tree in [&streamed, &in_memory, &in_memory_par, &by_chunks, &by_leaves] {
            prop_assert_eq!(tree.root(), expect_root);
            prop_assert_eq!(tree.root_bin(), root_bin);
            prop_assert_eq!(tree.chunk_count(), n);
            prop_assert_eq!(tree.content_len(), data.len() as u64);
            for b in 0..=root_bin.base_right().0 {
                prop_assert_eq!(tree.node(Bin(b)), Some(reference_node(f, &leaves, Bin(b))), "bin {}", b);
            }
            prop_assert_eq!(tree.node(root_bin.base_right().0.checked_add(1).map(Bin).unwrap()), None);
            prop_assert_eq!(tree.node(Bin::NONE), None);
            if let Some(p) = root_bin.parent() {
                prop_assert_eq!(tree.node(p), None);
            }
        }
        let info = merkle::root_from_reader_with(
            ShortReads { data: &data, step: depth }, size, f, &opts).unwrap();
        prop_assert_eq!(info.root, expect_root);
        prop_assert_eq!(info.chunk_count, n);
        prop_assert_eq!(info.content_len, data.len() as u64);
    }

    #[test]
    fn peaks_round_trip(n in 1u64..=(1u64 << 63)) {
        let bins = peak_bins(n);
        prop_assert_eq!(bins.len() as u32, n.count_ones());
        prop_assert_eq!(chunk_count_from_peaks(&bins), Some(n));
        // Dropping any peak breaks the decomposition, except the last one,
        // which gives a smaller, still valid count.
        for i in 0..bins.len() {
            let mut fewer = bins.clone();
            fewer.remove(i);
            let got = chunk_count_from_peaks(&fewer);
            if i + 1 == bins.len() {
                prop_assert_eq!(got, (i > 0).then(|| n - bins[i].chunk_count()));
            } else {
                prop_assert_eq!(got, None);
            }
        }
    }

    #[test]
    fn tree_peaks_give_the_root((cs, data) in content(), f in hash_fn()) {
        let tree = MerkleTree::from_bytes(&data, ChunkSize::new(cs as u64).unwrap(), f).unwrap();
        let peaks = tree.peaks();
        let bins: Vec<Bin> = peaks.iter().map(|p| p.0).collect();
        prop_assert_eq!(&bins, &peak_bins(tree.chunk_count()));
        prop_assert_eq!(chunk_count_from_peaks(&bins), Some(tree.chunk_count()));
        prop_assert_eq!(root_from_peaks(f, &peaks), Some(tree.root()));
        for c in 0..tree.chunk_count() {
            let peak = tree.peak_for(ChunkIndex(c)).unwrap();
            prop_assert!(peak.contains_chunk(ChunkIndex(c)));
            prop_assert!(bins.contains(&peak));
        }
        prop_assert_eq!(tree.peak_for(ChunkIndex(tree.chunk_count())), None);
    }

    #[test]
    fn receiver_verifies_every_chunk_in_any_order(
        (cs, data) in content(),
        f in hash_fn(),
        seed in any::<u64>(),
        know_size in any::<bool>(),
    ) {
        let size = ChunkSize::new(cs as u64).unwrap();
        let tree = MerkleTree::from_bytes(&data, size, f).unwrap();
        let n = tree.chunk_count();
        let mut rx = if know_size {
            PartialTree::with_chunk_count(f, tree.root(), size, n).unwrap()
        } else {
            PartialTree::new(f, tree.root(), size).unwrap()
        };
        let mut held = BTreeSet::new();
        let mut rng = Rng(seed | 1);
        // A chunk two hashes long could be an inner node's children while
        // nothing has shown the claimed tree's height: it waits until a
        // chunk of another length verified (a downloader asks again).
        let two_hashes = |c: u64| data.chunks(cs).nth(c as usize).unwrap().len() == 2 * f.len();
        let (mut order, ambiguous): (Vec<u64>, Vec<u64>) =
            rng.shuffled(n).into_iter().partition(|&c| !two_hashes(c));
        if order.is_empty() {
            // Every chunk is two hashes long: a bare id cannot tell this
            // content from inner nodes, so nothing verifies.
            rx.accept_peaks(&tree.peaks()).unwrap();
            let first = data.chunks(cs).next().unwrap();
            prop_assert_eq!(rx.verify_chunk(ChunkIndex(0), first), Err(VerifyError::Ambiguous(ChunkIndex(0))));
            return Ok(());
        }
        order.extend(ambiguous);
        for c in order {
            let chunk = ChunkIndex(c);
            let peaks = tree.peaks_needed(!held.is_empty());
            if !peaks.is_empty() {
                prop_assert_eq!(rx.accept_peaks(&peaks), Ok(n));
            }
            let uncles = tree.uncles(chunk, |b| holds(&held, b));
            for w in uncles.windows(2) {
                prop_assert!(w[0].0.layer() > w[1].0.layer(), "uncles not in descending layers");
            }
            for (bin, hash) in &uncles {
                prop_assert_eq!(rx.trusted(*bin), None, "sent {:?}, which the receiver holds", bin);
                prop_assert!(tree.peak_for(chunk).unwrap().contains(*bin));
                rx.accept_uncle(*bin, *hash).unwrap();
            }
            let bytes = data.chunks(cs).nth(c as usize).unwrap();
            prop_assert_eq!(rx.verify_chunk(chunk, bytes), Ok(()));
            prop_assert!(rx.is_verified(chunk));
            held.insert(c);
            // Everything verified so far is trusted with the sender's hashes.
            prop_assert_eq!(rx.trusted(Bin::leaf(chunk).unwrap()), tree.node(Bin::leaf(chunk).unwrap()));
        }
        prop_assert_eq!(rx.content_len(), Some(data.len() as u64));
        prop_assert_eq!(rx.pending_len(), 0);
    }

    #[test]
    fn corruption_is_refused_and_does_not_poison(
        (cs, data) in content(),
        seed in any::<u64>(),
    ) {
        let f = HashFunction::Sha1;
        let size = ChunkSize::new(cs as u64).unwrap();
        let tree = MerkleTree::from_bytes(&data, size, f).unwrap();
        let n = tree.chunk_count();
        let mut rx = PartialTree::new(f, tree.root(), size).unwrap();
        let mut held = BTreeSet::new();
        let mut rng = Rng(seed | 1);
        let all_bins: Vec<Bin> = (0..=tree.root_bin().base_right().0).map(Bin).collect();
        // A chunk two hashes long could be an inner node's children while
        // nothing has shown the claimed tree's height: it waits until a
        // chunk of another length verified (a downloader asks again).
        let two_hashes = |c: u64| data.chunks(cs).nth(c as usize).unwrap().len() == 2 * f.len();
        let (mut order, ambiguous): (Vec<u64>, Vec<u64>) =
            rng.shuffled(n).into_iter().partition(|&c| !two_hashes(c));
        if order.is_empty() {
            // Every chunk is two hashes long: a bare id cannot tell this
            // content from inner nodes, so nothing verifies.
            rx.accept_peaks(&tree.peaks()).unwrap();
            let first = data.chunks(cs).next().unwrap();
            prop_assert_eq!(rx.verify_chunk(ChunkIndex(0), first), Err(VerifyError::Ambiguous(ChunkIndex(0))));
            return Ok(());
        }
        order.extend(ambiguous);
        for c in order {
            let chunk = ChunkIndex(c);
            let peaks = tree.peaks_needed(!held.is_empty());
            if !peaks.is_empty() {
                rx.accept_peaks(&peaks).unwrap();
            }
            let uncles = tree.uncles(chunk, |b| holds(&held, b));
            let bytes = data.chunks(cs).nth(c as usize).unwrap();

            // One bad attempt: flip a byte of the chunk or of one uncle.
            let before: Vec<Option<Hash>> = all_bins.iter().map(|b| rx.trusted(*b)).collect();
            let mut bad_uncles = uncles.clone();
            let mut bad_bytes = bytes.to_vec();
            let target = rng.below(uncles.len() as u64 + 1) as usize;
            if target < uncles.len() {
                let mut raw = bad_uncles[target].1.as_bytes().to_vec();
                let i = rng.below(raw.len() as u64) as usize;
                raw[i] ^= 1 << rng.below(8);
                bad_uncles[target].1 = Hash::from_slice(&raw);
            } else {
                let i = rng.below(bad_bytes.len() as u64) as usize;
                bad_bytes[i] ^= 1 << rng.below(8);
            }
            for (bin, hash) in &bad_uncles {
                rx.accept_uncle(*bin, *hash).unwrap();
            }
            prop_assert_eq!(rx.verify_chunk(chunk, &bad_bytes), Err(VerifyError::BadChunk(chunk)));
            prop_assert!(!rx.is_verified(chunk));
            let after: Vec<Option<Hash>> = all_bins.iter().map(|b| rx.trusted(*b)).collect();
            prop_assert_eq!(before, after, "a failed verification changed the trusted set");
            // The candidates it used are gone: without a resend the right
            // data cannot verify unless no uncles were needed.
            if !uncles.is_empty() {
                prop_assert!(matches!(rx.verify_chunk(chunk, bytes), Err(VerifyError::MissingHash(_))));
            }

            // The right hashes and data still verify.
            for (bin, hash) in &uncles {
                rx.accept_uncle(*bin, *hash).unwrap();
            }
            prop_assert_eq!(rx.verify_chunk(chunk, bytes), Ok(()));
            held.insert(c);
            // Now a contradicting uncle for a trusted bin fails at once.
            if let Some((bin, hash)) = uncles.first() {
                let mut raw = hash.as_bytes().to_vec();
                raw[0] ^= 0x80;
                prop_assert_eq!(rx.accept_uncle(*bin, Hash::from_slice(&raw)), Err(VerifyError::BadHash(*bin)));
            }
        }
        prop_assert_eq!(rx.content_len(), Some(data.len() as u64));
    }
}
