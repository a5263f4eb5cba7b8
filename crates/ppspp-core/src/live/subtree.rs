//! The hashes of one munro's subtree (RFC 7574 §6.1.2): all of them at the
//! injector, the trusted ones at a receiver, plus the uncle hashes a peer
//! offered and that are not checked yet.
//!
//! A subtree of a munro at layer L is 2^(L+1) − 1 consecutive bin
//! numbers (§4.2's numbering), so its nodes live in one vector indexed by
//! bin minus the subtree's first bin. Inside a munro every leaf is a real
//! chunk: munros are signed only once complete, so there are no empty
//! leaves and no zero hashes here.

use crate::bin::Bin;
use crate::chunk::ChunkIndex;
use crate::hash::{Hash, HashFunction};

/// Why a chunk did not verify against its munro.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClimbError {
    /// An uncle hash needed on the way up is neither trusted nor offered.
    MissingUncle(Bin),
    /// The hashes computed up the tree differ from a trusted node: the
    /// chunk or an offered uncle is bad.
    Mismatch,
}

/// The nodes of one munro's subtree.
#[derive(Clone, Debug)]
pub(crate) struct MunroNodes {
    munro: Bin,
    /// Trusted hashes by local index; `None`: not known.
    trusted: Vec<Option<Hash>>,
    /// Hashes offered by peers (INTEGRITY), not checked yet.
    offered: Vec<Option<Hash>>,
}

impl MunroNodes {
    /// The subtree over `leaves` (exactly 2^layer leaf hashes), every node
    /// computed: what the injector holds. Returns it and the munro hash.
    pub(crate) fn build(munro: Bin, leaves: &[Hash], hf: HashFunction) -> Self {
        debug_assert_eq!(leaves.len() as u64, munro.chunk_count());
        let mut nodes = MunroNodes::empty(munro);
        let first_leaf = munro.base_left();
        for (i, leaf) in leaves.iter().enumerate() {
            let bin = Bin(first_leaf.raw() + 2 * i as u64);
            nodes.set_trusted(bin, *leaf);
        }
        for layer in 1..=munro.layer() {
            let count = munro.chunk_count() >> layer;
            let first = (munro.base_left().raw() / 2) >> layer;
            for k in 0..count {
                let Some(bin) = Bin::new(layer, first + k) else {
                    continue;
                };
                let (Some(l), Some(r)) = (bin.left(), bin.right()) else {
                    continue;
                };
                if let (Some(lh), Some(rh)) = (nodes.trusted(l), nodes.trusted(r)) {
                    nodes.set_trusted(bin, hf.parent(&lh, &rh));
                }
            }
        }
        nodes
    }

    /// A receiver's subtree: only the munro hash, from a verified
    /// signature, is trusted.
    pub(crate) fn trusting(munro: Bin, hash: Hash) -> Self {
        let mut nodes = MunroNodes::empty(munro);
        nodes.set_trusted(munro, hash);
        nodes
    }

    fn empty(munro: Bin) -> Self {
        let len = (2 * munro.chunk_count() - 1) as usize;
        MunroNodes {
            munro,
            trusted: vec![None; len],
            offered: Vec::new(),
        }
    }

    /// `bin`'s index in the vectors, if it is in this subtree.
    fn local(&self, bin: Bin) -> Option<usize> {
        let first = self.munro.base_left().raw();
        let last = self.munro.base_right().raw();
        (!bin.is_none() && (first..=last).contains(&bin.raw()))
            .then(|| (bin.raw() - first) as usize)
    }

    /// The trusted hash of `bin`, if known.
    pub(crate) fn trusted(&self, bin: Bin) -> Option<Hash> {
        self.trusted[self.local(bin)?]
    }

    fn set_trusted(&mut self, bin: Bin, hash: Hash) {
        if let Some(i) = self.local(bin) {
            self.trusted[i] = Some(hash);
        }
    }

    /// The munro hash.
    pub(crate) fn munro_hash(&self) -> Option<Hash> {
        self.trusted(self.munro)
    }

    /// Takes an uncle hash a peer offered for `bin`; false (and nothing
    /// kept) when `bin` is not in this subtree or is trusted already.
    pub(crate) fn offer(&mut self, bin: Bin, hash: Hash) -> bool {
        let Some(i) = self.local(bin) else {
            return false;
        };
        if self.trusted[i].is_some() {
            return false;
        }
        if self.offered.is_empty() {
            self.offered = vec![None; self.trusted.len()];
        }
        self.offered[i] = Some(hash);
        true
    }

    /// Checks the chunk whose leaf hash is `leaf` against the munro, with
    /// trusted hashes where known and offered ones elsewhere. On success
    /// every hash on the way becomes trusted; on a mismatch the offered
    /// hashes used are forgotten, so a bad uncle cannot fail the next try.
    pub(crate) fn verify(
        &mut self,
        chunk: ChunkIndex,
        leaf: Hash,
        hf: HashFunction,
    ) -> Result<(), ClimbError> {
        let Some(leaf_bin) = Bin::new(0, chunk.0).filter(|&b| self.local(b).is_some()) else {
            return Err(ClimbError::Mismatch);
        };
        let mut path: Vec<(Bin, Hash)> = Vec::with_capacity(2 * self.munro.layer() as usize + 1);
        let (mut bin, mut hash) = (leaf_bin, leaf);
        loop {
            if let Some(known) = self.trusted(bin) {
                if known != hash {
                    self.forget_offered(&path);
                    return Err(ClimbError::Mismatch);
                }
                break;
            }
            if bin == self.munro {
                // Unreachable: the munro is always trusted.
                return Err(ClimbError::Mismatch);
            }
            path.push((bin, hash));
            let (Some(sibling), Some(parent)) = (bin.sibling(), bin.parent()) else {
                return Err(ClimbError::Mismatch);
            };
            let Some(sib_hash) = self.trusted(sibling).or_else(|| self.offered_at(sibling)) else {
                return Err(ClimbError::MissingUncle(sibling));
            };
            path.push((sibling, sib_hash));
            hash = if bin.is_left() {
                hf.parent(&hash, &sib_hash)
            } else {
                hf.parent(&sib_hash, &hash)
            };
            bin = parent;
        }
        for (b, h) in path {
            self.set_trusted(b, h);
            if let Some(i) = self.local(b).filter(|_| !self.offered.is_empty()) {
                self.offered[i] = None;
            }
        }
        Ok(())
    }

    fn offered_at(&self, bin: Bin) -> Option<Hash> {
        self.offered.get(self.local(bin)?).copied().flatten()
    }

    fn forget_offered(&mut self, path: &[(Bin, Hash)]) {
        for &(b, _) in path {
            if let Some(i) = self.local(b).filter(|_| !self.offered.is_empty()) {
                self.offered[i] = None;
            }
        }
    }

    /// The uncle hashes a receiver needs for `chunk`, from the munro's
    /// child layer down to the chunk's sibling (the order libswift sends
    /// and RFC 7574 §5.4 describes); only trusted hashes are handed on.
    /// `None` if one is not trusted here.
    ///
    /// `receiver_holds(b)` tells whether the receiver holds a verified
    /// chunk under `b`. The walk up from the chunk stops below the first
    /// such ancestor: the receiver verified that chunk's path, which holds
    /// the hash of every child of that ancestor, so it trusts the node
    /// the walk reached and everything above it (as `MerkleTree::uncles`
    /// and libswift do). Skipping only the held siblings and going on up
    /// sent a DATA after its neighbour four hashes instead of one in a
    /// 32-chunk munro: 10.7 % of all bytes in `live-500`'s links at 40
    /// viewers, where one is needed in 32-chunk runs from one peer.
    pub(crate) fn uncles(
        &self,
        chunk: ChunkIndex,
        mut receiver_holds: impl FnMut(Bin) -> bool,
    ) -> Option<Vec<(Bin, Hash)>> {
        let leaf = Bin::new(0, chunk.0).filter(|&b| self.local(b).is_some())?;
        let mut uncles = Vec::with_capacity(self.munro.layer() as usize);
        let mut bin = leaf;
        while bin != self.munro {
            let (sibling, parent) = (bin.sibling()?, bin.parent()?);
            if receiver_holds(parent) {
                break;
            }
            uncles.push((sibling, self.trusted(sibling)?));
            bin = parent;
        }
        uncles.reverse();
        Some(uncles)
    }

    /// Whether the chunk's leaf hash is trusted (it verified, or this is
    /// the injector's subtree).
    pub(crate) fn has_leaf(&self, chunk: ChunkIndex) -> bool {
        Bin::new(0, chunk.0).is_some_and(|b| self.trusted(b).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaves(n: u64, salt: u8) -> Vec<Hash> {
        (0..n)
            .map(|i| HashFunction::Sha1.digest(&[salt, i as u8]))
            .collect()
    }

    #[test]
    fn a_chunk_verifies_with_the_injectors_uncles_and_they_become_trusted() {
        let hf = HashFunction::Sha1;
        let munro = Bin::new(3, 2).unwrap(); // chunks 16..=23
        let source = MunroNodes::build(munro, &leaves(8, 1), hf);
        let root = source.munro_hash().unwrap();
        let mut receiver = MunroNodes::trusting(munro, root);
        let chunk = ChunkIndex(19);
        let uncles = source.uncles(chunk, |_| false).unwrap();
        assert_eq!(uncles.len(), 3);
        assert_eq!(uncles[0].0.layer(), 2, "from the munro's child layer down");
        assert_eq!(uncles[2].0, Bin::new(0, 18).unwrap(), "to the sibling");
        for &(b, h) in &uncles {
            assert!(receiver.offer(b, h));
        }
        receiver.verify(chunk, leaves(8, 1)[3], hf).unwrap();
        assert!(receiver.has_leaf(chunk));
        assert!(receiver.has_leaf(ChunkIndex(18)), "its sibling's hash too");
        // The neighbour needs no uncle now, and a receiver that holds them
        // is sent none.
        receiver
            .verify(ChunkIndex(18), leaves(8, 1)[2], hf)
            .unwrap();
        let held = |b: Bin| receiver.trusted(b).is_some();
        assert_eq!(source.uncles(ChunkIndex(18), held), Some(vec![]));
        // The receiver can serve what it verified.
        assert_eq!(receiver.uncles(chunk, |_| false), Some(uncles));
    }

    #[test]
    fn a_receiver_holding_a_chunk_is_sent_only_the_uncles_below_their_meeting() {
        let hf = HashFunction::Sha1;
        let munro = Bin::new(5, 0).unwrap(); // chunks 0..=31
        let data = leaves(32, 3);
        let source = MunroNodes::build(munro, &data, hf);
        let mut receiver = MunroNodes::trusting(munro, source.munro_hash().unwrap());
        for (b, h) in source.uncles(ChunkIndex(2), |_| false).unwrap() {
            receiver.offer(b, h);
        }
        receiver.verify(ChunkIndex(2), data[2], hf).unwrap();
        // What the receiver holds: chunk 2.
        let holds = |b: Bin| b.contains_chunk(ChunkIndex(2));
        // Chunk 3 meets chunk 2 at their parent: chunk 2's path brought
        // chunk 3's hash, so nothing goes.
        assert_eq!(source.uncles(ChunkIndex(3), holds), Some(vec![]));
        receiver.verify(ChunkIndex(3), data[3], hf).unwrap();
        // Chunk 4 meets it at 0..=7: chunk 5's hash and 6..=7's, not the
        // two above (4 of 5 hashes went before).
        let uncles = source.uncles(ChunkIndex(4), holds).unwrap();
        let bins: Vec<Bin> = uncles.iter().map(|u| u.0).collect();
        assert_eq!(bins, vec![Bin::new(1, 3).unwrap(), Bin::new(0, 5).unwrap()]);
        for (b, h) in uncles {
            receiver.offer(b, h);
        }
        receiver.verify(ChunkIndex(4), data[4], hf).unwrap();
    }

    #[test]
    fn a_bad_chunk_or_uncle_fails_and_leaves_nothing_trusted() {
        let hf = HashFunction::Sha1;
        let munro = Bin::new(2, 0).unwrap();
        let source = MunroNodes::build(munro, &leaves(4, 1), hf);
        let mut receiver = MunroNodes::trusting(munro, source.munro_hash().unwrap());
        let chunk = ChunkIndex(1);
        assert_eq!(
            receiver.verify(chunk, leaves(4, 1)[1], hf),
            Err(ClimbError::MissingUncle(Bin::new(0, 0).unwrap()))
        );
        let uncles = source.uncles(chunk, |_| false).unwrap();
        for &(b, h) in &uncles {
            receiver.offer(b, h);
        }
        assert_eq!(
            receiver.verify(chunk, leaves(4, 2)[1], hf),
            Err(ClimbError::Mismatch),
            "forged chunk"
        );
        assert!(!receiver.has_leaf(chunk));
        assert!(receiver.trusted(uncles[0].0).is_none());
        // A forged uncle, then the true ones: the true chunk verifies.
        receiver.offer(uncles[0].0, hf.digest(b"forged"));
        receiver.offer(uncles[1].0, uncles[1].1);
        assert_eq!(
            receiver.verify(chunk, leaves(4, 1)[1], hf),
            Err(ClimbError::Mismatch)
        );
        assert_eq!(
            receiver.verify(chunk, leaves(4, 1)[1], hf),
            Err(ClimbError::MissingUncle(uncles[1].0)),
            "the offered hashes of a failed climb are forgotten"
        );
        for &(b, h) in &uncles {
            receiver.offer(b, h);
        }
        receiver.verify(chunk, leaves(4, 1)[1], hf).unwrap();
    }

    #[test]
    fn bins_outside_the_subtree_are_refused() {
        let munro = Bin::new(2, 1).unwrap(); // chunks 4..=7
        let mut nodes = MunroNodes::trusting(munro, Hash::zero(20));
        assert!(!nodes.offer(Bin::new(0, 3).unwrap(), Hash::zero(20)));
        assert!(!nodes.offer(Bin::new(3, 0).unwrap(), Hash::zero(20)));
        assert!(!nodes.offer(Bin::NONE, Hash::zero(20)));
        assert!(!nodes.offer(munro, Hash::zero(20)), "trusted already");
        assert!(nodes.offer(Bin::new(1, 2).unwrap(), Hash::zero(20)));
        assert_eq!(
            nodes.verify(ChunkIndex(9), Hash::zero(20), HashFunction::Sha1),
            Err(ClimbError::Mismatch)
        );
        assert_eq!(nodes.uncles(ChunkIndex(3), |_| false), None);
    }

    #[test]
    fn a_one_chunk_munro_is_its_leaf() {
        let hf = HashFunction::Sha1;
        let munro = Bin::new(0, 9).unwrap();
        let leaf = hf.digest(b"chunk 9");
        let source = MunroNodes::build(munro, &[leaf], hf);
        assert_eq!(source.munro_hash(), Some(leaf));
        let mut receiver = MunroNodes::trusting(munro, leaf);
        assert_eq!(source.uncles(ChunkIndex(9), |_| false), Some(vec![]));
        receiver.verify(ChunkIndex(9), leaf, hf).unwrap();
        assert_eq!(
            receiver.verify(ChunkIndex(9), hf.digest(b"x"), hf),
            Err(ClimbError::Mismatch)
        );
    }
}
