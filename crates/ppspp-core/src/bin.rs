//! Bin numbers: the binary-tree addressing of chunks (RFC 7574 §4.2).
//!
//! Leaf (chunk) `i` is bin `2i`; the node at layer `l` and offset `o` is
//! `(2o + 1)·2^l − 1`, so a bin's layer is the number of trailing one bits and
//! every subtree occupies a contiguous run of bin numbers. All-ones is the
//! "no bin" value and `0x7FFF…F` (layer 63, offset 0) covers every chunk.
//!
//! 32-bit bins on the wire are the same numbers zero-extended, except that
//! the 32-bit all-ones value also means "no bin".

use std::fmt;

use crate::chunk::{ChunkIndex, ChunkRange, MAX_CHUNK_INDEX};

/// A node of the (virtual, infinite) binary tree over chunks.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bin(pub u64);

impl Bin {
    /// The "no bin" value (all ones).
    pub const NONE: Bin = Bin(u64::MAX);
    /// The bin covering every chunk (layer 63, offset 0).
    pub const ALL: Bin = Bin(u64::MAX >> 1);
    /// The highest layer a 64-bit bin can have.
    pub const MAX_LAYER: u32 = 63;

    /// The bin at `layer` and `offset`, or `None` when it does not fit in 64
    /// bits (or would be the reserved all-ones value).
    pub fn new(layer: u32, offset: u64) -> Option<Bin> {
        if layer > Self::MAX_LAYER {
            return None;
        }
        // (2o + 1)·2^l − 1 ≤ 2^64 − 2  ⇔  2o + 1 < 2^(64 − l)  ⇔  o < 2^(63 − l).
        if offset >= (1u64 << (63 - layer)) {
            return None;
        }
        let odd = (offset << 1) | 1;
        Some(Bin((odd << layer) - 1))
    }

    /// The leaf bin of `chunk`, or `None` past [`MAX_CHUNK_INDEX`].
    pub fn leaf(chunk: ChunkIndex) -> Option<Bin> {
        (chunk.0 <= MAX_CHUNK_INDEX).then_some(Bin(chunk.0 << 1))
    }

    /// A 32-bit bin from the wire: zero-extended, all-ones meaning "no bin".
    pub fn from_u32(raw: u32) -> Bin {
        if raw == u32::MAX {
            Bin::NONE
        } else {
            Bin(u64::from(raw))
        }
    }

    /// The 32-bit wire form, or `None` when the bin does not fit in 32 bits.
    pub fn to_u32(self) -> Option<u32> {
        if self.is_none() {
            Some(u32::MAX)
        } else {
            u32::try_from(self.0).ok().filter(|&v| v != u32::MAX)
        }
    }

    /// The raw bin number.
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// Whether this is the "no bin" value.
    pub const fn is_none(self) -> bool {
        self.0 == u64::MAX
    }

    /// The layer: 0 for leaves, one more per level up (64 for [`Bin::NONE`]).
    pub const fn layer(self) -> u32 {
        self.0.trailing_ones()
    }

    /// The position of this bin among the bins of its layer, left to right.
    pub const fn offset(self) -> u64 {
        match self.0.checked_shr(self.layer() + 1) {
            Some(o) => o,
            None => 0,
        }
    }

    /// Whether this bin is a single chunk.
    pub const fn is_leaf(self) -> bool {
        self.0 & 1 == 0
    }

    /// Whether this bin is the left child of its parent.
    pub const fn is_left(self) -> bool {
        self.offset() & 1 == 0
    }

    /// The number of chunks under this bin (2^layer; 0 for [`Bin::NONE`]).
    pub const fn chunk_count(self) -> u64 {
        match 1u64.checked_shl(self.layer()) {
            Some(n) => n,
            None => 0,
        }
    }

    /// The bin one layer up, or `None` at the top layer or for [`Bin::NONE`].
    pub fn parent(self) -> Option<Bin> {
        let layer = self.layer();
        if layer >= Self::MAX_LAYER {
            return None;
        }
        Bin::new(layer + 1, self.offset() >> 1)
    }

    /// The other child of this bin's parent, or `None` at the top layer.
    pub fn sibling(self) -> Option<Bin> {
        let layer = self.layer();
        if layer >= Self::MAX_LAYER {
            return None;
        }
        Some(Bin(self.0 ^ (1u64 << (layer + 1))))
    }

    /// The left and right children, or `None` for a leaf or [`Bin::NONE`].
    pub fn children(self) -> Option<(Bin, Bin)> {
        let layer = self.layer();
        if layer == 0 || self.is_none() {
            return None;
        }
        let half = 1u64 << (layer - 1);
        Some((Bin(self.0 - half), Bin(self.0 + half)))
    }

    /// The left child, or `None` for a leaf.
    pub fn left(self) -> Option<Bin> {
        self.children().map(|(l, _)| l)
    }

    /// The right child, or `None` for a leaf.
    pub fn right(self) -> Option<Bin> {
        self.children().map(|(_, r)| r)
    }

    /// The first chunk under this bin.
    pub const fn first_chunk(self) -> ChunkIndex {
        ChunkIndex(match self.offset().checked_shl(self.layer()) {
            Some(c) => c,
            None => 0,
        })
    }

    /// The last chunk under this bin.
    pub const fn last_chunk(self) -> ChunkIndex {
        ChunkIndex(self.first_chunk().0 + self.chunk_count().saturating_sub(1))
    }

    /// The chunks this bin covers, or `None` for [`Bin::NONE`].
    pub fn chunks(self) -> Option<ChunkRange> {
        if self.is_none() {
            return None;
        }
        ChunkRange::new(self.first_chunk(), self.last_chunk())
    }

    /// The smallest bin number in this subtree (its leftmost leaf).
    pub const fn base_left(self) -> Bin {
        Bin(self.first_chunk().0 << 1)
    }

    /// The largest bin number in this subtree (its rightmost leaf).
    pub const fn base_right(self) -> Bin {
        Bin(self.last_chunk().0 << 1)
    }

    /// Whether `other` lies in this bin's subtree (a bin contains itself).
    pub fn contains(self, other: Bin) -> bool {
        if self.is_none() || other.is_none() {
            return false;
        }
        other.layer() <= self.layer() && self.base_left() <= other && other <= self.base_right()
    }

    /// Whether `chunk` lies under this bin.
    pub fn contains_chunk(self, chunk: ChunkIndex) -> bool {
        !self.is_none() && self.first_chunk() <= chunk && chunk <= self.last_chunk()
    }

    /// The ancestor of this bin at `layer` (itself when `layer` equals its own).
    pub fn ancestor_at(self, layer: u32) -> Option<Bin> {
        let own = self.layer();
        if layer < own || layer > Self::MAX_LAYER || self.is_none() {
            return None;
        }
        Bin::new(layer, self.first_chunk().0 >> layer)
    }
}

impl fmt::Debug for Bin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            write!(f, "Bin(none)")
        } else {
            write!(f, "Bin({}: l{} o{})", self.0, self.layer(), self.offset())
        }
    }
}

impl fmt::Display for Bin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

/// Iterator over the fewest bins that exactly cover a chunk range, left to
/// right (see [`ChunkRange::bins`]).
#[derive(Clone, Debug)]
pub struct RangeBins {
    next: u64,
    last: u64,
    done: bool,
}

impl RangeBins {
    pub(crate) fn new(range: ChunkRange) -> Self {
        RangeBins {
            next: range.first().0,
            last: range.last().0,
            done: false,
        }
    }
}

impl Iterator for RangeBins {
    type Item = Bin;

    fn next(&mut self) -> Option<Bin> {
        if self.done {
            return None;
        }
        // The largest aligned block starting at `next` that does not pass `last`:
        // alignment limits it to the trailing zeros of `next`, length to
        // floor(log2(remaining)).
        let remaining = self.last - self.next + 1; // ≥ 1, ≤ 2^63
        let by_len = 63 - remaining.leading_zeros();
        let by_align = self.next.trailing_zeros().min(Bin::MAX_LAYER);
        let layer = by_len.min(by_align);
        let bin = Bin::new(layer, self.next >> layer)?;
        let width = 1u64 << layer;
        if width == remaining {
            self.done = true;
        } else {
            self.next += width;
        }
        Some(bin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_rfc_figure() {
        // RFC 7574 §4.2 Figure 2: bins 0..=14 over 8 chunks.
        assert_eq!(Bin::new(0, 0), Some(Bin(0)));
        assert_eq!(Bin::new(0, 3), Some(Bin(6)));
        assert_eq!(Bin::new(1, 0), Some(Bin(1)));
        assert_eq!(Bin::new(1, 1), Some(Bin(5)));
        assert_eq!(Bin::new(2, 0), Some(Bin(3)));
        assert_eq!(Bin::new(2, 1), Some(Bin(11)));
        assert_eq!(Bin::new(3, 0), Some(Bin(7)));
        assert_eq!(Bin(11).layer(), 2);
        assert_eq!(Bin(11).offset(), 1);
        assert_eq!(Bin(11).chunks(), ChunkRange::new(4u64, 7u64));
        assert_eq!(Bin(5).parent(), Some(Bin(3)));
        assert_eq!(Bin(3).sibling(), Some(Bin(11)));
        assert_eq!(Bin(7).children(), Some((Bin(3), Bin(11))));
        assert_eq!(Bin(4).children(), None);
        assert_eq!(Bin(3).base_left(), Bin(0));
        assert_eq!(Bin(3).base_right(), Bin(6));
    }

    #[test]
    fn extremes() {
        assert_eq!(Bin::new(63, 0), Some(Bin::ALL));
        assert_eq!(Bin::new(63, 1), None);
        assert_eq!(Bin::new(64, 0), None);
        assert_eq!(Bin::ALL.parent(), None);
        assert_eq!(Bin::ALL.sibling(), None);
        assert_eq!(Bin::ALL.chunks(), ChunkRange::new(0u64, MAX_CHUNK_INDEX));
        assert_eq!(
            Bin::leaf(ChunkIndex(MAX_CHUNK_INDEX)),
            Some(Bin(u64::MAX - 1))
        );
        assert_eq!(Bin::leaf(ChunkIndex(MAX_CHUNK_INDEX + 1)), None);
        assert_eq!(Bin::new(0, MAX_CHUNK_INDEX), Some(Bin(u64::MAX - 1)));
        assert_eq!(Bin::new(1, 1 << 62), None);
        assert_eq!(Bin::NONE.layer(), 64);
        assert_eq!(Bin::NONE.chunks(), None);
        assert_eq!(Bin::NONE.parent(), None);
        assert_eq!(Bin::NONE.children(), None);
        assert!(!Bin::ALL.contains(Bin::NONE));
    }

    #[test]
    fn thirty_two_bit_wire_form() {
        assert_eq!(Bin::from_u32(u32::MAX), Bin::NONE);
        assert_eq!(Bin::from_u32(0x7FFF_FFFF).layer(), 31);
        assert_eq!(Bin::NONE.to_u32(), Some(u32::MAX));
        assert_eq!(Bin(0x1_0000_0000).to_u32(), None);
        assert_eq!(Bin(6).to_u32(), Some(6));
    }

    #[test]
    fn decomposition_examples() {
        let bins = |a: u64, b: u64| ChunkRange::new(a, b).unwrap().bins().collect::<Vec<_>>();
        assert_eq!(bins(0, 7), vec![Bin(7)]);
        assert_eq!(bins(0, 2), vec![Bin(1), Bin(4)]);
        assert_eq!(bins(1, 6), vec![Bin(2), Bin(5), Bin(9), Bin(12)]);
        assert_eq!(bins(3, 3), vec![Bin(6)]);
        assert_eq!(bins(0, MAX_CHUNK_INDEX), vec![Bin::ALL]);
        assert_eq!(
            bins(MAX_CHUNK_INDEX, MAX_CHUNK_INDEX),
            vec![Bin(u64::MAX - 1)]
        );
    }
}
