//! Export and import of a [`PartialTree`]'s trusted state, for checkpoints
//! that let a download resume without re-hashing what it verified.
//!
//! Only the *frontier* of the trusted set needs saving: the trusted nodes
//! whose two children are not both trusted (every trusted leaf, and the
//! uncles and peaks hanging off verified paths). Every other trusted node is
//! the hash of its children, so [`PartialTree::restore`] recomputes it — and
//! in doing so re-checks that the whole saved state hashes up to the root.

use super::{get_bit, set_bit, Known, PartialTree};
use crate::bin::Bin;
use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkSize};
use crate::hash::{Hash, HashFunction};
use crate::merkle::{node_kind, NodeKind, VerifyError};

/// Iterator over trusted nodes of a [`PartialTree`]: see
/// [`PartialTree::trusted_nodes`] and [`PartialTree::trusted_frontier`].
///
/// Filled nodes come in ascending bin order, then the trusted nodes of the
/// right spine (which cover the end of the content and empty leaves).
#[derive(Clone)]
pub struct TrustedNodes<'a> {
    known: Option<&'a Known>,
    hash_fn: HashFunction,
    /// Skip nodes whose two children are trusted (they can be recomputed).
    frontier: bool,
    /// The next filled-node slot (bin) to look at.
    next_slot: u64,
    /// The next spine entry, once the filled slots are done.
    next_spine: usize,
}

impl TrustedNodes<'_> {
    /// Whether `bin` is the hash of two trusted children.
    fn derivable(&self, known: &Known, bin: Bin) -> bool {
        bin.children().is_some_and(|(l, r)| {
            known.trusted(self.hash_fn, l).is_some() && known.trusted(self.hash_fn, r).is_some()
        })
    }

    /// The next trusted filled slot at or after `self.next_slot`.
    fn next_filled(&mut self, known: &Known) -> Option<u64> {
        let mut word_index = usize::try_from(self.next_slot / 64).ok()?;
        let mut word = *known.trusted.get(word_index)? & (u64::MAX << (self.next_slot % 64));
        while word == 0 {
            word_index += 1;
            word = *known.trusted.get(word_index)?;
        }
        Some(word_index as u64 * 64 + u64::from(word.trailing_zeros()))
    }
}

impl Iterator for TrustedNodes<'_> {
    type Item = (Bin, Hash);

    fn next(&mut self) -> Option<(Bin, Hash)> {
        let known = self.known?;
        while let Some(slot) = self.next_filled(known) {
            self.next_slot = slot + 1;
            let bin = Bin(slot);
            if !(self.frontier && self.derivable(known, bin)) {
                if let Some(h) = known.trusted(self.hash_fn, bin) {
                    return Some((bin, h));
                }
            }
        }
        self.next_slot = u64::MAX;
        while let Some(&(bin, h)) = known.spine.get(self.next_spine) {
            self.next_spine += 1;
            if !(self.frontier && self.derivable(known, bin)) {
                return Some((bin, h));
            }
        }
        None
    }
}

impl PartialTree {
    /// Every trusted node (empty subtrees, implicitly zero, excepted), for
    /// inspection or a checkpoint; about `2·verified` entries for a tree
    /// whose chunks verified in order. Nothing while N is unknown.
    pub fn trusted_nodes(&self) -> TrustedNodes<'_> {
        self.nodes(false)
    }

    /// The trusted nodes that cannot be recomputed from two trusted
    /// children: what a checkpoint needs for [`restore`](Self::restore).
    /// Every trusted leaf is in it; for a complete download that is N
    /// hashes instead of 2N − 1. Costs one pass over the trusted-node
    /// bitset (`(2N − 1)/8` bytes) plus two lookups per trusted node.
    pub fn trusted_frontier(&self) -> TrustedNodes<'_> {
        self.nodes(true)
    }

    fn nodes(&self, frontier: bool) -> TrustedNodes<'_> {
        TrustedNodes {
            known: self.known.as_ref(),
            hash_fn: self.hash_fn,
            frontier,
            next_slot: 0,
            next_spine: 0,
        }
    }

    /// Forgets that `chunk` verified, when the storage lost its data; the
    /// trusted hashes stay (they are still right). Returns whether it was
    /// verified.
    pub fn forget_chunk(&mut self, chunk: ChunkIndex) -> bool {
        let Some(k) = self.known.as_mut() else {
            return false;
        };
        if chunk.0 >= k.chunk_count || !get_bit(&k.verified, chunk.0) {
            return false;
        }
        if let Some(w) = usize::try_from(chunk.0 / 64)
            .ok()
            .and_then(|w| k.verified.get_mut(w))
        {
            *w &= !(1 << (chunk.0 % 64));
        }
        k.verified_count -= 1;
        true
    }

    /// Rebuilds a partial tree from a checkpoint: the trusted `root`, the
    /// chunk count (`None` when it was not known; then nothing else may be
    /// given), the content length if known, trusted `nodes` (any superset of
    /// [`trusted_frontier`](Self::trusted_frontier), in any order) and the
    /// `verified` chunks.
    ///
    /// Nothing is taken on faith: every node must lie in the tree and have
    /// the right length, every restored node's sibling must be restored too,
    /// missing parents are recomputed and restored ones must equal the hash
    /// of their children, all the way up to `root`; every verified chunk's
    /// leaf must be restored, and the content length must give the chunk
    /// count. So a corrupted checkpoint is refused, not trusted. Errors name
    /// the first offending bin: [`VerifyError::MissingHash`] for a missing
    /// sibling or leaf, [`VerifyError::BadHash`] for a hash that does not
    /// match (the root bin when the nodes hash to another root).
    ///
    /// Cost: one pass over the `≈ N` node pairs of the tree and one hash per
    /// trusted inner node. The size is fixed, as with
    /// [`with_chunk_count`](Self::with_chunk_count), when the content length
    /// is given or nothing verified; otherwise it is a height-proven claim
    /// that a smaller count of the same height may still replace
    /// ([`accept_peaks`](Self::accept_peaks)).
    pub fn restore(
        hash_fn: HashFunction,
        root: Hash,
        chunk_size: ChunkSize,
        chunk_count: Option<u64>,
        content_len: Option<u64>,
        nodes: impl IntoIterator<Item = (Bin, Hash)>,
        verified: &Binmap,
    ) -> Result<PartialTree, VerifyError> {
        let Some(n) = chunk_count else {
            if nodes.into_iter().next().is_some() || !verified.is_empty() || content_len.is_some() {
                return Err(VerifyError::UnknownSize);
            }
            return PartialTree::new(hash_fn, root, chunk_size);
        };
        let mut tree = PartialTree::with_chunk_count(hash_fn, root, chunk_size, n)?;
        if let Some(len) = content_len {
            let claimed = chunk_size.chunks_in(len);
            if claimed != n {
                return Err(VerifyError::SizeMismatch { known: n, claimed });
            }
        }
        let known = tree.known.as_mut().ok_or(VerifyError::UnknownSize)?;
        for (bin, hash) in nodes {
            insert_node(known, hash_fn, bin, &hash)?;
        }
        derive_parents(known, hash_fn)?;
        for run in verified.filled_runs() {
            if run.last().0 >= n {
                return Err(VerifyError::ChunkOutOfRange {
                    chunk: run.last(),
                    chunk_count: n,
                });
            }
            for c in run.first().0..=run.last().0 {
                let leaf = Bin::leaf(ChunkIndex(c)).ok_or(VerifyError::BinOutOfRange(Bin::NONE))?;
                if known.trusted(hash_fn, leaf).is_none() {
                    return Err(VerifyError::MissingHash(leaf));
                }
                set_bit(&mut known.verified, c);
            }
        }
        known.verified_count = verified.count();
        tree.content_len = content_len;
        if content_len.is_none() && !verified.is_empty() {
            // Without the last chunk the count may be a height-proven claim
            // above the true one (see `claim.rs`): a smaller count of the
            // same height must still be able to replace it after a resume.
            tree.size_from_peaks = true;
            tree.height_proven = true;
        }
        Ok(tree)
    }
}

/// Adds a restored node, refusing nodes outside the tree, non-zero hashes
/// of empty subtrees and contradictions with what is already trusted.
fn insert_node(
    known: &mut Known,
    hash_fn: HashFunction,
    bin: Bin,
    hash: &Hash,
) -> Result<(), VerifyError> {
    if hash.len() != hash_fn.len() {
        return Err(VerifyError::HashLength {
            expected: hash_fn.len(),
            got: hash.len(),
        });
    }
    if node_kind(known.chunk_count, known.root_bin, bin).is_none() {
        return Err(VerifyError::BinOutOfRange(bin));
    }
    match known.trusted(hash_fn, bin) {
        Some(t) if t != *hash => Err(VerifyError::BadHash(bin)),
        Some(_) => Ok(()),
        None => {
            known.set_trusted(hash_fn, bin, hash);
            Ok(())
        }
    }
}

/// Layer by layer from the leaves: every pair of siblings with a restored
/// member must be complete, and hashes to its parent, which is restored if
/// missing and compared if present (the root always is).
fn derive_parents(known: &mut Known, hash_fn: HashFunction) -> Result<(), VerifyError> {
    let n = known.chunk_count;
    let restored = |k: &Known, b: Bin| {
        node_kind(n, k.root_bin, b) != Some(NodeKind::Empty) && k.trusted(hash_fn, b).is_some()
    };
    for layer in 0..known.root_bin.layer() {
        // Nodes of this layer that cover a real chunk, in pairs; the left
        // member of a pair always covers a real chunk, so a parent is never
        // "two empty subtrees".
        let covering = ((n - 1) >> layer) + 1;
        for pair in 0..covering.div_ceil(2) {
            let (Some(left), Some(right)) =
                (Bin::new(layer, 2 * pair), Bin::new(layer, 2 * pair + 1))
            else {
                continue;
            };
            if !restored(known, left) && !restored(known, right) {
                continue;
            }
            let lh = known
                .trusted(hash_fn, left)
                .ok_or(VerifyError::MissingHash(left))?;
            let rh = known
                .trusted(hash_fn, right)
                .ok_or(VerifyError::MissingHash(right))?;
            let parent = left.parent().ok_or(VerifyError::BinOutOfRange(left))?;
            let h = hash_fn.parent(&lh, &rh);
            match known.trusted(hash_fn, parent) {
                Some(t) if t != h => return Err(VerifyError::BadHash(parent)),
                Some(_) => {}
                None => known.set_trusted(hash_fn, parent, &h),
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkRange;
    use crate::merkle::MerkleTree;

    const F: HashFunction = HashFunction::Sha1;

    fn cs() -> ChunkSize {
        ChunkSize::new(4).unwrap()
    }

    /// Content of `chunks` chunks, the last one 2 bytes long.
    fn content(chunks: usize) -> (Vec<u8>, MerkleTree) {
        let data: Vec<u8> = (0..chunks * 4 - 2).map(|i| (i * 31 % 253) as u8).collect();
        let tree = MerkleTree::from_bytes(&data, cs(), F).unwrap();
        (data, tree)
    }

    /// A receiver that got `chunks` from `tree`, as over the wire.
    fn received(tree: &MerkleTree, data: &[u8], peaks: bool, chunks: &[u64]) -> PartialTree {
        let n = tree.chunk_count();
        let mut rx = if peaks {
            let mut rx = PartialTree::new(F, tree.root(), cs()).unwrap();
            rx.accept_peaks(&tree.peaks()).unwrap();
            rx
        } else {
            PartialTree::with_chunk_count(F, tree.root(), cs(), n).unwrap()
        };
        for &c in chunks {
            let held = |b: Bin| {
                (0..n).any(|i| rx.is_verified(ChunkIndex(i)) && b.contains_chunk(ChunkIndex(i)))
            };
            let mut uncles = tree.uncles(ChunkIndex(c), held);
            if !peaks {
                // Without peaks the walk may climb past the chunk's peak.
                let mut cur = Bin::leaf(ChunkIndex(c)).unwrap();
                while cur != tree.root_bin() {
                    uncles.push((
                        cur.sibling().unwrap(),
                        tree.node(cur.sibling().unwrap()).unwrap(),
                    ));
                    cur = cur.parent().unwrap();
                }
            }
            for (b, h) in uncles {
                rx.accept_uncle(b, h).unwrap();
            }
            rx.verify_chunk(ChunkIndex(c), data.chunks(4).nth(c as usize).unwrap())
                .unwrap();
        }
        rx
    }

    fn have(rx: &PartialTree) -> Binmap {
        let mut map = Binmap::new();
        for c in 0..rx.chunk_count().unwrap_or(0) {
            if rx.is_verified(ChunkIndex(c)) {
                map.set_chunk(ChunkIndex(c));
            }
        }
        map
    }

    fn restore_from(rx: &PartialTree, nodes: Vec<(Bin, Hash)>) -> Result<PartialTree, VerifyError> {
        PartialTree::restore(
            F,
            rx.root(),
            cs(),
            rx.proven_chunk_count(),
            rx.content_len(),
            nodes,
            &have(rx),
        )
    }

    #[test]
    fn the_frontier_restores_every_trusted_node() {
        let (data, tree) = content(13);
        for peaks in [true, false] {
            let rx = received(&tree, &data, peaks, &[12, 3, 7, 8, 0]);
            let all: Vec<_> = rx.trusted_nodes().collect();
            let frontier: Vec<_> = rx.trusted_frontier().collect();
            assert_eq!(rx.trusted_count(), all.len() as u64);
            assert!(
                frontier.len() < all.len(),
                "{} < {}",
                frontier.len(),
                all.len()
            );
            for got in [
                restore_from(&rx, frontier).unwrap(),
                restore_from(&rx, all.clone()).unwrap(),
            ] {
                assert_eq!(got.trusted_nodes().collect::<Vec<_>>().len(), all.len());
                for (b, h) in &all {
                    assert_eq!(got.trusted(*b), Some(*h), "bin {b}");
                }
                assert_eq!(have(&got), have(&rx));
                assert_eq!(got.verified_count(), 5);
                assert_eq!(got.trusted_count(), all.len() as u64);
                assert_eq!(got.content_len(), Some(50));
                assert_eq!(got.proven_chunk_count(), Some(13));
                for c in 0..13 {
                    assert_eq!(
                        got.uncles(ChunkIndex(c), |_| false),
                        rx.uncles(ChunkIndex(c), |_| false)
                    );
                }
            }
        }
    }

    #[test]
    fn a_restored_tree_verifies_further_chunks() {
        let (data, tree) = content(9);
        let rx = received(&tree, &data, true, &[1, 5]);
        let mut got = restore_from(&rx, rx.trusted_frontier().collect()).unwrap();
        let held = have(&got);
        let uncles = tree.uncles(ChunkIndex(6), |b| {
            b.chunks().is_some_and(|r| held.count_in(r) > 0)
        });
        for (b, h) in uncles {
            got.accept_uncle(b, h).unwrap();
        }
        assert_eq!(got.verify_chunk(ChunkIndex(6), &data[24..28]), Ok(()));
        assert_eq!(
            got.verify_chunk(ChunkIndex(4), &data[20..24]),
            Err(VerifyError::BadChunk(ChunkIndex(4)))
        );
        assert_eq!(got.verify_chunk(ChunkIndex(4), &data[16..20]), Ok(()));
        assert_eq!(got.content_len(), None);
        // Chunk 8 is a peak of its own: trusted since the peaks came.
        assert_eq!(got.verify_chunk(ChunkIndex(8), &data[32..]), Ok(()));
        assert_eq!(got.content_len(), Some(34));
    }

    #[test]
    fn any_corrupt_or_missing_node_is_refused() {
        let (data, tree) = content(11);
        let rx = received(&tree, &data, true, &[10, 2, 6]);
        let frontier: Vec<_> = rx.trusted_frontier().collect();
        let root_bin = Bin::new(4, 0).unwrap();
        for i in 0..frontier.len() {
            let mut bad = frontier.clone();
            let mut raw = bad[i].1.as_bytes().to_vec();
            let at = i % raw.len();
            raw[at] ^= 0x10;
            bad[i].1 = Hash::from_slice(&raw);
            assert!(
                matches!(restore_from(&rx, bad), Err(VerifyError::BadHash(_))),
                "corrupt {:?}",
                frontier[i].0
            );
            if frontier[i].0 != root_bin {
                let mut fewer = frontier.clone();
                fewer.remove(i);
                assert!(
                    matches!(restore_from(&rx, fewer), Err(VerifyError::MissingHash(_))),
                    "without {:?}",
                    frontier[i].0
                );
            }
        }
        // A stray node with no sibling cannot be connected to the root.
        let mut stray = frontier.clone();
        stray.push((Bin(8), tree.node(Bin(8)).unwrap()));
        assert_eq!(
            restore_from(&rx, stray).map(|_| ()),
            Err(VerifyError::MissingHash(Bin(10)))
        );
    }

    #[test]
    fn inconsistent_snapshots_are_refused() {
        let (data, tree) = content(5);
        let rx = received(&tree, &data, true, &[0, 4]);
        let nodes: Vec<_> = rx.trusted_frontier().collect();
        let with = |extra: (Bin, Hash)| {
            let mut v = nodes.clone();
            v.push(extra);
            restore_from(&rx, v).map(|_| ())
        };
        assert_eq!(
            with((Bin(15), F.zero())),
            Err(VerifyError::BinOutOfRange(Bin(15)))
        );
        assert_eq!(
            with((Bin(12), F.digest(b"x"))),
            Err(VerifyError::BadHash(Bin(12)))
        );
        assert_eq!(with((Bin(12), F.zero())), Ok(()));
        assert!(matches!(
            with((Bin(2), Hash::zero(3))),
            Err(VerifyError::HashLength { .. })
        ));
        let restore = |count, len, verified: &Binmap| {
            PartialTree::restore(F, tree.root(), cs(), count, len, nodes.clone(), verified)
        };
        // Leaf 2 (chunk 1) is trusted as chunk 0's uncle, leaf 4 is not.
        let three = Binmap::from_iter([ChunkRange::new(0, 2).unwrap()]);
        assert_eq!(
            restore(Some(5), None, &three).map(|_| ()),
            Err(VerifyError::MissingHash(Bin(4)))
        );
        let far = Binmap::from_iter([ChunkRange::single(5).unwrap()]);
        assert!(matches!(
            restore(Some(5), None, &far),
            Err(VerifyError::ChunkOutOfRange { .. })
        ));
        assert_eq!(
            restore(Some(5), Some(21), &Binmap::new()).map(|_| ()),
            Err(VerifyError::SizeMismatch {
                known: 5,
                claimed: 6
            })
        );
        // Another size: chunk 4's leaf now has a real sibling, not saved.
        assert_eq!(
            restore(Some(6), None, &Binmap::new()).map(|_| ()),
            Err(VerifyError::MissingHash(Bin(10)))
        );
        // Another size whose tree shape fits the nodes: the root differs.
        let (_, eight) = content(8);
        let eight_nodes: Vec<_> = eight.peaks();
        assert!(matches!(
            PartialTree::restore(
                F,
                tree.root(),
                cs(),
                Some(8),
                None,
                eight_nodes,
                &Binmap::new()
            ),
            Err(VerifyError::BadHash(_))
        ));
        assert_eq!(
            restore(None, None, &Binmap::new()).map(|_| ()),
            Err(VerifyError::UnknownSize)
        );
        let fresh =
            PartialTree::restore(F, tree.root(), cs(), None, None, [], &Binmap::new()).unwrap();
        assert_eq!(fresh.chunk_count(), None);
        assert_eq!(fresh.trusted_nodes().count(), 0);
    }

    #[test]
    fn forgetting_a_chunk_keeps_its_hashes() {
        let (data, tree) = content(4);
        let mut rx = received(&tree, &data, true, &[0, 3]);
        assert!(rx.forget_chunk(ChunkIndex(3)));
        assert!(!rx.forget_chunk(ChunkIndex(3)));
        assert!(!rx.forget_chunk(ChunkIndex(9)));
        assert_eq!(rx.verified_count(), 1);
        assert_eq!(rx.uncles(ChunkIndex(3), |_| false), None);
        assert_eq!(rx.trusted(Bin(6)), tree.node(Bin(6)));
        assert_eq!(rx.content_len(), Some(14));
        // Still a valid snapshot: the length was proven once.
        assert!(restore_from(&rx, rx.trusted_frontier().collect()).is_ok());
        assert_eq!(rx.verify_chunk(ChunkIndex(3), &data[12..]), Ok(()));
    }
}
