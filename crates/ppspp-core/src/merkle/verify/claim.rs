//! How a receiver that knows only the root (a bare swarm id) settles the
//! content size from peak hashes (RFC 7574 §5.6), so that a forged size
//! cannot stick.
//!
//! The root hash does not say how tall its tree is, and empty subtrees hash
//! to zeros (§5.1), so for content of L chunks in a tree of height h
//! several peak lists hash up to the same root:
//! - the exact peaks of a count L' in L ..= 2^h whose last peak still holds
//!   a real chunk, with hashes from the zero-padded tree, which anyone
//!   holding the tree can compute (a single root-level peak, L' = 2^h, is
//!   one of them; a last peak wholly in the padding fails, as the climb
//!   hashes H(0 ‖ 0) where the padded tree has the zero of an empty
//!   subtree);
//! - a single peak whose hash is the root, at any layer (nothing to climb);
//! - the tree seen from a coarser layer, inner nodes taken for leaves: a
//!   shorter tree whose "chunks" are the two children of an inner node,
//!   2·hash_len bytes each — the same hash rule for leaves and inner nodes
//!   lets such data verify.
//!
//! A count below L at height h cannot hash up to the root without a
//! collision: it would call a subtree holding real chunks empty. So:
//! - peaks must be exactly the peaks of one count, left to right, and hash
//!   up to the root (`chunk_count_from_peaks`, `climb`);
//! - the count they claim is tentative. Until a chunk whose length is not
//!   two hashes verifies under it, its height is unknown: a newer claim
//!   replaces it, and two-hash chunks are refused
//!   ([`VerifyError::Ambiguous`]);
//! - once such a chunk verified ("height proven"), the claim has the true
//!   height, so N ≥ L. A smaller count of the same height that hashes up
//!   to the root proves N false and replaces it, keeping what verified
//!   (every verified chunk lies below L); any other count is provably false
//!   ([`VerifyError::SizeMismatch`]);
//! - the count is proven, and fixed, when its last chunk verifies: chunk
//!   N − 1 of a count above L lies in the zero padding, and no data hashes
//!   to zeros.

use super::{get_bit, set_bit, Known, PartialTree};
use crate::bin::Bin;
use crate::hash::{Hash, HashFunction};
use crate::merkle::peaks::{chunk_count_from_peaks, climb, tree_height};
use crate::merkle::{node_kind, slot, NodeKind, VerifyError};

impl PartialTree {
    /// Checks peak hashes (left to right) against the root and learns N from
    /// them (RFC 7574 §5.6); the peaks and the nodes above them become
    /// trusted. Returns the chunk count now held, which may differ from the
    /// one held before (see the module notes: a tentative count is replaced
    /// by a newer claim while its height is unproven, and by a smaller one
    /// of the same height after).
    ///
    /// Errors: [`VerifyError::BadPeaks`] when the bins are not exactly the
    /// peaks of one count or do not hash up to the root;
    /// [`VerifyError::SizeMismatch`] when they do but the count held is
    /// fixed, proven, or shows this claim false;
    /// [`VerifyError::TooLarge`] above [`with_max_chunks`](Self::with_max_chunks).
    pub fn accept_peaks(&mut self, peaks: &[(Bin, Hash)]) -> Result<u64, VerifyError> {
        let bins: Vec<Bin> = peaks.iter().map(|p| p.0).collect();
        let chunk_count = chunk_count_from_peaks(&bins).ok_or(VerifyError::BadPeaks)?;
        self.check_len(peaks.iter().map(|p| &p.1))?;
        // The root first: a list that does not reach it says nothing about
        // the size (uncles can look like the peaks of a smaller tree).
        let mut above = Vec::new();
        let (_, root) =
            climb(self.hash_fn, peaks, |b, h| above.push((b, *h))).ok_or(VerifyError::BadPeaks)?;
        if root != self.root {
            return Err(VerifyError::BadPeaks);
        }
        if let Some(known) = self.chunk_count() {
            if known != chunk_count && !self.may_replace(known, chunk_count) {
                return Err(VerifyError::SizeMismatch {
                    known,
                    claimed: chunk_count,
                });
            }
        }
        // Checked after the root, so that a forged claim is told apart from
        // honest content too large for this receiver.
        if chunk_count > self.max_chunks {
            return Err(VerifyError::TooLarge {
                chunks: chunk_count,
            });
        }
        self.replace_count(chunk_count)?;
        let hash_fn = self.hash_fn;
        if let Some(known) = self.known.as_mut() {
            for (bin, hash) in peaks.iter().chain(&above) {
                known.set_trusted(hash_fn, *bin, hash);
            }
        }
        self.prune_pending();
        Ok(chunk_count)
    }

    /// Holds `chunk_count` chunks from now on (a no-op when already held).
    fn replace_count(&mut self, chunk_count: u64) -> Result<(), VerifyError> {
        let hash_fn = self.hash_fn;
        match self.known.take() {
            Some(k) if k.chunk_count == chunk_count => self.known = Some(k),
            old => {
                let mut fresh = match Known::new(hash_fn, self.root, chunk_count) {
                    Ok(fresh) => fresh,
                    Err(e) => {
                        self.known = old;
                        return Err(e);
                    }
                };
                // A height-proven count gives way to a smaller one of the
                // same height: both trees are the real zero-padded one, so
                // what was trusted and verified stays right. An unproven
                // count has nothing verified under it.
                if let Some(old) = old.filter(|_| self.height_proven) {
                    carry_over(&old, &mut fresh, hash_fn);
                    let last = chunk_count - 1;
                    if get_bit(&fresh.verified, last) {
                        // It verified as a full chunk before the end.
                        self.content_len = Some(chunk_count * self.chunk_size.bytes_u64());
                    }
                }
                self.size_from_peaks = true;
                self.known = Some(fresh);
            }
        }
        Ok(())
    }

    /// Whether chunk `c` could be the real last chunk below a count held
    /// tentatively with its height proven: a count of c + 1 has the same
    /// height, and no trusted subtree right of `c` holds data. Costs a
    /// lookup per layer, no hashing; true for few chunks of an honest
    /// download (the uncles right of a chunk are usually trusted).
    pub(super) fn could_end_at(&self, c: u64) -> bool {
        let Some(k) = &self.known else {
            return false;
        };
        let n = k.chunk_count;
        if !self.size_from_peaks
            || !self.height_proven
            || self.content_len.is_some()
            || c.checked_add(1)
                .is_none_or(|m| m >= n || tree_height(m) != tree_height(n))
        {
            return false;
        }
        let zero = self.hash_fn.zero();
        let Some(mut cur) = Bin::leaf(crate::chunk::ChunkIndex(c)) else {
            return false;
        };
        while cur != k.root_bin {
            let (Some(parent), Some(sib)) = (cur.parent(), cur.sibling()) else {
                return false;
            };
            if cur.is_left() && k.trusted(self.hash_fn, sib).is_some_and(|h| h != zero) {
                return false;
            }
            cur = parent;
        }
        true
    }

    /// Shrinks the count to c + 1 if leaf `c`, whose hash is `leaf`, hashes
    /// up to the root with every subtree right of it empty (zeros), left
    /// siblings taken from trusted or candidate hashes. As the height is
    /// proven, the walk follows the real tree, so the real leaf c holds data
    /// and nothing lies after it: c + 1 is the true count (RFC 7574 §5.1
    /// padding), proven without anyone's peaks. This is how a download whose
    /// peers stopped sending peaks (it acknowledged their chunks, §5.6.2)
    /// still finds the end under a forged larger count.
    pub(super) fn end_at_if_proven(&mut self, c: u64, leaf: Hash) -> Result<(), VerifyError> {
        let Some(k) = &self.known else {
            return Ok(());
        };
        let hash_fn = self.hash_fn;
        let zero = hash_fn.zero();
        let Some(mut cur) = Bin::leaf(crate::chunk::ChunkIndex(c)) else {
            return Ok(());
        };
        let mut hash = leaf;
        while cur != k.root_bin {
            if k.trusted(hash_fn, cur).is_some_and(|t| t != hash) {
                return Ok(());
            }
            let (Some(parent), Some(sib)) = (cur.parent(), cur.sibling()) else {
                return Ok(());
            };
            hash = if cur.is_left() {
                hash_fn.parent(&hash, &zero)
            } else {
                let candidate = self.pending.iter().rev().find(|(b, _)| *b == sib);
                match k.trusted(hash_fn, sib).or(candidate.map(|p| p.1)) {
                    Some(left) => hash_fn.parent(&left, &hash),
                    None => return Ok(()),
                }
            };
            cur = parent;
        }
        if hash == self.root {
            self.replace_count(c + 1)?;
        }
        Ok(())
    }

    /// Whether the claim of `claimed` chunks may replace the `known` count.
    fn may_replace(&self, known: u64, claimed: u64) -> bool {
        if self.size_proven() {
            false
        } else if !self.height_proven {
            true
        } else {
            claimed < known && tree_height(claimed) == tree_height(known)
        }
    }

    /// Whether the chunk count is certain: fixed by the caller, or claimed
    /// by peaks and proven by the last chunk verifying with a length the
    /// chunk size allows.
    pub fn size_proven(&self) -> bool {
        self.known.is_some() && (!self.size_from_peaks || self.content_len.is_some())
    }

    /// Whether the tree's height is certain: the count is fixed by the
    /// caller, or a chunk that cannot be the children of an inner node
    /// verified under it. Then the count is at least the true one.
    pub fn height_proven(&self) -> bool {
        self.known.is_some() && (!self.size_from_peaks || self.height_proven)
    }

    /// Whether a peer that claimed (with peaks that hashed up to the root)
    /// `claimed` chunks has been shown to lie by what verified since:
    /// another count is proven, or a height-proven count is smaller than
    /// the claim or of another height.
    pub fn refutes(&self, claimed: u64) -> bool {
        let Some(n) = self.chunk_count() else {
            return false;
        };
        if claimed == n || !self.height_proven() {
            false
        } else {
            self.size_proven() || claimed > n || tree_height(claimed) != tree_height(n)
        }
    }

    /// Whether data of `len` bytes must wait: it is two hashes long and the
    /// tree height is not proven, so it could be the children of an inner
    /// node "verifying" as a leaf of a forged shorter tree.
    pub(super) fn ambiguous(&self, len: usize) -> bool {
        self.size_from_peaks && !self.height_proven && len == 2 * self.hash_fn.len()
    }
}

/// Copies what `old` trusted and verified into `fresh`, a tree of the same
/// height and fewer chunks (so every verified chunk lies in it). Costs one
/// pass over the bitsets of `fresh`'s size plus one node per layer.
fn carry_over(old: &Known, fresh: &mut Known, hash_fn: HashFunction) {
    let len = hash_fn.len();
    let n = fresh.chunk_count;
    // Filled nodes of `fresh` have bins below 2N − 1.
    let words = usize::try_from((2 * n).div_ceil(64)).unwrap_or(usize::MAX);
    for (w, &word) in old.trusted.iter().enumerate().take(words) {
        let mut bits = word;
        while bits != 0 {
            let b = w as u64 * 64 + u64::from(bits.trailing_zeros());
            bits &= bits - 1;
            if let Some(h) = slot(&old.hashes, len, b) {
                fresh.set_trusted(hash_fn, Bin(b), &Hash::from_slice(h));
            }
        }
    }
    // The incomplete nodes of `fresh`: those covering its last chunk.
    for layer in 1..=fresh.root_bin.layer() {
        let Some(bin) = Bin::new(layer, (n - 1) >> layer) else {
            continue;
        };
        if node_kind(n, fresh.root_bin, bin) == Some(NodeKind::Incomplete) {
            if let Some(h) = old.trusted(hash_fn, bin) {
                fresh.set_trusted(hash_fn, bin, &h);
            }
        }
    }
    let words = usize::try_from(n.div_ceil(64)).unwrap_or(usize::MAX);
    for (w, &word) in old.verified.iter().enumerate().take(words) {
        let mut bits = word;
        while bits != 0 {
            let c = w as u64 * 64 + u64::from(bits.trailing_zeros());
            bits &= bits - 1;
            if c < n && !get_bit(&fresh.verified, c) {
                set_bit(&mut fresh.verified, c);
                fresh.verified_count += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{ChunkIndex, ChunkSize};
    use crate::merkle::MerkleTree;

    const F: HashFunction = HashFunction::Sha1;
    /// Chunks of 64 bytes: a short last chunk may be two SHA-1 hashes long.
    const CS: usize = 64;

    fn content(len: usize) -> (Vec<u8>, MerkleTree) {
        let data: Vec<u8> = (0..len).map(|i| (i * 13 % 251) as u8).collect();
        let cs = ChunkSize::new(CS as u64).unwrap();
        let tree = MerkleTree::from_bytes(&data, cs, F).unwrap();
        (data, tree)
    }

    fn bare(tree: &MerkleTree) -> PartialTree {
        PartialTree::new(F, tree.root(), tree.chunk_size()).unwrap()
    }

    /// The padded tree's hash of `bin` (zeros past the end).
    fn node(tree: &MerkleTree, bin: Bin) -> Hash {
        tree.node(bin).unwrap_or(F.zero())
    }

    /// Verifies chunk `c` with `data`, sending the uncles a peer holding
    /// the padded tree would send for a tree of `n` chunks.
    fn send(
        rx: &mut PartialTree,
        tree: &MerkleTree,
        n: u64,
        c: u64,
        data: &[u8],
    ) -> Result<(), VerifyError> {
        let peak = crate::merkle::peaks::peak_for(n, ChunkIndex(c)).unwrap();
        let mut cur = Bin::leaf(ChunkIndex(c)).unwrap();
        while cur != peak {
            let sib = cur.sibling().unwrap();
            rx.accept_uncle(sib, node(tree, sib)).unwrap();
            cur = cur.parent().unwrap();
        }
        rx.verify_chunk(ChunkIndex(c), data)
    }

    fn chunk(data: &[u8], c: u64) -> &[u8] {
        data.chunks(CS).nth(c as usize).unwrap()
    }

    #[test]
    fn a_root_level_peak_gives_way_to_the_true_peaks() {
        // 5 chunks, the last one 10 bytes: the tree has height 3, and one
        // peak at layer 3 equal to the root claims 8 chunks.
        let (data, tree) = content(4 * CS + 10);
        let mut rx = bare(&tree);
        let forged = [(Bin::new(3, 0).unwrap(), tree.root())];
        assert_eq!(rx.accept_peaks(&forged), Ok(8));
        for c in 0..4 {
            send(&mut rx, &tree, 8, c, chunk(&data, c)).unwrap();
        }
        assert!(rx.height_proven() && !rx.size_proven());
        // The true peaks are smaller at the same height: they win, and what
        // verified stays verified.
        assert_eq!(rx.accept_peaks(&tree.peaks()), Ok(5));
        assert_eq!(rx.verified_count(), 4);
        assert!(rx.refutes(8) && !rx.refutes(5));
        send(&mut rx, &tree, 5, 4, chunk(&data, 4)).unwrap();
        assert_eq!(rx.content_len(), Some(data.len() as u64));
        assert!(rx.size_proven());
        // Proven: the lie cannot come back, nor any other count.
        for claim in [
            &forged[..],
            &[
                (
                    Bin::new(2, 0).unwrap(),
                    node(&tree, Bin::new(2, 0).unwrap()),
                ),
                (
                    Bin::new(1, 2).unwrap(),
                    node(&tree, Bin::new(1, 2).unwrap()),
                ),
            ],
        ] {
            assert!(matches!(
                rx.accept_peaks(claim),
                Err(VerifyError::SizeMismatch { known: 5, .. })
            ));
        }
    }

    #[test]
    fn the_real_last_chunk_proves_the_end_by_itself() {
        // Under the forged 8, the real last chunk (short, or whole and so a
        // "middle" chunk) hashes up to the root with zeros to its right:
        // that proves 5 without anyone's peaks, and keeps what verified.
        for len in [4 * CS + 10, 5 * CS] {
            let (data, tree) = content(len);
            let mut rx = bare(&tree);
            rx.accept_peaks(&[(Bin::new(3, 0).unwrap(), tree.root())])
                .unwrap();
            for c in 0..4 {
                send(&mut rx, &tree, 8, c, chunk(&data, c)).unwrap();
            }
            assert_eq!(rx.content_len(), None);
            send(&mut rx, &tree, 8, 4, chunk(&data, 4)).unwrap();
            assert_eq!(rx.chunk_count(), Some(5), "len {len}");
            assert_eq!(rx.content_len(), Some(len as u64));
            assert!(rx.size_proven() && rx.refutes(8));
            assert!((0..5).all(|c| rx.is_verified(ChunkIndex(c))));
            assert_eq!(rx.accept_peaks(&tree.peaks()), Ok(5));
        }
    }

    #[test]
    fn larger_or_taller_claims_lose_to_a_backed_count() {
        let (data, tree) = content(5 * CS + 1);
        let mut rx = bare(&tree);
        rx.accept_peaks(&tree.peaks()).unwrap();
        send(&mut rx, &tree, 6, 0, chunk(&data, 0)).unwrap();
        // 8 chunks at the same height (7 does not make the root: its last
        // peak lies wholly in the padding, and H(0 ‖ 0) is not the zero of
        // an empty subtree), and the root as a taller tree's peak.
        let seven: Vec<(Bin, Hash)> = crate::merkle::peak_bins(7)
            .into_iter()
            .map(|b| (b, node(&tree, b)))
            .collect();
        assert_eq!(rx.accept_peaks(&seven), Err(VerifyError::BadPeaks));
        let eight = [(Bin::new(3, 0).unwrap(), tree.root())];
        let taller = [(Bin::new(5, 0).unwrap(), tree.root())];
        for claim in [&eight[..], &taller[..]] {
            assert!(matches!(
                rx.accept_peaks(claim),
                Err(VerifyError::SizeMismatch { known: 6, .. })
            ));
        }
        assert!(rx.refutes(8) && rx.refutes(32) && rx.refutes(4) && !rx.refutes(6));
        assert_eq!(rx.chunk_count(), Some(6));
    }

    #[test]
    fn inner_nodes_passed_off_as_a_one_chunk_file_are_refused() {
        // One peak equal to the root claims a 1-chunk file; the chunk would
        // be the root's two children, which hash to the root. RFC 7574 uses
        // one hash rule for leaves and inner nodes, so only the height
        // proven by a chunk of another length tells them apart.
        let (data, tree) = content(3 * CS);
        let mut rx = bare(&tree);
        assert_eq!(rx.accept_peaks(&[(Bin(0), tree.root())]), Ok(1));
        let (l, r) = tree.root_bin().children().unwrap();
        let mut forged = node(&tree, l).as_bytes().to_vec();
        forged.extend_from_slice(node(&tree, r).as_bytes());
        assert_eq!(F.digest(&forged), tree.root());
        assert_eq!(
            rx.verify_chunk(ChunkIndex(0), &forged),
            Err(VerifyError::Ambiguous(ChunkIndex(0)))
        );
        assert_eq!(rx.verified_count(), 0);
        assert_eq!(rx.content_len(), None);
        assert!(!rx.refutes(1), "nothing backs either claim yet");
        // The true peaks replace the unbacked claim; a real chunk backs them.
        assert_eq!(rx.accept_peaks(&tree.peaks()), Ok(3));
        send(&mut rx, &tree, 3, 0, chunk(&data, 0)).unwrap();
        assert!(rx.refutes(1));
    }
}
