//! Blocks where a peer has nothing we could ask for ("dry"), remembered
//! between picks so that a search does not walk into them again.
//!
//! Rarest-first's bounds are over every neighbour, and so are blind to one
//! peer: in a swarm where we already hold most of what a peer has, a search
//! walks down to many blocks whose chunks at that peer are all taken (had
//! or requested), every pick. The picker marks such a block dry when it
//! finds it so; the channel makes a block wet again when the peer announces
//! a chunk of it that we lack, and forgets every mark when requested chunks
//! are given back (they are fresh again). Nothing else makes a dry block
//! fresh: taken chunks only grow otherwise. A mark may be missing (the
//! search then looks, as without marks) but is never wrongly present.

use std::cell::Cell;

use super::block_minima::BLOCK;
use crate::chunk::ChunkRange;

/// One peer's dry marks, a bit per 64-chunk block (kept by its channel).
#[derive(Clone, Debug, Default)]
pub struct DryBlocks {
    words: Vec<u64>,
}

impl DryBlocks {
    /// No block known dry.
    pub fn new() -> Self {
        Self::default()
    }

    /// The peer announced chunks of `range` we lack: their blocks are not
    /// dry.
    pub fn wet(&mut self, range: ChunkRange) {
        let marked = self.words.len() as u64 * 64;
        let (first, last) = (range.first().0 / BLOCK, range.last().0 / BLOCK);
        for b in first..=last.min(marked.saturating_sub(1)) {
            if b >= marked {
                break;
            }
            self.words[(b / 64) as usize] &= !(1 << (b % 64));
        }
    }

    /// Requested chunks were given back: any block may be fresh again.
    pub fn forget(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
    }

    /// The marks for a pick over `chunks` chunks, which may add some.
    pub fn view(&mut self, chunks: u64) -> DryView<'_> {
        let words = chunks.div_ceil(BLOCK).div_ceil(64) as usize;
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
        DryView(Cell::from_mut(&mut self.words[..]).as_slice_of_cells())
    }

    /// Whether `block` is marked dry.
    pub fn is_dry(&self, block: usize) -> bool {
        self.words
            .get(block / 64)
            .is_some_and(|w| w >> (block % 64) & 1 == 1)
    }
}

/// Dry marks as a pick sees them: read, and added to as it finds blocks
/// with nothing fresh.
#[derive(Clone, Copy, Debug)]
pub struct DryView<'a>(&'a [Cell<u64>]);

impl DryView<'_> {
    /// Whether every one of the `n` blocks from `first` is dry; `n` is a
    /// power of two and `first` a multiple of it (a node of the minima
    /// tree). Blocks past the marks are not.
    pub(crate) fn all_dry(&self, first: usize, n: usize) -> bool {
        if n >= 64 {
            let (lo, hi) = (first / 64, (first + n) / 64);
            return hi <= self.0.len() && self.0[lo..hi].iter().all(|w| w.get() == u64::MAX);
        }
        let Some(w) = self.0.get(first / 64) else {
            return false;
        };
        let mask = (u64::MAX >> (64 - n)) << (first % 64);
        w.get() & mask == mask
    }

    /// Marks `block` dry (if within the marks).
    pub(crate) fn mark(&self, block: usize) {
        if let Some(w) = self.0.get(block / 64) {
            w.set(w.get() | 1 << (block % 64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: u64, b: u64) -> ChunkRange {
        ChunkRange::new(a, b).unwrap()
    }

    #[test]
    fn marks_wet_and_forget() {
        let mut d = DryBlocks::new();
        // 200 blocks of marks.
        let v = d.view(200 * 64);
        for b in [3, 64, 65, 130] {
            v.mark(b);
        }
        (0..64).for_each(|b| v.mark(128 + b));
        assert!(v.all_dry(3, 1) && !v.all_dry(2, 2) && v.all_dry(64, 2));
        assert!(v.all_dry(128, 64) && !v.all_dry(64, 64) && !v.all_dry(0, 256));
        // Past the marks: not dry, and marking there does nothing.
        v.mark(10_000);
        assert!(!v.all_dry(10_000, 1) && !v.all_dry(256, 64));
        // A chunk of block 65 announced: wet, its neighbour still dry.
        d.wet(r(65 * 64 + 10, 65 * 64 + 10));
        assert!(!d.is_dry(65) && d.is_dry(64));
        // A range over blocks 129..=131.
        d.wet(r(129 * 64 + 63, 131 * 64));
        assert!(d.is_dry(128) && !d.is_dry(129) && !d.is_dry(131) && d.is_dry(132));
        d.forget();
        assert!((0..256).all(|b| !d.is_dry(b)));
        // Announcements before any view are harmless.
        let mut fresh = DryBlocks::new();
        fresh.wet(r(0, 1000));
        assert!(!fresh.is_dry(0));
    }
}
