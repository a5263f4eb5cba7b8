//! The flat layout of a fragmented binmap.
//!
//! A binmap's tree costs 16 bytes per cell and one cache line per level on
//! every update: a peer's HAVEs arrive in rarest-first order, scattered over
//! the content, so each one descends a cold path of about `height − 6`
//! cells. Once a tree is so fragmented that its live cells take as much
//! memory as a plain bitset over its root (`2^height / 8` bytes), it switches
//! to this layout: the bitmap words in order, plus one "has a filled chunk"
//! and one "is all filled" bit per node of the implicit binary tree above
//! them. A one-chunk update then touches one word, and the summary bits
//! only when that word turns empty, non-empty, full or non-full. Searches
//! see the same tree as before (see [`Flat::node`]): a summary node that is
//! uniform reads as the uniform reference, so the "live nodes are mixed"
//! invariant the queries rely on holds in both layouts.
//!
//! Node numbering is a heap's: node 1 covers every word, node `i` has
//! children `2i` and `2i + 1`, and nodes `W ..= 2W − 1` are the `W` words.

use super::query::Node;
use super::{fill_bits, word_mask, EMPTY, FULL, WORD_HEIGHT};

/// Words, and summary bits for the nodes above them (see the module docs),
/// in one allocation: an update then misses the cache once, on its word.
#[derive(Clone, Debug)]
pub(super) struct Flat {
    /// The `W` words (chunk `c` is bit `c % 64` of word `c / 64`), then the
    /// summary: bits `2i` and `2i + 1` of the summary are node `i`'s "has a
    /// filled chunk" and "is all filled" (`1 ≤ i < W`), side by side so
    /// that one load answers both.
    data: Box<[u64]>,
    /// `W`, a power of two ≥ 2.
    words: usize,
}

/// `u64`s of summary for `words` words: two bits per node.
fn summary_len(words: usize) -> usize {
    (2 * words).div_ceil(64)
}

impl Flat {
    /// An empty layout over `2^height` chunks (`height > 6`).
    pub(super) fn new(height: u32) -> Self {
        debug_assert!(height > WORD_HEIGHT);
        let words = 1usize << (height - WORD_HEIGHT);
        Flat {
            data: vec![EMPTY; words + summary_len(words)].into_boxed_slice(),
            words,
        }
    }

    /// Heap bytes the layout takes over `2^height` chunks.
    pub(super) fn heap_bytes_for(height: u32) -> usize {
        let words = 1usize << (height - WORD_HEIGHT);
        (words + summary_len(words)) * std::mem::size_of::<u64>()
    }

    /// Heap bytes held.
    pub(super) fn heap_bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<u64>()
    }

    /// The word of chunks `64·w ..`; `w` must be below the word count.
    pub(super) fn word(&self, w: usize) -> u64 {
        self.data[w]
    }

    /// Mutable access to the words, for building the layout from a tree;
    /// [`Flat::refresh_all`] must follow.
    pub(super) fn words_mut(&mut self) -> &mut [u64] {
        &mut self.data[..self.words]
    }

    /// Whether node `i` has a filled chunk, and whether it is all filled.
    #[inline]
    fn state(&self, i: usize) -> (bool, bool) {
        let w = self.words;
        if i >= w {
            let word = self.data[i - w];
            (word != EMPTY, word == FULL)
        } else {
            let pair = self.data[w + i / 32] >> (2 * (i % 32));
            (pair & 1 == 1, pair & 2 == 2)
        }
    }

    /// Stores node `i`'s summary bits (`i < W`).
    fn put(&mut self, i: usize, any: bool, all: bool) {
        let slot = &mut self.data[self.words + i / 32];
        let shift = 2 * (i % 32);
        *slot = (*slot & !(3 << shift)) | ((u64::from(any) | u64::from(all) << 1) << shift);
    }

    /// Node `i` as the queries see it: a word, a uniform reference, or a
    /// mixed summary node.
    #[inline]
    pub(super) fn node(&self, i: usize) -> Node {
        let w = self.words;
        if i >= w {
            return Node::Ref(self.data[i - w]);
        }
        match self.state(i) {
            (false, _) => Node::Ref(EMPTY),
            (_, true) => Node::Ref(FULL),
            _ => Node::Flat(i),
        }
    }

    /// The root (node 1) as the queries see it.
    pub(super) fn root(&self) -> Node {
        self.node(1)
    }

    /// Recomputes node `i`'s summary bits from its children; tells whether
    /// they changed.
    fn refresh(&mut self, i: usize) -> bool {
        let (la, lf) = self.state(2 * i);
        let (ra, rf) = self.state(2 * i + 1);
        let (any, all) = (la || ra, lf && rf);
        if (any, all) == self.state(i) {
            return false;
        }
        self.put(i, any, all);
        true
    }

    /// Refreshes the ancestors of word `w`, stopping where nothing changes.
    fn refresh_up(&mut self, w: usize) {
        let mut i = (w + self.words) / 2;
        while i >= 1 && self.refresh(i) {
            i /= 2;
        }
    }

    /// Refreshes every summary bit (after [`Flat::words_mut`]): children
    /// have larger numbers than their parents, so counting down visits
    /// every node after its children.
    pub(super) fn refresh_all(&mut self) {
        for i in (1..self.words).rev() {
            self.refresh(i);
        }
    }

    /// Sets (`fill` = [`FULL`]) or clears ([`EMPTY`]) chunk `c`, which lies
    /// below the layout's end; returns whether it changed.
    pub(super) fn assign_chunk(&mut self, c: u64, fill: u64) -> bool {
        let w = (c >> WORD_HEIGHT) as usize;
        let old = self.data[w];
        let new = fill_bits(old, 1u64 << (c & 63), fill);
        if new == old {
            return false;
        }
        self.data[w] = new;
        // The summaries change only when the word's own (any, all) does.
        if (old == EMPTY) != (new == EMPTY) || (old == FULL) != (new == FULL) {
            self.refresh_up(w);
        }
        true
    }

    /// Sets or clears chunks `lo ..= hi` (below the layout's end); returns
    /// how many chunks changed. Subtrees already all `fill` are skipped by
    /// their summary bits, so the cost is the range's two boundary paths
    /// plus the words that change, never the whole range: a HAVE naming
    /// the whole content over a peer's fragmented set costs what it fills.
    pub(super) fn assign(&mut self, lo: u64, hi: u64, fill: u64) -> u64 {
        let chunks = (self.words as u64) << WORD_HEIGHT;
        self.assign_node(1, 0, chunks, (lo, hi), fill)
    }

    /// [`Flat::assign`] under node `i`, which covers `len` chunks from `base`.
    fn assign_node(&mut self, i: usize, base: u64, len: u64, range: (u64, u64), fill: u64) -> u64 {
        let (from, to) = (range.0.max(base), range.1.min(base + len - 1));
        if from > to {
            return 0;
        }
        match self.state(i) {
            (_, true) if fill == FULL => return 0,
            (false, _) if fill == EMPTY => return 0,
            _ => {}
        }
        if i >= self.words {
            let w = i - self.words;
            let mask = word_mask(from - base, to - base);
            let old = self.data[w];
            let new = fill_bits(old, mask, fill);
            self.data[w] = new;
            return u64::from((old ^ new).count_ones());
        }
        let half = len / 2;
        let changed = self.assign_node(2 * i, base, half, range, fill)
            + self.assign_node(2 * i + 1, base + half, half, range, fill);
        self.refresh(i);
        changed
    }

    /// Filled chunks in `lo ..= hi` (below the layout's end); uniform
    /// subtrees count at once.
    pub(super) fn count_in(&self, lo: u64, hi: u64) -> u64 {
        let chunks = (self.words as u64) << WORD_HEIGHT;
        self.count_node(1, 0, chunks, (lo, hi))
    }

    /// [`Flat::count_in`] under node `i`, which covers `len` chunks from `base`.
    fn count_node(&self, i: usize, base: u64, len: u64, range: (u64, u64)) -> u64 {
        let (from, to) = (range.0.max(base), range.1.min(base + len - 1));
        if from > to {
            return 0;
        }
        match self.state(i) {
            (false, _) => return 0,
            (_, true) => return to - from + 1,
            _ => {}
        }
        if i >= self.words {
            let mask = word_mask(from - base, to - base);
            return u64::from((self.data[i - self.words] & mask).count_ones());
        }
        let half = len / 2;
        self.count_node(2 * i, base, half, range)
            + self.count_node(2 * i + 1, base + half, half, range)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_follow_single_and_range_updates() {
        // 2^9 chunks: 8 words, summary nodes 1 ..= 7.
        let mut f = Flat::new(9);
        assert!(matches!(f.root(), Node::Ref(EMPTY)));
        assert!(f.assign_chunk(5, FULL));
        assert!(!f.assign_chunk(5, FULL));
        assert!(matches!(f.root(), Node::Flat(1)));
        // Node 8 is word 0; its parent 4 is mixed, its sibling word empty.
        assert!(matches!(f.node(4), Node::Flat(4)));
        assert!(matches!(f.node(9), Node::Ref(EMPTY)));
        assert!(matches!(f.node(3), Node::Ref(EMPTY)));
        assert_eq!(f.assign(0, 511, FULL), 511);
        assert!(matches!(f.root(), Node::Ref(FULL)));
        assert!(f.assign_chunk(300, EMPTY));
        assert!(matches!(f.root(), Node::Flat(1)));
        assert!(matches!(f.node(2), Node::Ref(FULL)));
        assert_eq!(f.count_in(0, 511), 511);
        assert_eq!(f.count_in(290, 310), 20);
        assert_eq!(f.assign(0, 511, EMPTY), 511);
        assert_eq!(f.assign(0, 511, EMPTY), 0);
        assert!(matches!(f.root(), Node::Ref(EMPTY)));
        assert_eq!(f.heap_bytes(), (8 + 1) * 8);
        assert_eq!(f.heap_bytes(), Flat::heap_bytes_for(9));
    }
}
