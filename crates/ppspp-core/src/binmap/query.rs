//! Read-only binmap queries.
//!
//! Every search is one routine: a simultaneous descent of two binmaps
//! looking for the first chunk where a bitwise predicate `f(a, b)` holds.
//! Single-binmap queries pair the binmap with an empty one. Because `f` is
//! bitwise, applying it to uniform references (0 or all ones) tells whether
//! a whole subtree pair matches everywhere or nowhere, which is what lets
//! the difference query skip subtrees where A is empty or B is full and
//! answer at once where A is full and B empty (libswift's binmap
//! `find_complement` works the same way), instead of walking chunks.

use super::runs::{RunKind, Runs};
use super::{is_uniform, span, word_mask, Binmap, EMPTY, FULL, MAX_HEIGHT, WORD_HEIGHT};
use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkRange, MAX_CHUNK_INDEX};

/// The binmap paired with single-binmap queries.
pub(super) static NOTHING: Binmap = Binmap::new();

/// A node of one binmap during a descent that may start above its root.
#[derive(Clone, Copy, Debug)]
pub(super) enum Node {
    /// A subtree reference (a bitmap word at [`WORD_HEIGHT`]).
    Ref(u64),
    /// A node above the binmap's real root: its left half leads down to the
    /// root, its right half is empty. This lets two binmaps of different
    /// heights be walked in step without growing either.
    Lifted,
    /// A mixed node of a flat binmap's summary tree, by heap index
    /// (see `flat.rs`).
    Flat(usize),
}

impl Node {
    /// The value of a uniform node, as a bitmap word.
    fn uniform(self) -> Option<u64> {
        match self {
            Node::Ref(r) if is_uniform(r) => Some(r),
            _ => None,
        }
    }
}

impl Binmap {
    /// This binmap's root seen from a descent starting at `height ≥ self.height`.
    pub(super) fn top(&self, height: u32) -> Node {
        if height == self.height || self.root == EMPTY {
            self.root_node()
        } else {
            Node::Lifted
        }
    }

    /// The root as a node, in either layout.
    pub(super) fn root_node(&self) -> Node {
        match &self.flat {
            Some(flat) => flat.root(),
            None => Node::Ref(self.root),
        }
    }

    /// The two halves of `node`, which covers `2^k` chunks with `k > 6`.
    #[inline]
    pub(super) fn halves(&self, node: Node, k: u32) -> (Node, Node) {
        match node {
            Node::Lifted if k - 1 == self.height => (self.root_node(), Node::Ref(EMPTY)),
            Node::Lifted => (Node::Lifted, Node::Ref(EMPTY)),
            Node::Ref(r) if is_uniform(r) => (node, node),
            Node::Ref(r) => {
                let [left, right] = self.cells[(r - 1) as usize];
                (Node::Ref(left), Node::Ref(right))
            }
            Node::Flat(i) => {
                let flat = self
                    .flat
                    .as_ref()
                    .expect("flat nodes come from a flat binmap");
                (flat.node(2 * i), flat.node(2 * i + 1))
            }
        }
    }

    /// The first chunk in `lo ..= hi` where the bitwise predicate `f` of this
    /// binmap's and `other`'s bits is one. Chunks above either root are
    /// empty, up to [`MAX_CHUNK_INDEX`].
    pub(super) fn first_where<F>(&self, other: &Binmap, f: F, lo: u64, hi: u64) -> Option<u64>
    where
        F: Fn(u64, u64) -> u64,
    {
        let hi = hi.min(MAX_CHUNK_INDEX);
        if lo > hi {
            return None;
        }
        let height = self.height.max(other.height);
        let top = span(height) - 1;
        if lo <= top {
            let descent = Descent {
                a: self,
                b: other,
                f: &f,
                lo,
                hi: hi.min(top),
            };
            let found = descent.first(self.top(height), other.top(height), height, 0);
            if found.is_some() {
                return found;
            }
        }
        // Above both roots both binmaps are empty everywhere.
        (hi > top && f(EMPTY, EMPTY) != 0).then(|| lo.max(top + 1))
    }

    /// The last chunk in `lo ..= hi` where the bitwise predicate `f` of this
    /// binmap's and `other`'s bits is one (the mirror of `first_where`).
    pub(super) fn last_where<F>(&self, other: &Binmap, f: F, lo: u64, hi: u64) -> Option<u64>
    where
        F: Fn(u64, u64) -> u64,
    {
        let hi = hi.min(MAX_CHUNK_INDEX);
        if lo > hi {
            return None;
        }
        let height = self.height.max(other.height);
        let top = span(height) - 1;
        // Above both roots both binmaps are empty everywhere.
        if hi > top && f(EMPTY, EMPTY) != 0 {
            return Some(hi);
        }
        if lo > top {
            return None;
        }
        let descent = Descent {
            a: self,
            b: other,
            f: &f,
            lo,
            hi: hi.min(top),
        };
        descent.last(self.top(height), other.top(height), height, 0)
    }

    /// Whether `chunk` is filled.
    pub fn contains(&self, chunk: ChunkIndex) -> bool {
        let c = chunk.0;
        if c >= span(self.height) {
            return false;
        }
        if let Some(flat) = &self.flat {
            return (flat.word((c >> WORD_HEIGHT) as usize) >> (c & 63)) & 1 == 1;
        }
        let (mut r, mut k) = (self.root, self.height);
        loop {
            if is_uniform(r) {
                return r == FULL;
            }
            if k == WORD_HEIGHT {
                return (r >> (c & 63)) & 1 == 1;
            }
            let half = (c >> (k - 1)) & 1;
            r = self.cells[(r - 1) as usize][half as usize];
            k -= 1;
        }
    }

    /// Chunks `64·w ..= 64·w + 63` as a bitmask (bit `i` for chunk
    /// `64·w + i`): one descent to the bitmap word, for callers that combine
    /// several binmaps a word at a time (the pickers' candidate sets).
    pub fn word(&self, w: u64) -> u64 {
        if w >= span(MAX_HEIGHT - WORD_HEIGHT) {
            return EMPTY;
        }
        let c = w << WORD_HEIGHT;
        if c >= span(self.height) {
            return EMPTY;
        }
        if let Some(flat) = &self.flat {
            return flat.word(w as usize);
        }
        let (mut r, mut k) = (self.root, self.height);
        // A uniform reference above the words is all-empty or all-full,
        // the same bits as the word it stands for.
        while !is_uniform(r) && k > WORD_HEIGHT {
            let half = (c >> (k - 1)) & 1;
            r = self.cells[(r - 1) as usize][half as usize];
            k -= 1;
        }
        r
    }

    /// Whether every chunk of `range` is filled.
    pub fn is_filled(&self, range: ChunkRange) -> bool {
        let (lo, hi) = (range.first().0, range.last().0);
        // The first word decides a range within it (most short runs), and
        // one with a hole there: one descent to it, not a walk.
        let one_word = lo >> WORD_HEIGHT == hi >> WORD_HEIGHT;
        let in_first = if one_word {
            (u64::MAX >> (63 - (hi - lo))) << (lo & 63)
        } else {
            u64::MAX << (lo & 63)
        };
        if self.word(lo >> WORD_HEIGHT) & in_first != in_first {
            return false;
        }
        if one_word {
            return true;
        }
        self.first_where(&NOTHING, |a, _| !a, lo, hi).is_none()
    }

    /// Whether no chunk of `range` is filled.
    pub fn is_empty_range(&self, range: ChunkRange) -> bool {
        let (lo, hi) = (range.first().0, range.last().0);
        self.first_where(&NOTHING, |a, _| a, lo, hi).is_none()
    }

    /// Whether every chunk under `bin` is filled — e.g. whether its Merkle
    /// hash can be computed from our own data (RFC 7574 §5). False for
    /// [`Bin::NONE`], which covers no chunk.
    pub fn is_filled_bin(&self, bin: Bin) -> bool {
        bin.chunks().is_some_and(|r| self.is_filled(r))
    }

    /// Whether no chunk under `bin` is filled. False for [`Bin::NONE`], so
    /// that a malformed bin is never taken as "nothing to lose".
    pub fn is_empty_bin(&self, bin: Bin) -> bool {
        bin.chunks().is_some_and(|r| self.is_empty_range(r))
    }

    /// The first filled chunk at or after `pos`.
    pub fn first_filled_from(&self, pos: ChunkIndex) -> Option<ChunkIndex> {
        self.first_where(&NOTHING, |a, _| a, pos.0, MAX_CHUNK_INDEX)
            .map(ChunkIndex)
    }

    /// The first empty chunk at or after `pos`; `None` only when every chunk
    /// from `pos` to [`MAX_CHUNK_INDEX`] is filled (or `pos` is past it).
    pub fn first_empty_from(&self, pos: ChunkIndex) -> Option<ChunkIndex> {
        // An empty chunk in `pos`'s own word is found with one descent.
        if pos.0 <= MAX_CHUNK_INDEX {
            let rest = !self.word(pos.0 >> WORD_HEIGHT) >> (pos.0 & 63);
            if rest != 0 {
                return Some(ChunkIndex(pos.0 + u64::from(rest.trailing_zeros())));
            }
        }
        self.first_where(&NOTHING, |a, _| !a, pos.0, MAX_CHUNK_INDEX)
            .map(ChunkIndex)
    }

    /// The last filled chunk at or before `pos`.
    pub fn last_filled_to(&self, pos: ChunkIndex) -> Option<ChunkIndex> {
        self.last_where(&NOTHING, |a, _| a, 0, pos.0)
            .map(ChunkIndex)
    }

    /// The first chunk at or after `from` that this binmap has and `other`
    /// lacks: the next chunk worth requesting (RFC 7574 §3.7) from a peer
    /// whose HAVEs are `self` when ours are `other`.
    pub fn first_in_difference(&self, other: &Binmap, from: ChunkIndex) -> Option<ChunkIndex> {
        self.first_where(other, |a, b| a & !b, from.0, MAX_CHUNK_INDEX)
            .map(ChunkIndex)
    }

    /// The maximal runs of filled chunks, left to right.
    pub fn filled_runs(&self) -> Runs<'_> {
        Runs::new(self, &NOTHING, RunKind::Filled, 0, MAX_CHUNK_INDEX)
    }

    /// The maximal runs of filled chunks within `range` (cut at its ends),
    /// left to right.
    pub fn filled_runs_in(&self, range: ChunkRange) -> Runs<'_> {
        let (lo, hi) = (range.first().0, range.last().0);
        Runs::new(self, &NOTHING, RunKind::Filled, lo, hi)
    }

    /// The maximal runs of chunks this binmap has and `other` lacks, left to
    /// right: what to request from a peer whose chunks are `self`.
    pub fn difference_runs<'a>(&'a self, other: &'a Binmap) -> Runs<'a> {
        Runs::new(self, other, RunKind::Difference, 0, MAX_CHUNK_INDEX)
    }

    /// [`Binmap::difference_runs`] limited to `range` (cut at its ends).
    pub fn difference_runs_in<'a>(&'a self, other: &'a Binmap, range: ChunkRange) -> Runs<'a> {
        let (lo, hi) = (range.first().0, range.last().0);
        Runs::new(self, other, RunKind::Difference, lo, hi)
    }

    /// Number of filled chunks in `range`. Takes time proportional to the
    /// tree depth plus the cells overlapping the range (constant when the
    /// range covers the whole binmap).
    pub fn count_in(&self, range: ChunkRange) -> u64 {
        let top = span(self.height) - 1;
        let (lo, hi) = (range.first().0, range.last().0.min(top));
        if lo > hi {
            0
        } else if lo == 0 && hi == top {
            self.count
        } else if let Some(flat) = &self.flat {
            flat.count_in(lo, hi)
        } else {
            self.count_range(self.root, self.height, 0, lo, hi)
        }
    }

    /// Filled chunks in `lo ..= hi`, which lies inside subtree `r` covering
    /// `2^k` chunks from `base`.
    fn count_range(&self, r: u64, k: u32, base: u64, lo: u64, hi: u64) -> u64 {
        if r == EMPTY {
            return 0;
        }
        if r == FULL {
            return hi - lo + 1;
        }
        if k == WORD_HEIGHT {
            return u64::from((r & word_mask(lo - base, hi - base)).count_ones());
        }
        let [left, right] = self.cells[(r - 1) as usize];
        let mid = base + span(k - 1);
        let mut n = 0;
        if lo < mid {
            n += self.count_range(left, k - 1, base, lo, hi.min(mid - 1));
        }
        if hi >= mid {
            n += self.count_range(right, k - 1, mid, lo.max(mid), hi);
        }
        n
    }
}

/// The value of `f` over a whole pair of subtrees when it is the same for
/// every chunk (all zeros or all ones), else `None`. That is the case when
/// both are uniform, or when one is uniform and `f` then ignores the other's
/// bits (e.g. A empty or B full for A∖B).
pub(super) fn verdict<F: Fn(u64, u64) -> u64>(f: F, na: Node, nb: Node) -> Option<u64> {
    match (na.uniform(), nb.uniform()) {
        (Some(x), Some(y)) => Some(f(x, y)),
        (Some(x), None) => Some(f(x, EMPTY)).filter(|&p| p == f(x, FULL)),
        (None, Some(y)) => Some(f(EMPTY, y)).filter(|&p| p == f(FULL, y)),
        (None, None) => None,
    }
}

/// One simultaneous descent of two binmaps (see the module documentation).
struct Descent<'a, F> {
    a: &'a Binmap,
    b: &'a Binmap,
    f: &'a F,
    lo: u64,
    hi: u64,
}

impl<F: Fn(u64, u64) -> u64> Descent<'_, F> {
    /// The first matching chunk in `lo ..= hi` under the node pair covering
    /// `2^k` chunks from `base`.
    fn first(&self, na: Node, nb: Node, k: u32, base: u64) -> Option<u64> {
        let lo = self.lo.max(base);
        let hi = self.hi.min(base + (span(k) - 1));
        if lo > hi {
            return None;
        }
        let f = self.f;
        if let Some(p) = verdict(f, na, nb) {
            return (p != 0).then_some(lo);
        }
        if k == WORD_HEIGHT {
            let (Node::Ref(wa), Node::Ref(wb)) = (na, nb) else {
                unreachable!("lifted nodes only exist above a root, at height ≥ 8")
            };
            let hits = f(wa, wb) & word_mask(lo - base, hi - base);
            return (hits != 0).then(|| base + u64::from(hits.trailing_zeros()));
        }
        let (al, ar) = self.a.halves(na, k);
        let (bl, br) = self.b.halves(nb, k);
        let mid = base + span(k - 1);
        if lo < mid {
            if let Some(found) = self.first(al, bl, k - 1, base) {
                return Some(found);
            }
        }
        if hi >= mid {
            return self.first(ar, br, k - 1, mid);
        }
        None
    }

    /// The last matching chunk in `lo ..= hi` under the node pair covering
    /// `2^k` chunks from `base`: [`Descent::first`] mirrored.
    fn last(&self, na: Node, nb: Node, k: u32, base: u64) -> Option<u64> {
        let lo = self.lo.max(base);
        let hi = self.hi.min(base + (span(k) - 1));
        if lo > hi {
            return None;
        }
        let f = self.f;
        if let Some(p) = verdict(f, na, nb) {
            return (p != 0).then_some(hi);
        }
        if k == WORD_HEIGHT {
            let (Node::Ref(wa), Node::Ref(wb)) = (na, nb) else {
                unreachable!("lifted nodes only exist above a root, at height ≥ 8")
            };
            let hits = f(wa, wb) & word_mask(lo - base, hi - base);
            return (hits != 0).then(|| base + 63 - u64::from(hits.leading_zeros()));
        }
        let (al, ar) = self.a.halves(na, k);
        let (bl, br) = self.b.halves(nb, k);
        let mid = base + span(k - 1);
        if hi >= mid {
            if let Some(found) = self.last(ar, br, k - 1, mid) {
                return Some(found);
            }
        }
        if lo < mid {
            return self.last(al, bl, k - 1, base);
        }
        None
    }
}
