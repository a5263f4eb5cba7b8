//! Peak hashes and the climb from peaks to the root (RFC 7574 §5.6).
//!
//! The peaks of content of N chunks are the roots of the largest complete
//! subtrees that hold only real chunks: one per 1-bit of N, largest first.
//! Hashing them up with all-zero padding on the right gives the root, which
//! is how a receiver learns N from the swarm id alone.

use crate::bin::Bin;
use crate::chunk::{ChunkIndex, MAX_CHUNK_INDEX};
use crate::hash::{Hash, HashFunction};

/// The most chunks any content can have: leaf `i` is bin `2i` and bins are
/// 64-bit (see [`MAX_CHUNK_INDEX`]).
pub(crate) const MAX_CHUNKS: u64 = MAX_CHUNK_INDEX + 1;

/// The bins of the peaks of content of `chunk_count` chunks, left to right
/// (strictly decreasing layers, contiguous from chunk 0).
///
/// Empty when `chunk_count` is 0 or above 2^63 (no such tree exists).
pub fn peak_bins(chunk_count: u64) -> Vec<Bin> {
    if chunk_count == 0 || chunk_count > MAX_CHUNKS {
        return Vec::new();
    }
    let mut bins = Vec::with_capacity(chunk_count.count_ones() as usize);
    let mut start = 0u64;
    for layer in (0..64u32).rev() {
        let width = 1u64 << layer;
        if chunk_count & width != 0 {
            // `start` is a multiple of `width` because only larger powers of
            // two were added before, so the bin exists.
            if let Some(bin) = Bin::new(layer, start >> layer) {
                bins.push(bin);
            }
            start = start.wrapping_add(width);
        }
    }
    bins
}

/// The chunk count whose peak decomposition is exactly `peaks` (left to
/// right), or `None` when they are not one: empty, not starting at chunk 0,
/// not contiguous, or layers not strictly decreasing.
pub fn chunk_count_from_peaks(peaks: &[Bin]) -> Option<u64> {
    let mut next = 0u64;
    let mut prev_layer = u32::MAX;
    if peaks.is_empty() {
        return None;
    }
    for &bin in peaks {
        if bin.is_none() {
            return None;
        }
        let layer = bin.layer();
        if layer >= prev_layer || bin.first_chunk().0 != next {
            return None;
        }
        prev_layer = layer;
        next = bin.last_chunk().0.checked_add(1)?;
    }
    Some(next)
}

/// The layer of the root of content of `chunk_count` chunks: the height of
/// the smallest complete binary tree with at least that many leaves
/// (RFC 7574 §5.1). `chunk_count` must be at least 1.
pub(crate) fn tree_height(chunk_count: u64) -> u32 {
    if chunk_count <= 1 {
        0
    } else {
        64 - (chunk_count - 1).leading_zeros()
    }
}

/// The root bin of content of `chunk_count` chunks (1 ..= 2^63).
pub(crate) fn root_bin(chunk_count: u64) -> Option<Bin> {
    if chunk_count == 0 || chunk_count > MAX_CHUNKS {
        return None;
    }
    Bin::new(tree_height(chunk_count), 0)
}

/// The peak whose subtree holds `chunk`, for content of `chunk_count`
/// chunks, or `None` when the chunk is out of range.
pub(crate) fn peak_for(chunk_count: u64, chunk: ChunkIndex) -> Option<Bin> {
    if chunk.0 >= chunk_count || chunk_count > MAX_CHUNKS {
        return None;
    }
    // Walk the peaks (the 1-bits of N, largest first) without building the
    // list: this runs for every DATA a sender writes.
    let mut start = 0u64;
    for layer in (0..64u32).rev() {
        let width = 1u64 << layer;
        if chunk_count & width != 0 {
            if chunk.0 < start + width {
                return Bin::new(layer, start >> layer);
            }
            start += width;
        }
    }
    None
}

/// The root hash implied by `peaks` (left to right), padding with all-zero
/// hashes on the right up to the smallest complete tree (RFC 7574 §5.6).
///
/// `None` when the bins are not a peak decomposition
/// ([`chunk_count_from_peaks`]) or a hash has the wrong length. Both the
/// builders and the receiver's verification use this one function.
pub fn root_from_peaks(hash_fn: HashFunction, peaks: &[(Bin, Hash)]) -> Option<Hash> {
    let bins: Vec<Bin> = peaks.iter().map(|p| p.0).collect();
    chunk_count_from_peaks(&bins)?;
    if peaks.iter().any(|p| p.1.len() != hash_fn.len()) {
        return None;
    }
    climb(hash_fn, peaks, |_, _| {}).map(|(_, h)| h)
}

/// Hashes the peaks up to the root, reporting every node above the last
/// peak to `visit` (these are the "incomplete" nodes that cover the end of
/// the content and empty leaves). Returns the root bin and hash.
///
/// Starts at the rightmost (smallest) peak: while the current node is a left
/// child its right sibling is empty, so the parent is H(node ‖ 0); when it
/// is a right child its left sibling must be the next peak to the left. A
/// parent of two empty subtrees never occurs here because the current node
/// always covers real chunks. Expects a valid peak decomposition; returns
/// `None` otherwise instead of panicking.
pub(crate) fn climb(
    hash_fn: HashFunction,
    peaks: &[(Bin, Hash)],
    mut visit: impl FnMut(Bin, &Hash),
) -> Option<(Bin, Hash)> {
    let mut left = peaks.len().checked_sub(1)?;
    let (mut cur, mut hash) = peaks[left];
    let zero = hash_fn.zero();
    loop {
        if cur.offset() == 0 {
            // The leftmost node of its layer: the root, once every peak has
            // been folded in.
            return (left == 0).then_some((cur, hash));
        }
        let parent = cur.parent()?;
        if cur.is_left() {
            hash = hash_fn.parent(&hash, &zero);
        } else {
            left = left.checked_sub(1)?;
            let (lbin, lhash) = peaks[left];
            if Some(lbin) != cur.sibling() {
                return None;
            }
            hash = hash_fn.parent(&lhash, &hash);
        }
        cur = parent;
        visit(cur, &hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_follow_the_bits_of_n() {
        assert_eq!(peak_bins(0), Vec::<Bin>::new());
        assert_eq!(peak_bins(1), vec![Bin(0)]);
        assert_eq!(peak_bins(3), vec![Bin(1), Bin(4)]);
        assert_eq!(peak_bins(7), vec![Bin(3), Bin(9), Bin(12)]);
        assert_eq!(peak_bins(8), vec![Bin(7)]);
        assert_eq!(peak_bins(MAX_CHUNKS), vec![Bin::ALL]);
        assert_eq!(peak_bins(MAX_CHUNKS + 1), Vec::<Bin>::new());
        assert_eq!(peak_bins(MAX_CHUNKS - 1).len(), 63);
    }

    #[test]
    fn chunk_count_from_peaks_round_trips_and_rejects() {
        for n in (1..300u64).chain([MAX_CHUNKS - 1, MAX_CHUNKS, 1 << 40]) {
            assert_eq!(chunk_count_from_peaks(&peak_bins(n)), Some(n), "n={n}");
        }
        assert_eq!(chunk_count_from_peaks(&[]), None);
        // Not starting at chunk 0.
        assert_eq!(chunk_count_from_peaks(&[Bin(2)]), None);
        // Increasing layers.
        assert_eq!(chunk_count_from_peaks(&[Bin(0), Bin(5)]), None);
        // Equal layers (two leaves instead of their parent).
        assert_eq!(chunk_count_from_peaks(&[Bin(0), Bin(2)]), None);
        // A gap.
        assert_eq!(chunk_count_from_peaks(&[Bin(1), Bin(6)]), None);
        assert_eq!(chunk_count_from_peaks(&[Bin::NONE]), None);
        assert_eq!(chunk_count_from_peaks(&[Bin::ALL, Bin(0)]), None);
    }

    #[test]
    fn heights_and_roots() {
        assert_eq!(tree_height(1), 0);
        assert_eq!(tree_height(2), 1);
        assert_eq!(tree_height(3), 2);
        assert_eq!(tree_height(4), 2);
        assert_eq!(tree_height(5), 3);
        assert_eq!(root_bin(5), Some(Bin(7)));
        assert_eq!(root_bin(MAX_CHUNKS), Some(Bin::ALL));
        assert_eq!(root_bin(0), None);
        assert_eq!(peak_for(3, ChunkIndex(2)), Some(Bin(4)));
        assert_eq!(peak_for(3, ChunkIndex(1)), Some(Bin(1)));
        assert_eq!(peak_for(3, ChunkIndex(3)), None);
    }

    #[test]
    fn climb_pads_with_zeros() {
        let f = HashFunction::Sha1;
        let (a, b) = (f.digest(b"a"), f.digest(b"b"));
        // N = 3: root = H(peak(0-1) ‖ H(leaf2 ‖ 0)).
        let expect = f.parent(&a, &f.parent(&b, &f.zero()));
        let mut seen = Vec::new();
        let got = climb(f, &[(Bin(1), a), (Bin(4), b)], |bin, _| seen.push(bin));
        assert_eq!(got, Some((Bin(3), expect)));
        assert_eq!(seen, vec![Bin(5), Bin(3)]);
        assert_eq!(
            root_from_peaks(f, &[(Bin(1), a), (Bin(4), b)]),
            Some(expect)
        );
        assert_eq!(root_from_peaks(f, &[(Bin(0), a)]), Some(a));
        assert_eq!(root_from_peaks(f, &[(Bin(4), b)]), None);
        assert_eq!(root_from_peaks(f, &[(Bin(0), Hash::zero(3))]), None);
    }
}
