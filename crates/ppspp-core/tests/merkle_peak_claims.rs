//! Which peak lists a receiver with a bare swarm id accepts, and that no
//! false size they claim can be proven (RFC 7574 §5.6, issue 21 item 2).
//!
//! For content of L chunks in a tree of height h, the lists that hash up to
//! the root are exactly (`claim.rs` explains why):
//! - the exact peaks of a count L' ≥ L of height h whose last peak holds a
//!   real chunk, with the zero-padded tree's hashes (L' = L is the truth);
//! - the same for the tree seen from layer s (inner nodes taken as leaves:
//!   counts from ⌈L / 2^s⌉), which includes one peak equal to the root at
//!   any layer up to h;
//! - one peak equal to the root at a layer above h.
//!
//! The first property checks that `accept_peaks` accepts exactly these,
//! whatever else is thrown at it; the second that under any of them but the
//! truth, the best an attacker holding the whole tree can send never proves
//! a size, never verifies wrong data, and gives way to the true peaks.

use ppspp_core::merkle::{peak_bins, MerkleTree};
use ppspp_core::{Bin, ChunkIndex, ChunkSize, Hash, HashFunction, PartialTree, VerifyError};
use proptest::prelude::*;

const F: HashFunction = HashFunction::Sha1;
/// 64-byte chunks: a short last chunk may be two SHA-1 hashes long.
const CS: usize = 64;
/// How many layers above the real root the taller claims reach.
const TALLER: u32 = 3;

/// A peak list, the count it claims, and the layer it sees the real tree
/// from (`None`: taller than the tree).
type Claim = (Vec<(Bin, Hash)>, u64, Option<u32>);

struct Content {
    data: Vec<u8>,
    tree: MerkleTree,
}

impl std::fmt::Debug for Content {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Content({} bytes, {} chunks)", self.data.len(), self.l())
    }
}

impl Content {
    fn new(chunks: usize, last: usize, salt: u8) -> Content {
        let len = (chunks - 1) * CS + last;
        let data: Vec<u8> = (0..len)
            .map(|i| ((i * 31 + usize::from(salt) * 7) % 251) as u8)
            .collect();
        let tree = MerkleTree::from_bytes(&data, ChunkSize::new(CS as u64).unwrap(), F).unwrap();
        Content { data, tree }
    }

    fn l(&self) -> u64 {
        self.tree.chunk_count()
    }

    fn h(&self) -> u32 {
        self.tree.root_bin().layer()
    }

    /// The zero-padded tree's hash of the node at `layer`, `offset`.
    fn node(&self, layer: u32, offset: u64) -> Hash {
        Bin::new(layer, offset)
            .and_then(|b| self.tree.node(b))
            .unwrap_or(F.zero())
    }

    /// The peaks of `count` in the tree seen from layer `s`.
    fn coarse_peaks(&self, s: u32, count: u64) -> Vec<(Bin, Hash)> {
        peak_bins(count)
            .into_iter()
            .map(|b| (b, self.node(b.layer() + s, b.offset())))
            .collect()
    }

    /// Every list that must be accepted, with the count it claims and the
    /// layer `s` it sees the real tree from (`None`: taller than the tree).
    fn acceptable(&self) -> Vec<Claim> {
        let mut all = Vec::new();
        for s in 0..=self.h() {
            let real = self.l().div_ceil(1 << s);
            for count in real..=(1u64 << (self.h() - s)) {
                // Its last peak must hold a real (super-)chunk.
                let low = count & count.wrapping_neg();
                if count == real || count - low < real {
                    all.push((self.coarse_peaks(s, count), count, Some(s)));
                }
            }
        }
        for k in self.h() + 1..=self.h() + TALLER {
            all.push((
                vec![(Bin::new(k, 0).unwrap(), self.tree.root())],
                1 << k,
                None,
            ));
        }
        all
    }

    /// The count a list claims when it is one peak equal to the root at
    /// a layer above the tree's, however high (`acceptable` lists only the
    /// first `TALLER` of them; bent lists reach others).
    fn taller(&self, list: &[(Bin, Hash)]) -> Option<u64> {
        let [(bin, hash)] = list else { return None };
        let k = bin.layer();
        let one_root = *hash == self.tree.root() && *bin == Bin::new(k, 0)?;
        (one_root && k > self.h()).then(|| 1u64 << k)
    }

    fn receiver(&self) -> PartialTree {
        PartialTree::new(F, self.tree.root(), ChunkSize::new(CS as u64).unwrap()).unwrap()
    }
}

fn content() -> impl Strategy<Value = Content> {
    (1usize..=40, 1usize..=CS, any::<u8>()).prop_map(|(n, last, salt)| Content::new(n, last, salt))
}

/// A way to bend a list.
#[derive(Clone, Debug)]
enum Mutation {
    FlipHash(usize, u8),
    Swap(usize, usize),
    Drop(usize),
    Append(u32, u64),
    MoveBin(usize, u64),
    Keep,
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipHash(i, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Mutation::Swap(i, j)),
        any::<usize>().prop_map(Mutation::Drop),
        (0u32..8, 0u64..64).prop_map(|(l, o)| Mutation::Append(l, o)),
        (any::<usize>(), 0u64..128).prop_map(|(i, b)| Mutation::MoveBin(i, b)),
        Just(Mutation::Keep),
    ]
}

fn bend(c: &Content, mut list: Vec<(Bin, Hash)>, m: &Mutation) -> Vec<(Bin, Hash)> {
    let n = list.len().max(1);
    match *m {
        Mutation::FlipHash(i, bit) if !list.is_empty() => {
            let mut raw = list[i % n].1.as_bytes().to_vec();
            raw[0] ^= 1 << bit;
            list[i % n].1 = Hash::from_slice(&raw);
        }
        Mutation::Swap(i, j) if !list.is_empty() => list.swap(i % n, j % n),
        Mutation::Drop(i) if !list.is_empty() => {
            list.remove(i % n);
        }
        Mutation::Append(l, o) => list.push((Bin::new(l, o).unwrap(), c.node(l, o))),
        Mutation::MoveBin(i, b) if !list.is_empty() => list[i % n].0 = Bin(b),
        _ => {}
    }
    list
}

/// A list to try: a bent acceptable one, random bins with real or random
/// hashes, or another content's peaks.
#[derive(Clone, Debug)]
enum Source {
    Acceptable(usize, Mutation),
    Random(Vec<(u32, u64, bool, u8)>),
    Other(usize, u8),
}

fn source() -> impl Strategy<Value = Source> {
    prop_oneof![
        3 => (any::<usize>(), mutation()).prop_map(|(i, m)| Source::Acceptable(i, m)),
        1 => prop::collection::vec((0u32..8, 0u64..64, any::<bool>(), any::<u8>()), 1..5)
            .prop_map(Source::Random),
        1 => (1usize..=40, any::<u8>()).prop_map(|(n, s)| Source::Other(n, s)),
    ]
}

fn list_of(c: &Content, acceptable: &[Claim], s: &Source) -> Vec<(Bin, Hash)> {
    match s {
        Source::Acceptable(i, m) => bend(c, acceptable[i % acceptable.len()].0.clone(), m),
        Source::Random(entries) => entries
            .iter()
            .map(|&(l, o, real, byte)| {
                let hash = if real {
                    c.node(l, o)
                } else {
                    Hash::from_slice(&[byte; 20])
                };
                (Bin::new(l, o).unwrap(), hash)
            })
            .collect(),
        Source::Other(n, salt) => Content::new(*n, CS, salt.wrapping_add(1)).tree.peaks(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn only_the_padded_peaks_of_some_view_are_accepted(
        c in content(),
        tries in prop::collection::vec(source(), 1..12),
    ) {
        let acceptable = c.acceptable();
        // The truth is always accepted.
        let mut rx = c.receiver();
        prop_assert_eq!(rx.accept_peaks(&c.tree.peaks()), Ok(c.l()));
        for (list, count, _) in &acceptable {
            prop_assert_eq!(c.receiver().accept_peaks(list), Ok(*count), "{:?}", list);
        }
        for t in &tries {
            let list = list_of(&c, &acceptable, t);
            let got = c.receiver().accept_peaks(&list);
            let expected = acceptable
                .iter()
                .find(|a| a.0 == list)
                .map(|a| a.1)
                .or_else(|| c.taller(&list));
            match expected {
                Some(count) => prop_assert_eq!(got, Ok(count)),
                None => prop_assert!(got.is_err(), "accepted {:?} -> {:?}", list, got),
            }
        }
    }

    #[test]
    fn no_false_size_is_proven_and_the_truth_takes_over(c in content(), pick in any::<usize>()) {
        let acceptable = c.acceptable();
        let (claim, count, view) = &acceptable[pick % acceptable.len()];
        let truth = *count == c.l() && *view == Some(0);
        let mut rx = c.receiver();
        prop_assert_eq!(rx.accept_peaks(claim), Ok(*count));
        // The attacker's best: every chunk of its claim (as far as the real
        // tree reaches) with the uncles of its view, real data for real
        // chunks, the two children of the inner node for a coarse view.
        if let Some(s) = *view {
            for i in 0..*count {
                let data: Vec<u8> = if s == 0 {
                    if i + 1 == c.l() {
                        // The real last chunk would prove the truth by
                        // itself (`end_at_if_proven`): hold it back so the
                        // true peaks must take over below.
                        continue;
                    }
                    match c.data.chunks(CS).nth(i as usize) {
                        Some(d) => d.to_vec(),
                        None => continue, // Nothing hashes to the padding's zeros.
                    }
                } else {
                    let mut d = c.node(s - 1, 2 * i).as_bytes().to_vec();
                    d.extend_from_slice(c.node(s - 1, 2 * i + 1).as_bytes());
                    d
                };
                let Some(n) = rx.chunk_count() else { break };
                if i >= n {
                    break;
                }
                let peak = peak_bins(n).into_iter().find(|p| p.contains_chunk(ChunkIndex(i))).unwrap();
                let mut cur = Bin::leaf(ChunkIndex(i)).unwrap();
                while cur != peak {
                    let sib = cur.sibling().unwrap();
                    let _ = rx.accept_uncle(sib, c.node(sib.layer() + s, sib.offset()));
                    cur = cur.parent().unwrap();
                }
                let real = s == 0 && (i as usize) < c.data.chunks(CS).count();
                match rx.verify_chunk(ChunkIndex(i), &data) {
                    Ok(()) => prop_assert!(real, "wrong data verified as chunk {}", i),
                    Err(VerifyError::Ambiguous(_)) => prop_assert!(!truth || !rx.height_proven()),
                    Err(_) => {}
                }
            }
        }
        if let Some(len) = rx.content_len() {
            prop_assert_eq!(len, c.data.len() as u64, "a false size was proven");
        }
        for i in 0..rx.chunk_count().unwrap_or(0) {
            if rx.is_verified(ChunkIndex(i)) {
                prop_assert!(i < c.l());
            }
        }
        // The true peaks take over (or are already held).
        prop_assert_eq!(rx.accept_peaks(&c.tree.peaks()), Ok(c.l()));
        for i in 0..c.l() {
            for (b, h) in c.tree.uncles(ChunkIndex(i), |_| false) {
                rx.accept_uncle(b, h).unwrap();
            }
            let data = c.data.chunks(CS).nth(i as usize).unwrap();
            match rx.verify_chunk(ChunkIndex(i), data) {
                Ok(()) => {}
                // Two-hash chunks wait for the height; retried below.
                Err(VerifyError::Ambiguous(_)) => {}
                Err(e) => prop_assert!(false, "chunk {} failed: {:?}", i, e),
            }
        }
        let last = ChunkIndex(c.l() - 1);
        if !rx.is_verified(last) && rx.height_proven() {
            rx.verify_chunk(last, c.data.chunks(CS).last().unwrap()).unwrap();
        }
        if rx.height_proven() {
            prop_assert_eq!(rx.content_len(), Some(c.data.len() as u64));
            // Coarse counts lie below L, taller ones above 2^h: only the
            // truth claims L.
            prop_assert_eq!(rx.refutes(*count), !truth);
        } else {
            // Every chunk is two hashes long: one 40-byte chunk. A bare id
            // cannot tell it from inner nodes (see claim.rs).
            prop_assert!(c.l() == 1 && c.data.len() == 2 * F.len());
        }
    }
}
