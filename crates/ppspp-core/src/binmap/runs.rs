//! Iterating maximal runs: one left-to-right walk of a binmap, or of two in
//! step, yielding runs as they close.
//!
//! Where a search (see `query`) answers "the first chunk from here", listing
//! every run by repeated searches would restart at the root twice per run.
//! Instead the walk keeps an explicit stack of the node pairs still to the
//! right, so each cell is visited once and a uniform pair of subtrees is one
//! segment however many chunks it covers.

use std::iter::FusedIterator;

use super::query::{verdict, Node};
use super::{span, word_mask, Binmap, WORD_HEIGHT};
use crate::chunk::ChunkRange;

/// Which runs a [`Runs`] iterator yields.
#[derive(Clone, Copy, Debug)]
pub(super) enum RunKind {
    /// Filled chunks of `a`.
    Filled,
    /// Chunks filled in `a` and empty in `b`.
    Difference,
}

impl RunKind {
    /// The bitwise predicate over `a`'s and `b`'s bits whose ones make up
    /// the runs. It is zero where both binmaps are empty, so nothing lies
    /// above both roots.
    fn pred(self) -> fn(u64, u64) -> u64 {
        match self {
            RunKind::Filled => |a, _| a,
            RunKind::Difference => |a, b| a & !b,
        }
    }
}

/// A pair of nodes still to visit, covering `2^k` chunks from `base`.
#[derive(Clone, Copy, Debug)]
struct Frame {
    a: Node,
    b: Node,
    k: u32,
    base: u64,
}

/// Iterator over maximal runs of chunks, left to right: see
/// [`Binmap::filled_runs`] and [`Binmap::difference_runs`].
///
/// Listing every run takes time proportional to the cells of both binmaps
/// within the bounds plus the runs, never to the chunks they cover.
#[derive(Clone, Debug)]
pub struct Runs<'a> {
    a: &'a Binmap,
    b: &'a Binmap,
    pred: fn(u64, u64) -> u64,
    /// Bounds of the walk (inclusive).
    lo: u64,
    hi: u64,
    /// Node pairs to the right of the current position, leftmost on top.
    stack: Vec<Frame>,
    /// Matching bits of the current 64-chunk word not yet turned into runs.
    word: u64,
    word_base: u64,
    /// The run being extended: it closes when a non-matching chunk shows up.
    open: Option<(u64, u64)>,
}

impl<'a> Runs<'a> {
    /// The runs of `kind` within `lo ..= hi`.
    pub(super) fn new(a: &'a Binmap, b: &'a Binmap, kind: RunKind, lo: u64, hi: u64) -> Self {
        let height = a.height.max(b.height);
        let mut stack = Vec::new();
        if lo <= hi.min(span(height) - 1) {
            stack.push(Frame {
                a: a.top(height),
                b: b.top(height),
                k: height,
                base: 0,
            });
        }
        Runs {
            a,
            b,
            pred: kind.pred(),
            lo,
            hi,
            stack,
            word: 0,
            word_base: 0,
            open: None,
        }
    }

    /// Adds matching chunks `start ..= end`, which lie right of everything
    /// seen so far; returns the open run if they do not extend it.
    fn extend(&mut self, start: u64, end: u64) -> Option<ChunkRange> {
        match self.open {
            Some((first, last)) if last + 1 == start => {
                self.open = Some((first, end));
                None
            }
            previous => {
                self.open = Some((start, end));
                previous.and_then(|(first, last)| ChunkRange::new(first, last))
            }
        }
    }

    /// Closes the open run, if any: a non-matching chunk follows it.
    fn close(&mut self) -> Option<ChunkRange> {
        self.open
            .take()
            .and_then(|(first, last)| ChunkRange::new(first, last))
    }
}

impl Iterator for Runs<'_> {
    type Item = ChunkRange;

    fn next(&mut self) -> Option<ChunkRange> {
        loop {
            if self.word != 0 {
                // The lowest stretch of ones in the word.
                let start = self.word.trailing_zeros();
                let len = (!(self.word >> start)).trailing_zeros(); // 1 ..= 64 − start
                let end = start + len - 1;
                self.word &= !word_mask(u64::from(start), u64::from(end));
                let base = self.word_base;
                if let Some(run) = self.extend(base + u64::from(start), base + u64::from(end)) {
                    return Some(run);
                }
                if self.word != 0 {
                    // A gap inside the word: the run just extended is complete.
                    if let Some(run) = self.close() {
                        return Some(run);
                    }
                }
                continue;
            }
            let Some(Frame { a, b, k, base }) = self.stack.pop() else {
                return self.close();
            };
            let lo = self.lo.max(base);
            let hi = self.hi.min(base + (span(k) - 1));
            if lo > hi {
                continue;
            }
            let pred = self.pred;
            if let Some(p) = verdict(pred, a, b) {
                let run = if p != 0 {
                    self.extend(lo, hi)
                } else {
                    self.close()
                };
                if run.is_some() {
                    return run;
                }
                continue;
            }
            if k == WORD_HEIGHT {
                let (Node::Ref(wa), Node::Ref(wb)) = (a, b) else {
                    unreachable!("lifted nodes only exist above a root, at height ≥ 8")
                };
                let (from, to) = (lo - base, hi - base);
                self.word = pred(wa, wb) & word_mask(from, to);
                self.word_base = base;
                if (self.word >> from) & 1 == 0 {
                    // The word starts with a non-matching chunk.
                    if let Some(run) = self.close() {
                        return Some(run);
                    }
                }
                continue;
            }
            let (al, ar) = self.a.halves(a, k);
            let (bl, br) = self.b.halves(b, k);
            let mid = base + span(k - 1);
            if hi >= mid {
                self.stack.push(Frame {
                    a: ar,
                    b: br,
                    k: k - 1,
                    base: mid,
                });
            }
            if lo < mid {
                self.stack.push(Frame {
                    a: al,
                    b: bl,
                    k: k - 1,
                    base,
                });
            }
        }
    }
}

impl FusedIterator for Runs<'_> {}
