//! What a leecher needs to serve the chunks it has verified: peak and uncle
//! hashes taken from its trusted nodes (RFC 7574 §5.4, §5.6).

use super::PartialTree;
use crate::bin::Bin;
use crate::chunk::ChunkIndex;
use crate::hash::Hash;
use crate::merkle::peaks::peak_bins;
use crate::merkle::uncles::uncle_path;

impl PartialTree {
    /// The chunk count, once a verified chunk backs it: fixed by the caller
    /// ([`with_chunk_count`](Self::with_chunk_count),
    /// [`restore`](Self::restore)) or claimed by peak hashes with its height
    /// proven ([`height_proven`](Self::height_proven)), so at least the true
    /// count. `None` while unknown or only claimed by peaks (a lie that
    /// nothing has contradicted yet must not be passed on to other peers or
    /// written to a checkpoint).
    pub fn proven_chunk_count(&self) -> Option<u64> {
        let n = self.chunk_count()?;
        self.height_proven().then_some(n)
    }

    /// The peak hashes, left to right (RFC 7574 §5.6), for serving other
    /// peers; `None` until the chunk count is proven
    /// ([`proven_chunk_count`](Self::proven_chunk_count)) and every peak is
    /// trusted (learned from peaks, or on the verified path of some chunk).
    pub fn peaks(&self) -> Option<Vec<(Bin, Hash)>> {
        let n = self.proven_chunk_count()?;
        peak_bins(n)
            .into_iter()
            .map(|b| Some((b, self.trusted(b)?)))
            .collect()
    }

    /// The uncle hashes to send before DATA of `chunk`, in RFC 7574 §5.4
    /// order, from trusted hashes only: the same contract as
    /// [`MerkleTree::uncles`](crate::merkle::MerkleTree::uncles).
    ///
    /// `None` when `chunk` has not verified here. A verified chunk always has
    /// every uncle up to the root trusted: its verification trusted each
    /// sibling on the way up to a trusted node, and every trusted node's
    /// sibling and parent are trusted too (peaks bring the nodes above them,
    /// verified paths bring their uncles).
    pub fn uncles(
        &self,
        chunk: ChunkIndex,
        receiver_holds: impl FnMut(Bin) -> bool,
    ) -> Option<Vec<(Bin, Hash)>> {
        if !self.is_verified(chunk) {
            return None;
        }
        let known = self.known.as_ref()?;
        uncle_path(
            known.chunk_count,
            chunk,
            |b| known.trusted(self.hash_fn, b),
            receiver_holds,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::bin::Bin;
    use crate::chunk::{ChunkIndex, ChunkSize};
    use crate::hash::HashFunction;
    use crate::merkle::{MerkleTree, PartialTree};

    const F: HashFunction = HashFunction::Sha256;

    fn setup(chunks: usize) -> (Vec<u8>, MerkleTree) {
        let data: Vec<u8> = (0..chunks * 4 - 1).map(|i| (i * 7 % 251) as u8).collect();
        let tree = MerkleTree::from_bytes(&data, ChunkSize::new(4).unwrap(), F).unwrap();
        (data, tree)
    }

    fn receive(rx: &mut PartialTree, tree: &MerkleTree, data: &[u8], c: u64) {
        let held = |b: Bin| {
            (0..tree.chunk_count())
                .any(|i| rx.is_verified(ChunkIndex(i)) && b.contains_chunk(ChunkIndex(i)))
        };
        let uncles = tree.uncles(ChunkIndex(c), held);
        for (b, h) in uncles {
            rx.accept_uncle(b, h).unwrap();
        }
        let chunk = data.chunks(4).nth(c as usize).unwrap();
        rx.verify_chunk(ChunkIndex(c), chunk).unwrap();
    }

    #[test]
    fn a_leecher_serves_the_seeders_uncles_for_what_it_verified() {
        let (data, tree) = setup(11);
        let mut rx = PartialTree::new(F, tree.root(), ChunkSize::new(4).unwrap()).unwrap();
        assert_eq!(rx.peaks(), None);
        rx.accept_peaks(&tree.peaks()).unwrap();
        // Size claimed by peaks only: not passed on yet.
        assert_eq!(rx.proven_chunk_count(), None);
        assert_eq!(rx.peaks(), None);
        for c in [9, 2, 3, 10] {
            receive(&mut rx, &tree, &data, c);
        }
        assert_eq!(rx.proven_chunk_count(), Some(11));
        assert_eq!(rx.peaks(), Some(tree.peaks()));
        for c in 0..12 {
            let chunk = ChunkIndex(c);
            let got = rx.uncles(chunk, |_| false);
            if rx.is_verified(chunk) {
                assert_eq!(got, Some(tree.uncles(chunk, |_| false)), "chunk {c}");
                let held = |b: Bin| b.contains_chunk(ChunkIndex(c ^ 1));
                assert_eq!(rx.uncles(chunk, held), Some(tree.uncles(chunk, held)));
            } else {
                assert_eq!(got, None, "chunk {c}");
            }
        }
    }

    #[test]
    fn peaks_need_every_peak_trusted_when_the_size_came_from_metadata() {
        // 7 chunks: peaks 3 (0-3), 9 (4-5), 12 (6).
        let (data, tree) = setup(7);
        let cs = ChunkSize::new(4).unwrap();
        let mut rx = PartialTree::with_chunk_count(F, tree.root(), cs, 7).unwrap();
        assert_eq!(rx.proven_chunk_count(), Some(7));
        assert_eq!(rx.peaks(), None);
        for (b, h) in tree.uncles(ChunkIndex(6), |_| false) {
            rx.accept_uncle(b, h).unwrap();
        }
        // Chunk 6 climbs through the spine to the root: it needs 3 and 9.
        rx.accept_uncle(Bin(9), tree.node(Bin(9)).unwrap()).unwrap();
        rx.accept_uncle(Bin(3), tree.node(Bin(3)).unwrap()).unwrap();
        rx.verify_chunk(ChunkIndex(6), &data[24..]).unwrap();
        assert_eq!(rx.peaks(), Some(tree.peaks()));
        assert_eq!(rx.uncles(ChunkIndex(6), |_| false), Some(Vec::new()));
    }
}
