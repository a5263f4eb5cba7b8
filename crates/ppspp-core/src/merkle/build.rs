//! Building whole trees in memory: the subtree hasher shared by every
//! builder, the in-order merge of subtree roots, and the builders that take
//! bytes, chunks or leaf hashes.
//!
//! The key fact (RFC 7574 §4.2 bin numbering): the bins of an aligned
//! subtree of `2^k` leaves are a contiguous run of `2^(k+1) − 1` numbers, so
//! an aligned group of chunks and its whole subtree map to one contiguous
//! slice of the flat node array. Parallel tasks therefore write disjoint
//! slices and need no locking; the sequential path walks the very same
//! slices in turn, so both give the same bytes.

use rayon::prelude::*;

use super::peaks::{climb, peak_bins, MAX_CHUNKS};
use super::{alloc_zeroed, flat_bytes, slot, MerkleError, MerkleTree};
use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkSize};
use crate::hash::{Hash, HashFunction};

/// log2 of the chunks one parallel task hashes: big enough that task
/// overhead vanishes (256 chunks ≈ 256 KiB at the default chunk size),
/// small enough that a few MiB split evenly over the cores.
const GRAIN_LAYER: u32 = 8;
/// Chunks per parallel task.
const GRAIN: usize = 1 << GRAIN_LAYER;

/// Whether building a tree may use threads. The core is sans-IO and spawns
/// nothing by itself: a driver that hashes large content (`ppspp hash`,
/// `ppspp seed`) asks for [`Parallelism::Parallel`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Parallelism {
    /// Everything on the calling thread; no thread is spawned.
    #[default]
    Sequential,
    /// Subtrees hashed on rayon's global pool (one thread per core unless
    /// `RAYON_NUM_THREADS` says otherwise), and for the streaming builders
    /// a helper thread that reads ahead.
    Parallel,
}

/// Hashes `data` (cut into `chunk_size` chunks, the last one possibly short)
/// into `nodes`, the bin-ordered node slice of an aligned subtree with local
/// numbering (leaf `i` at bin `2i`), and fills every filled interior node.
///
/// `nodes` must hold exactly `(2m − 1)·hash_len` bytes for `m` chunks.
pub(crate) fn hash_chunks_into(
    hash_fn: HashFunction,
    chunk_size: usize,
    data: &[u8],
    nodes: &mut [u8],
    parallelism: Parallelism,
) {
    let hl = hash_fn.len();
    let chunks = data.len().div_ceil(chunk_size);
    debug_assert_eq!(nodes.len(), (2 * chunks).saturating_sub(1) * hl);
    let grain = |(part, bytes): (&mut [u8], &[u8])| {
        for (i, chunk) in bytes.chunks(chunk_size).enumerate() {
            let leaf = hash_fn.digest(chunk);
            part[2 * i * hl..(2 * i + 1) * hl].copy_from_slice(leaf.as_bytes());
        }
        fill_layers(hash_fn, part, bytes.len().div_ceil(chunk_size), 1);
    };
    let (part_len, bytes_len) = (2 * GRAIN * hl, GRAIN * chunk_size);
    match parallelism {
        Parallelism::Sequential => nodes
            .chunks_mut(part_len)
            .zip(data.chunks(bytes_len))
            .for_each(grain),
        Parallelism::Parallel => nodes
            .par_chunks_mut(part_len)
            .zip(data.par_chunks(bytes_len))
            .for_each(grain),
    }
    fill_layers(hash_fn, nodes, chunks, GRAIN_LAYER + 1);
}

/// Fills the interior nodes of `nodes` (bin order, local numbering) whose
/// `leaves` leaf hashes are already in place.
pub(crate) fn fill_from_leaves(
    hash_fn: HashFunction,
    nodes: &mut [u8],
    leaves: usize,
    parallelism: Parallelism,
) {
    let hl = hash_fn.len();
    let grain = |part: &mut [u8]| {
        let count = (part.len() / hl).div_ceil(2);
        fill_layers(hash_fn, part, count, 1);
    };
    match parallelism {
        Parallelism::Sequential => nodes.chunks_mut(2 * GRAIN * hl).for_each(grain),
        Parallelism::Parallel => nodes.par_chunks_mut(2 * GRAIN * hl).for_each(grain),
    }
    fill_layers(hash_fn, nodes, leaves, GRAIN_LAYER + 1);
}

/// Computes, layer by layer from `from_layer` up, every filled interior node
/// over the first `leaves` leaves: node `o` of layer `l` is filled when
/// `(o + 1)·2^l ≤ leaves`, and its children sit `2^(l−1)` bins either side.
fn fill_layers(hash_fn: HashFunction, nodes: &mut [u8], leaves: usize, from_layer: u32) {
    let hl = hash_fn.len();
    let mut layer = from_layer.max(1);
    while layer < usize::BITS - 1 {
        let count = leaves >> layer;
        if count == 0 {
            break;
        }
        let half = 1usize << (layer - 1);
        for offset in 0..count {
            let bin = ((2 * offset + 1) << layer) - 1;
            let (l, r) = (bin - half, bin + half);
            let h =
                hash_fn.digest_parts(&[&nodes[l * hl..(l + 1) * hl], &nodes[r * hl..(r + 1) * hl]]);
            nodes[bin * hl..(bin + 1) * hl].copy_from_slice(h.as_bytes());
        }
        layer += 1;
    }
}

/// The roots of the complete subtrees seen so far, merged like a binary
/// counter: pushing the root of the next aligned subtree (left to right)
/// combines equal layers into their parent. After the last push the stack
/// holds exactly the peaks of the content (RFC 7574 §5.6).
pub(crate) struct PeakStack {
    hash_fn: HashFunction,
    peaks: Vec<(Bin, Hash)>,
}

impl PeakStack {
    pub(crate) fn new(hash_fn: HashFunction) -> Self {
        PeakStack {
            hash_fn,
            peaks: Vec::with_capacity(64),
        }
    }

    /// Pushes the next subtree root; every parent computed on the way is
    /// handed to `store` (a filled node).
    pub(crate) fn push(&mut self, bin: Bin, hash: Hash, mut store: impl FnMut(Bin, &Hash)) {
        self.peaks.push((bin, hash));
        while let [.., (lb, lh), (rb, rh)] = self.peaks[..] {
            if lb.layer() != rb.layer() {
                break;
            }
            let Some(parent) = rb.parent() else { break };
            let h = self.hash_fn.parent(&lh, &rh);
            self.peaks.truncate(self.peaks.len() - 2);
            store(parent, &h);
            self.peaks.push((parent, h));
        }
    }

    /// The peaks, left to right.
    pub(crate) fn into_peaks(self) -> Vec<(Bin, Hash)> {
        self.peaks
    }
}

/// The hash stored for filled bin `bin` (zero if out of range, which the
/// callers' invariants exclude).
pub(crate) fn hash_at(flat: &[u8], hash_fn: HashFunction, bin: Bin) -> Hash {
    slot(flat, hash_fn.len(), bin.0)
        .map(Hash::from_slice)
        .unwrap_or_else(|| hash_fn.zero())
}

/// A zeroed flat array for `chunk_count` chunks, or `TooLarge`.
pub(crate) fn alloc_flat(chunk_count: u64, hash_fn: HashFunction) -> Result<Vec<u8>, MerkleError> {
    if chunk_count > MAX_CHUNKS {
        return Err(MerkleError::TooLarge {
            chunks: chunk_count,
        });
    }
    flat_bytes(chunk_count, hash_fn.len())
        .and_then(alloc_zeroed)
        .ok_or(MerkleError::TooLarge {
            chunks: chunk_count,
        })
}

impl MerkleTree {
    /// Turns a complete flat array of filled nodes into a tree: reads the
    /// peaks and climbs to the root, keeping the incomplete spine nodes.
    pub(crate) fn assemble(
        hash_fn: HashFunction,
        chunk_size: ChunkSize,
        content_len: u64,
        chunk_count: u64,
        filled: Vec<u8>,
    ) -> Result<MerkleTree, MerkleError> {
        let peaks: Vec<(Bin, Hash)> = peak_bins(chunk_count)
            .into_iter()
            .map(|b| (b, hash_at(&filled, hash_fn, b)))
            .collect();
        let mut spine = Vec::new();
        let (root_bin, root) =
            climb(hash_fn, &peaks, |b, h| spine.push((b, *h))).ok_or(MerkleError::TooLarge {
                chunks: chunk_count,
            })?;
        Ok(MerkleTree {
            hash_fn,
            chunk_size,
            content_len,
            chunk_count,
            root_bin,
            root,
            filled,
            spine,
        })
    }

    /// The tree of `data` held in memory, hashed on the calling thread.
    ///
    /// Fails with [`MerkleError::EmptyContent`] for zero bytes.
    pub fn from_bytes(
        data: &[u8],
        chunk_size: ChunkSize,
        hash_fn: HashFunction,
    ) -> Result<MerkleTree, MerkleError> {
        Self::from_bytes_with(data, chunk_size, hash_fn, Parallelism::Sequential)
    }

    /// [`MerkleTree::from_bytes`], hashed on threads when `parallelism`
    /// says so; the tree is the same either way.
    pub fn from_bytes_with(
        data: &[u8],
        chunk_size: ChunkSize,
        hash_fn: HashFunction,
        parallelism: Parallelism,
    ) -> Result<MerkleTree, MerkleError> {
        if data.is_empty() {
            return Err(MerkleError::EmptyContent);
        }
        let content_len = data.len() as u64;
        let chunk_count = chunk_size.chunks_in(content_len);
        let mut filled = alloc_flat(chunk_count, hash_fn)?;
        hash_chunks_into(
            hash_fn,
            chunk_size.bytes_usize(),
            data,
            &mut filled,
            parallelism,
        );
        Self::assemble(hash_fn, chunk_size, content_len, chunk_count, filled)
    }

    /// The tree of content given chunk by chunk: every chunk but the last
    /// must be exactly `chunk_size` bytes, the last 1 ..= `chunk_size`.
    pub fn from_chunks<I>(
        chunks: I,
        chunk_size: ChunkSize,
        hash_fn: HashFunction,
    ) -> Result<MerkleTree, MerkleError>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        let cs = chunk_size.bytes_usize();
        let mut leaves = Vec::new();
        let mut content_len = 0u64;
        let mut iter = chunks.into_iter().peekable();
        while let Some(chunk) = iter.next() {
            let chunk = chunk.as_ref();
            let is_last = iter.peek().is_none();
            let ok = if is_last {
                (1..=cs).contains(&chunk.len())
            } else {
                chunk.len() == cs
            };
            if !ok {
                return Err(MerkleError::ChunkLength {
                    chunk: ChunkIndex(leaves.len() as u64),
                    len: chunk.len(),
                });
            }
            content_len += chunk.len() as u64;
            leaves.push(hash_fn.digest(chunk));
        }
        Self::from_leaf_hashes(hash_fn, leaves, content_len, chunk_size)
    }

    /// The tree over precomputed leaf hashes (one per chunk, in order) of
    /// content of `content_len` bytes: for synthetic content whose chunks
    /// are never materialised. The interior is hashed on the calling thread
    /// (as many hashes as leaves, which the caller has already spent).
    ///
    /// The number of leaves must equal `chunk_size.chunks_in(content_len)`
    /// and every hash must have `hash_fn`'s length.
    pub fn from_leaf_hashes(
        hash_fn: HashFunction,
        leaves: impl IntoIterator<Item = Hash>,
        content_len: u64,
        chunk_size: ChunkSize,
    ) -> Result<MerkleTree, MerkleError> {
        let chunk_count = chunk_size.chunks_in(content_len);
        if chunk_count == 0 {
            return Err(MerkleError::EmptyContent);
        }
        let mut filled = alloc_flat(chunk_count, hash_fn)?;
        let hl = hash_fn.len();
        let mut leaves = leaves.into_iter();
        // Leaf i goes to bin 2i: the first half of each two-node pair.
        for (i, dest) in filled.chunks_mut(2 * hl).enumerate() {
            let Some(leaf) = leaves.next() else {
                return Err(MerkleError::LeafCountMismatch {
                    expected: chunk_count,
                    got: i as u64,
                });
            };
            if leaf.len() != hl {
                return Err(MerkleError::HashLength {
                    expected: hl,
                    got: leaf.len(),
                });
            }
            dest[..hl].copy_from_slice(leaf.as_bytes());
        }
        if leaves.next().is_some() {
            return Err(MerkleError::LeafCountMismatch {
                expected: chunk_count,
                got: chunk_count + 1,
            });
        }
        fill_from_leaves(
            hash_fn,
            &mut filled,
            chunk_count as usize,
            Parallelism::Sequential,
        );
        Self::assemble(hash_fn, chunk_size, content_len, chunk_count, filled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: HashFunction = HashFunction::Sha1;

    fn cs(n: u64) -> ChunkSize {
        ChunkSize::new(n).unwrap()
    }

    #[test]
    fn one_chunk_root_is_the_content_hash() {
        for data in [&b"a"[..], b"123\n", &[7u8; 1024]] {
            let t = MerkleTree::from_bytes(data, cs(1024), F).unwrap();
            assert_eq!(t.root(), F.digest(data));
            assert_eq!(t.root_bin(), Bin(0));
            assert_eq!(t.chunk_count(), 1);
            assert_eq!(t.peaks(), vec![(Bin(0), F.digest(data))]);
            assert_eq!(t.node(Bin(1)), None);
        }
    }

    #[test]
    fn power_of_two_chunks_have_one_peak_and_no_spine() {
        for k in 0..6u32 {
            let n = 1usize << k;
            let data: Vec<u8> = (0..n * 4).map(|i| i as u8).collect();
            let t = MerkleTree::from_bytes(&data, cs(4), F).unwrap();
            assert_eq!(t.peaks().len(), 1);
            assert!(t.spine.is_empty());
            assert_eq!(t.root_bin(), Bin::new(k, 0).unwrap());
            assert_eq!(t.peaks()[0].1, t.root());
            assert_eq!(t.filled.len(), (2 * n - 1) * F.len());
        }
    }

    #[test]
    fn power_of_two_plus_one_pads_a_whole_half_with_zeros() {
        // 5 chunks of 4 bytes: root = H(peak(0-3) ‖ H(H(leaf4 ‖ 0) ‖ 0)).
        let data: Vec<u8> = (0..20u8).collect();
        let t = MerkleTree::from_bytes(&data, cs(4), F).unwrap();
        let leaf4 = F.digest(&data[16..]);
        let z = F.zero();
        let right = F.parent(&F.parent(&leaf4, &z), &z);
        assert_eq!(t.root(), F.parent(&t.node(Bin(3)).unwrap(), &right));
        assert_eq!(
            t.node(Bin(13)),
            Some(z),
            "two empty leaves give zero, not H(0‖0)"
        );
        assert_eq!(t.node(Bin(11)), Some(right));
        assert_eq!(t.spine.len(), 3);
    }

    #[test]
    fn last_chunk_of_one_byte_is_hashed_at_its_length() {
        let data = [9u8; 9];
        let t = MerkleTree::from_bytes(&data, cs(4), F).unwrap();
        assert_eq!(t.chunk_count(), 3);
        assert_eq!(t.node(Bin(4)), Some(F.digest(&[9])));
        assert_eq!(t.content_len(), 9);
    }

    #[test]
    fn from_chunks_checks_lengths() {
        let ok = MerkleTree::from_chunks([&b"abcd"[..], b"ef"], cs(4), F).unwrap();
        assert_eq!(
            ok.root(),
            MerkleTree::from_bytes(b"abcdef", cs(4), F).unwrap().root()
        );
        let short_middle = MerkleTree::from_chunks([&b"abc"[..], b"ef"], cs(4), F);
        assert!(matches!(
            short_middle,
            Err(MerkleError::ChunkLength {
                chunk: ChunkIndex(0),
                len: 3
            })
        ));
        let empty_last = MerkleTree::from_chunks([&b"abcd"[..], b""], cs(4), F);
        assert!(matches!(
            empty_last,
            Err(MerkleError::ChunkLength {
                chunk: ChunkIndex(1),
                len: 0
            })
        ));
        let long_last = MerkleTree::from_chunks([&b"abcde"[..]], cs(4), F);
        assert!(matches!(long_last, Err(MerkleError::ChunkLength { .. })));
    }

    #[test]
    fn from_leaf_hashes_checks_count_and_length() {
        let leaves = vec![F.digest(b"x"); 3];
        let t = MerkleTree::from_leaf_hashes(F, leaves.clone(), 3 * 1024, cs(1024)).unwrap();
        assert_eq!(t.chunk_count(), 3);
        assert!(matches!(
            MerkleTree::from_leaf_hashes(F, leaves.clone(), 2 * 1024, cs(1024)),
            Err(MerkleError::LeafCountMismatch {
                expected: 2,
                got: 3
            })
        ));
        assert!(matches!(
            MerkleTree::from_leaf_hashes(F, leaves.clone(), 4 * 1024, cs(1024)),
            Err(MerkleError::LeafCountMismatch {
                expected: 4,
                got: 3
            })
        ));
        assert!(matches!(
            MerkleTree::from_leaf_hashes(F, leaves, 0, cs(1024)),
            Err(MerkleError::EmptyContent)
        ));
        let wrong = vec![HashFunction::Sha256.digest(b"x")];
        assert!(matches!(
            MerkleTree::from_leaf_hashes(F, wrong, 10, cs(1024)),
            Err(MerkleError::HashLength {
                expected: 20,
                got: 32
            })
        ));
    }

    #[test]
    fn parallel_grains_match_a_sequential_fold() {
        // More than one grain (256 chunks) with a partial last grain.
        let n = 3 * GRAIN + 17;
        let data: Vec<u8> = (0..n).map(|i| (i * 31 % 256) as u8).collect();
        let t = MerkleTree::from_bytes_with(&data, cs(1), F, Parallelism::Parallel).unwrap();
        let mut stack = PeakStack::new(F);
        for (i, b) in data.iter().enumerate() {
            stack.push(Bin(2 * i as u64), F.digest(&[*b]), |_, _| {});
        }
        assert_eq!(stack.into_peaks(), t.peaks());
    }

    #[test]
    fn sequential_and_parallel_build_the_same_tree() {
        // Whole grains, a partial last grain, and fewer chunks than a grain.
        for n in [1, GRAIN, 4 * GRAIN, 5 * GRAIN + 3, GRAIN - 1] {
            let data: Vec<u8> = (0..n * 3).map(|i| (i * 13 % 251) as u8).collect();
            let seq = MerkleTree::from_bytes_with(&data, cs(3), F, Parallelism::Sequential);
            let par = MerkleTree::from_bytes_with(&data, cs(3), F, Parallelism::Parallel);
            let (seq, par) = (seq.unwrap(), par.unwrap());
            assert_eq!(seq.root(), par.root(), "{n} chunks");
            assert_eq!(seq.filled, par.filled);
            assert_eq!(seq.spine, par.spine);
            // The interior over given leaves, both ways.
            let hl = F.len();
            let mut a = seq.filled.clone();
            // Keep the leaves (even bins), clear the interior (odd bins).
            for pair in a.chunks_mut(2 * hl).filter(|p| p.len() > hl) {
                pair[hl..].fill(0);
            }
            let mut b = a.clone();
            fill_from_leaves(F, &mut a, n, Parallelism::Sequential);
            fill_from_leaves(F, &mut b, n, Parallelism::Parallel);
            assert_eq!(a, seq.filled);
            assert_eq!(b, seq.filled);
        }
    }

    #[test]
    fn too_many_chunks_is_an_error_not_a_panic() {
        assert!(matches!(
            alloc_flat(MAX_CHUNKS + 1, F),
            Err(MerkleError::TooLarge { .. })
        ));
        assert!(matches!(
            alloc_flat(1 << 62, F),
            Err(MerkleError::TooLarge { .. })
        ));
    }
}
