//! The sender's complete Merkle tree and the hashes it sends before DATA
//! (RFC 7574 §5.6, §5.4).

use std::fmt;

use super::build::hash_at;
use super::peaks::{peak_bins, peak_for};
use super::uncles::uncle_path;
use super::{node_kind, NodeKind};
use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkSize};
use crate::hash::{Hash, HashFunction};

/// A complete Merkle hash tree over static content (RFC 7574 §5.1).
///
/// Filled nodes live in one flat array indexed by bin (all have bins below
/// `2N − 1`), the incomplete nodes of the right spine in a short list, and
/// empty subtrees are implicit zero hashes. Memory: `(2N − 1)·hash_len`
/// bytes plus at most 64 spine entries.
#[derive(Clone)]
pub struct MerkleTree {
    pub(super) hash_fn: HashFunction,
    pub(super) chunk_size: ChunkSize,
    pub(super) content_len: u64,
    pub(super) chunk_count: u64,
    pub(super) root_bin: Bin,
    pub(super) root: Hash,
    /// Filled nodes, `hash_len` bytes per bin, indexed by bin.
    pub(super) filled: Vec<u8>,
    /// Incomplete nodes above the last peak, lowest layer first.
    pub(super) spine: Vec<(Bin, Hash)>,
}

impl MerkleTree {
    /// The root hash: the swarm id of static content (RFC 7574 §5.1).
    pub fn root(&self) -> Hash {
        self.root
    }

    /// The bin of the root: layer ⌈log2 N⌉, offset 0.
    pub fn root_bin(&self) -> Bin {
        self.root_bin
    }

    /// The number of chunks N (at least 1).
    pub fn chunk_count(&self) -> u64 {
        self.chunk_count
    }

    /// The content length in bytes: `(N − 1)·chunk_size + len(last chunk)`.
    pub fn content_len(&self) -> u64 {
        self.content_len
    }

    /// The chunk size the content was cut with.
    pub fn chunk_size(&self) -> ChunkSize {
        self.chunk_size
    }

    /// The hash function of the tree.
    pub fn hash_function(&self) -> HashFunction {
        self.hash_fn
    }

    /// The hash of node `bin`, or `None` when `bin` is not under the root.
    ///
    /// Subtrees past the end of the content give the all-zero hash
    /// (RFC 7574 §5.1).
    pub fn node(&self, bin: Bin) -> Option<Hash> {
        match node_kind(self.chunk_count, self.root_bin, bin)? {
            NodeKind::Filled => Some(hash_at(&self.filled, self.hash_fn, bin)),
            NodeKind::Empty => Some(self.hash_fn.zero()),
            NodeKind::Incomplete => self.spine.iter().find(|(b, _)| *b == bin).map(|(_, h)| *h),
        }
    }

    /// The peak hashes, left to right (RFC 7574 §5.6): the roots of the
    /// largest complete subtrees over real chunks, one per 1-bit of N.
    pub fn peaks(&self) -> Vec<(Bin, Hash)> {
        peak_bins(self.chunk_count)
            .into_iter()
            .map(|b| (b, hash_at(&self.filled, self.hash_fn, b)))
            .collect()
    }

    /// The peak whose subtree holds `chunk`, or `None` past the end.
    pub fn peak_for(&self, chunk: ChunkIndex) -> Option<Bin> {
        peak_for(self.chunk_count, chunk)
    }

    /// The peak hashes to send before a DATA: all of them while the
    /// receiver has acknowledged nothing yet (it cannot know N otherwise),
    /// none afterwards — libswift's behaviour, allowed by RFC 7574 §5.6.
    pub fn peaks_needed(&self, receiver_has_anything: bool) -> Vec<(Bin, Hash)> {
        if receiver_has_anything {
            Vec::new()
        } else {
            self.peaks()
        }
    }

    /// The uncle hashes to send before DATA of `chunk`, in RFC 7574 §5.4
    /// order: descending tree height (the one nearest the peak first).
    ///
    /// `receiver_holds(b)` tells whether the receiver already holds some
    /// verified chunk under bin `b` (from its ACKs and HAVEs). Walking up
    /// from the chunk, we stop once the parent of the current node is held:
    /// the receiver then already trusts the current node (it lay on, or
    /// beside, the verified path of that chunk). We always stop at the
    /// chunk's peak, which the receiver trusts via the peak hashes — the
    /// same rule as libswift. Empty for a chunk past the end.
    pub fn uncles(
        &self,
        chunk: ChunkIndex,
        receiver_holds: impl FnMut(Bin) -> bool,
    ) -> Vec<(Bin, Hash)> {
        // Under a peak every node is filled, so every sibling is stored.
        uncle_path(
            self.chunk_count,
            chunk,
            |b| Some(hash_at(&self.filled, self.hash_fn, b)),
            receiver_holds,
        )
        .unwrap_or_default()
    }
}

impl fmt::Debug for MerkleTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MerkleTree")
            .field("hash_fn", &self.hash_fn)
            .field("chunk_size", &self.chunk_size)
            .field("content_len", &self.content_len)
            .field("chunk_count", &self.chunk_count)
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: HashFunction = HashFunction::Sha1;

    fn tree(chunks: usize) -> MerkleTree {
        let data: Vec<u8> = (0..chunks * 2).map(|i| i as u8).collect();
        MerkleTree::from_bytes(&data, ChunkSize::new(2).unwrap(), F).unwrap()
    }

    #[test]
    fn uncles_descend_and_stop_at_held_parents() {
        let t = tree(8);
        let chunk = ChunkIndex(5); // bin 10
        let got: Vec<Bin> = t.uncles(chunk, |_| false).iter().map(|u| u.0).collect();
        assert_eq!(got, vec![Bin(3), Bin(13), Bin(8)]);
        // Holding chunk 0 covers bin 7 (the root): bin 3 is then known.
        let held = |b: Bin| b.contains_chunk(ChunkIndex(0));
        let got: Vec<Bin> = t.uncles(chunk, held).iter().map(|u| u.0).collect();
        assert_eq!(got, vec![Bin(13), Bin(8)]);
        // Holding chunk 4, the sibling leaf: nothing to send.
        assert!(t
            .uncles(chunk, |b| b.contains_chunk(ChunkIndex(4)))
            .is_empty());
        for (bin, hash) in t.uncles(chunk, |_| false) {
            assert_eq!(t.node(bin), Some(hash));
        }
    }

    #[test]
    fn uncles_stop_at_the_chunks_peak() {
        let t = tree(7); // peaks 3 (0-3), 9 (4-5), 12 (6)
        let got: Vec<Bin> = t
            .uncles(ChunkIndex(5), |_| false)
            .iter()
            .map(|u| u.0)
            .collect();
        assert_eq!(got, vec![Bin(8)]);
        assert!(t.uncles(ChunkIndex(6), |_| false).is_empty());
        assert!(t.uncles(ChunkIndex(7), |_| false).is_empty());
        assert!(t.uncles(ChunkIndex(u64::MAX), |_| false).is_empty());
        assert_eq!(t.peak_for(ChunkIndex(2)), Some(Bin(3)));
        assert_eq!(t.peak_for(ChunkIndex(u64::MAX)), None);
    }

    #[test]
    fn node_covers_the_whole_root_subtree_and_nothing_else() {
        let t = tree(3);
        assert_eq!(t.root_bin(), Bin(3));
        assert_eq!(t.node(Bin(3)), Some(t.root()));
        assert_eq!(t.node(Bin(6)), Some(F.zero()));
        assert_eq!(
            t.node(Bin(5)),
            Some(F.parent(&t.node(Bin(4)).unwrap(), &F.zero()))
        );
        assert_eq!(t.node(Bin(7)), None);
        assert_eq!(t.node(Bin(8)), None);
        assert_eq!(t.node(Bin::NONE), None);
        assert_eq!(t.node(Bin::ALL), None);
        assert!(format!("{t:?}").contains("chunk_count: 3"));
    }
}
