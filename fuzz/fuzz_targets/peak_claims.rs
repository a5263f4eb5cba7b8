//! Fuzz how a receiver with a bare swarm id settles the content size from
//! peak hashes (RFC 7574 §5.6; `merkle/verify/claim.rs`): forged claims of
//! every kind an attacker holding the whole tree can make (padded peaks of
//! larger counts, the tree seen from a higher layer, one root peak at any
//! layer, arbitrary lists) mixed with real chunks, inner-node children
//! passed off as chunks, and the true peaks. Nothing may panic; no wrong
//! data verifies; a proven size is the true one; and the true peaks are
//! always accepted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ppspp_core::merkle::peak_bins;
use ppspp_core::{Bin, ChunkIndex, ChunkSize, Hash, HashFunction, MerkleTree, PartialTree};

/// 64-byte chunks: a short last chunk may be two SHA-1 hashes long.
const CS: u64 = 64;

struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let (n, last, salt) = (input.byte(), input.byte(), input.byte());
    let chunks = u64::from(n % 48) + 1;
    let len = (chunks - 1) * CS + u64::from(last) % CS + 1;
    let content: Vec<u8> = (0..len).map(|i| (i * 31 + u64::from(salt)) as u8).collect();
    let hf = HashFunction::Sha1;
    let cs = ChunkSize::new(CS).unwrap();
    let tree = MerkleTree::from_bytes(&content, cs, hf).unwrap();
    let h = tree.root_bin().layer();
    let node = |layer: u32, offset: u64| {
        Bin::new(layer, offset)
            .and_then(|b| tree.node(b))
            .unwrap_or(hf.zero())
    };
    let real_chunk = |i: u64| content.chunks(CS as usize).nth(i as usize);
    let mut rx = PartialTree::new(hf, tree.root(), cs)
        .unwrap()
        .with_max_chunks(1 << 12);
    // The layer each claim sees the real tree from, to forge its uncles.
    let mut view = 0u32;
    while !input.0.is_empty() {
        let op = input.byte();
        match op % 7 {
            0 => {
                assert_eq!(rx.accept_peaks(&tree.peaks()), Ok(chunks), "the truth");
                view = 0;
            }
            // The padded peaks of some count, seen from layer `s`.
            1 => {
                let s = u32::from(input.byte()) % (h + 1);
                let count = u64::from(input.byte()) % (1 << (h - s)) + 1;
                let peaks: Vec<(Bin, Hash)> = peak_bins(count)
                    .into_iter()
                    .map(|b| (b, node(b.layer() + s, b.offset())))
                    .collect();
                if rx.accept_peaks(&peaks).is_ok() {
                    view = s;
                }
            }
            // One peak equal to the root at any layer.
            2 => {
                let layer = u32::from(input.byte()) % 14;
                if rx.accept_peaks(&[(Bin::new(layer, 0).unwrap(), tree.root())]).is_ok() {
                    view = h.saturating_sub(layer);
                }
            }
            // Arbitrary bins with real or made-up hashes.
            3 => {
                let k = input.byte() % 4 + 1;
                let peaks: Vec<(Bin, Hash)> = (0..k)
                    .map(|_| {
                        let (l, o, real) = (input.byte() % 8, input.byte() % 64, input.byte());
                        let bin = Bin::new(u32::from(l), u64::from(o)).unwrap();
                        let hash = if real % 2 == 0 {
                            node(u32::from(l), u64::from(o))
                        } else {
                            hf.digest(&[real])
                        };
                        (bin, hash)
                    })
                    .collect();
                let _ = rx.accept_peaks(&peaks);
            }
            // A chunk of the claim held, as the attacker would send it: real
            // data (view 0) or the children of the inner node it stands for,
            // with the uncles of that view up to the claim's peak.
            4 | 5 => {
                let Some(count) = rx.chunk_count() else {
                    continue;
                };
                let i = u64::from(input.byte()) % count;
                let Some(peak) = peak_bins(count).into_iter().find(|p| p.contains_chunk(ChunkIndex(i)))
                else {
                    continue;
                };
                let mut cur = Bin::leaf(ChunkIndex(i)).unwrap();
                while cur != peak {
                    let sib = cur.sibling().unwrap();
                    let _ = rx.accept_uncle(sib, node(sib.layer() + view, sib.offset()));
                    cur = cur.parent().unwrap();
                }
                let bytes: Vec<u8> = if view == 0 && op % 7 == 4 {
                    match real_chunk(i) {
                        Some(c) => c.to_vec(),
                        None => continue,
                    }
                } else {
                    let s = view.max(1);
                    let mut d = node(s - 1, 2 * i).as_bytes().to_vec();
                    d.extend_from_slice(node(s - 1, 2 * i + 1).as_bytes());
                    d
                };
                let ok = rx.verify_chunk(ChunkIndex(i), &bytes).is_ok();
                assert!(!ok || real_chunk(i) == Some(&bytes[..]), "wrong data verified as {i}");
            }
            // A real chunk with the true uncles.
            _ => {
                let i = u64::from(input.byte()) % chunks;
                for (bin, hash) in tree.uncles(ChunkIndex(i), |_| false) {
                    let _ = rx.accept_uncle(bin, hash);
                }
                let _ = rx.verify_chunk(ChunkIndex(i), real_chunk(i).unwrap());
            }
        }
        if let Some(got) = rx.content_len() {
            assert_eq!(got, len, "a false length was proven");
        }
        if rx.size_proven() {
            assert_eq!(rx.chunk_count(), Some(chunks), "a false count was proven");
        }
        let held = rx.chunk_count().unwrap_or(0);
        for i in 0..held.min(1 << 12) {
            assert!(!rx.is_verified(ChunkIndex(i)) || i < chunks, "chunk {i} past the end");
        }
    }
});
