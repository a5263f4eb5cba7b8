//! Rarest-first picking: the fresh chunks fewest connected peers have.
//!
//! Requesting the rarest chunks first spreads them before their holders
//! leave (BitTorrent's local rarest first). Each round finds the rarest fresh
//! chunk, breaking ties with the generator handed in, then extends it into
//! the longest contiguous run the budget allows — rightwards, then leftwards
//! — because a REQUEST carries one range (RFC 7574 §8.10) and fewer, longer
//! ranges are cheaper. Rounds repeat until the budget is spent.
//!
//! # Search
//! No round scans the chunks. [`Availability`] keeps the minimum count of
//! every 64-chunk block (leaving out chunks we have) in a segment tree, whose
//! nodes bound from below the count of any fresh chunk under them. A
//! best-first search pops the entry with the lowest bound and walks down
//! into the lower child, queueing the other, until it reaches a block; only
//! then does it evaluate the block exactly (its fresh chunks as a bitmask,
//! their counts). A block whose exact minimum is no more than every bound
//! still queued holds a rarest fresh chunk; otherwise it is queued with its
//! exact minimum and the search goes on. Equal bounds go deeper first, so
//! ties are walked depth-first rather than breadth-first, then by a random
//! key: that, and a random choice among the block's equally rare runs, is
//! the tie-break. Subtrees where the peer has nothing we lack are skipped.
//! For a peer counted chunk by chunk the bounds leave out chunks nobody
//! counted has (see [`Availability`]): the peer's own chunks count at least
//! one, so a count of 0 elsewhere must not hold the search back.
//!
//! The queue survives between the rounds of one pick: choosing chunks only
//! removes candidates, so every bound stays valid, and an evaluated block
//! is brought up to date by clearing the chosen chunks from its mask.
//!
//! A round evaluates at most [`RarestFirst::with_search_limit`] blocks; past
//! that it settles for the rarest chunk found so far. Only adversarial
//! layouts (every block holding a rarer chunk that is not a candidate) get
//! near the limit, and the bound keeps one pick's time in check.
//!
//! Chunks the counts do not cover — all of them while the content size is
//! unknown — count as held by the complete peers only: one equally rare
//! "tail", from which a round picks at a random place.
//!
//! In the end game (nothing fresh left at this peer) rarity no longer
//! matters: the picker takes end-game chunks in order from a random place,
//! wrapping around, so that peers in the end game duplicate different
//! requests.
//!
//! [`Availability`]: super::availability::Availability

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, RngExt};

use super::block_minima::{BlockMinima, BLOCK};
use super::candidates::{domain_end, Candidates};
use super::{PickView, Picker};
use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange, MAX_CHUNK_INDEX};

/// Blocks a round evaluates exactly before settling, by default.
pub const DEFAULT_SEARCH_LIMIT: u32 = 64;

/// Inner nodes spanning fewer blocks are expanded without first checking
/// that the peer has chunks we lack under them: evaluating their few blocks
/// costs about as much as the check.
const CHECK_SPAN: usize = 16;

// A heap key packs, smallest first: the bound (17 bits), the class (7 bits:
// 0 for exact entries, then deeper nodes first) and a random tie-break.
const VALUE_SHIFT: u32 = 47;
const CLASS_SHIFT: u32 = 40;
const RANDOM_BITS: u64 = (1 << CLASS_SHIFT) - 1;
// A heap payload: a tree node, an evaluated block (`EXACT | slot`) or the
// tail (`TAIL`).
const EXACT: u64 = 1 << 63;
const TAIL: u64 = u64::MAX;

/// Picks the rarest fresh chunks, extended into runs (see the module
/// documentation).
#[derive(Debug)]
pub struct RarestFirst {
    /// Blocks one round may evaluate before settling.
    search_limit: u32,
    /// Chunks chosen earlier in the current pick (scratch, empty between picks).
    picked: Binmap,
    /// The search frontier: `(key, payload)`, smallest key first.
    heap: BinaryHeap<Reverse<(u64, u64)>>,
    /// The blocks evaluated in the current pick, by slot.
    evals: Vec<Eval>,
}

/// A block evaluated exactly. Its fresh chunks only ever shrink during a
/// pick (by the chunks picked), so the masks are refreshed, not recomputed.
#[derive(Clone, Copy, Debug)]
struct Eval {
    /// The block's first chunk.
    base: u64,
    /// Its fresh chunks (bit `i` for chunk `base + i`).
    fresh: u64,
    /// The smallest partial count among them.
    value: u32,
    /// The fresh chunks with that count.
    ties: u64,
}

/// Where a round found the rarest chunk.
enum Found {
    /// In the evaluated block of this slot; `queued` when its entry is still
    /// on the heap.
    Block { slot: usize, queued: bool },
    /// This chunk of the tail.
    Tail(u64),
}

/// What a pick searches: the view and the availability index.
struct Search<'v, 'a> {
    view: &'v PickView<'a>,
    tree: &'v BlockMinima,
    counts: &'v [u16],
    /// Chunks `0 .. tree_end` are covered by the counts.
    tree_end: u64,
    /// Chunks `0 .. end` may be picked.
    end: u64,
}

impl RarestFirst {
    /// Rarest-first with the default search limit.
    pub fn new() -> Self {
        Self::with_search_limit(DEFAULT_SEARCH_LIMIT)
    }

    /// Rarest-first evaluating at most `blocks` 64-chunk blocks (at least
    /// one) per round before settling for the rarest chunk found so far.
    pub fn with_search_limit(blocks: u32) -> Self {
        RarestFirst {
            search_limit: blocks.max(1),
            picked: Binmap::new(),
            heap: BinaryHeap::new(),
            evals: Vec::new(),
        }
    }
}

impl Default for RarestFirst {
    fn default() -> Self {
        Self::new()
    }
}

impl Picker for RarestFirst {
    fn name(&self) -> &'static str {
        "rarest-first"
    }

    fn pick(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    ) {
        let end = domain_end(view);
        if max_chunks == 0 || end == 0 {
            return;
        }
        clear(&mut self.picked);
        self.heap.clear();
        self.evals.clear();
        if Candidates::fresh(view, &self.picked)
            .first_run(0, end - 1)
            .is_none()
        {
            let start = rng.random_range(0..end);
            Candidates::end_game(view, &self.picked).take_wrapping(start, end, max_chunks, out);
            return;
        }
        let s = Search {
            view,
            tree: view.availability.bound_for(view.peer_counted),
            counts: view.availability.partial_counts(),
            tree_end: view.availability.chunk_count().min(end),
            end,
        };
        if let (true, Some(root)) = (s.tree_end > 0, s.tree.root()) {
            self.push(
                u32::from(s.tree.value(root)),
                node_class(root),
                root as u64,
                rng,
            );
        }
        if s.tree_end < end {
            self.push(0, 0, TAIL, rng);
        }
        let mut budget = max_chunks;
        while budget > 0 {
            let range = match self.next_rarest(&s, rng) {
                None => break,
                Some(Found::Tail(chunk)) => self.extend(&s, chunk, budget),
                Some(Found::Block { slot, queued }) => {
                    let e = self.evals[slot];
                    let chunk = e.base + random_run_start(e.ties, rng);
                    if !queued {
                        self.push(e.value, 0, EXACT | slot as u64, rng);
                    }
                    self.extend_in_block(&s, &e, chunk, budget)
                }
            };
            out.push(range);
            budget -= range.len();
            self.picked.set(range);
        }
        clear(&mut self.picked);
    }
}

impl RarestFirst {
    /// Queues `payload` with bound `value`.
    fn push(&mut self, value: u32, class: u32, payload: u64, rng: &mut dyn Rng) {
        let key = u64::from(value) << VALUE_SHIFT
            | u64::from(class) << CLASS_SHIFT
            | (rng.next_u64() & RANDOM_BITS);
        self.heap.push(Reverse((key, payload)));
    }

    /// Where the next rarest fresh chunk is, or `None` when none is left.
    fn next_rarest(&mut self, s: &Search<'_, '_>, rng: &mut dyn Rng) -> Option<Found> {
        let mut evaluated = 0u32;
        let mut best: Option<usize> = None;
        while let Some(Reverse((key, payload))) = self.heap.pop() {
            let slot = if payload == TAIL {
                let Some(chunk) = self.tail_chunk(s, rng) else {
                    continue; // No fresh chunk left in the tail.
                };
                self.heap.push(Reverse((key, payload)));
                return Some(Found::Tail(chunk));
            } else if payload & EXACT != 0 {
                let slot = (payload & !EXACT) as usize;
                if !self.refresh(s, slot) {
                    continue;
                }
                slot
            } else {
                let Some(block) = self.descend(s, payload as usize, rng) else {
                    continue;
                };
                evaluated += 1;
                let Some(slot) = self.evaluate(s, block) else {
                    continue;
                };
                slot
            };
            let value = self.evals[slot].value;
            let top = self.heap.peek().map(|e| (e.0 .0 >> VALUE_SHIFT) as u32);
            if top.is_none_or(|top| value <= top) {
                return Some(Found::Block {
                    slot,
                    queued: false,
                });
            }
            self.push(value, 0, EXACT | slot as u64, rng);
            if best.is_none_or(|b| value < self.evals[b].value) {
                best = Some(slot);
            }
            if evaluated >= self.search_limit {
                if let Some(slot) = best {
                    return Some(Found::Block { slot, queued: true });
                }
            }
        }
        None
    }

    /// Walks down from `node` (just popped, so its bound is the lowest)
    /// to a leaf, always into the child with the lower bound (at random
    /// between equal ones) and queueing the other: the heap would pop that
    /// child next anyway, as deeper entries come first among equal bounds.
    /// Skips subtrees where the peer has nothing we lack; returns the block
    /// reached, or `None` when none may hold fresh chunks.
    fn descend(&mut self, s: &Search<'_, '_>, mut node: usize, rng: &mut dyn Rng) -> Option<usize> {
        // The first chunk from the node's start that the peer has and we
        // lack, once searched: a cheap necessary condition for fresh chunks.
        let mut first_lacking: Option<u64> = None;
        loop {
            if let Some(block) = s.tree.leaf_block(node) {
                return Some(block);
            }
            let (lo, hi) = s.node_bounds(node)?;
            if first_lacking.is_none() && s.tree.blocks(node).1 >= CHECK_SPAN {
                let found = s
                    .view
                    .peer_has
                    .first_in_difference(s.view.have, ChunkIndex(lo));
                first_lacking = Some(found.map_or(u64::MAX, |x| x.0));
            }
            let from = first_lacking.unwrap_or(lo);
            if from > hi {
                return None;
            }
            let open = |child: usize| s.node_bounds(child).is_some_and(|(_, last)| last >= from);
            let (left, right) = (2 * node, 2 * node + 1);
            node = match (open(left), open(right)) {
                (false, false) => return None,
                (true, false) => left,
                (false, true) => right,
                (true, true) => {
                    let (l, r) = (s.tree.value(left), s.tree.value(right));
                    let go_left = l < r || (l == r && rng.next_u32() & 1 == 0);
                    let (next, other) = if go_left {
                        (left, right)
                    } else {
                        (right, left)
                    };
                    let value = u32::from(s.tree.value(other));
                    self.push(value, node_class(other), other as u64, rng);
                    next
                }
            };
            // Still the first lacking chunk from the child's start, unless
            // that start lies past it (the right child): then unknown.
            if first_lacking.is_some_and(|x| x < s.tree.blocks(node).0 as u64 * BLOCK) {
                first_lacking = None;
            }
        }
    }

    /// Evaluates `block` into a new slot; `None` when nothing in it is fresh.
    fn evaluate(&mut self, s: &Search<'_, '_>, block: usize) -> Option<usize> {
        let (base, hi) = s.block_bounds(block);
        if base > hi {
            return None;
        }
        let fresh = Candidates::fresh(s.view, &self.picked).word_mask(base, hi);
        if fresh == 0 {
            return None;
        }
        let (value, ties) = rarest_of(s.counts, base, fresh);
        self.evals.push(Eval {
            base,
            fresh,
            value,
            ties,
        });
        Some(self.evals.len() - 1)
    }

    /// Removes the chunks picked since from an evaluated block, finding its
    /// new rarest chunks if needed; false when nothing in it is fresh.
    fn refresh(&mut self, s: &Search<'_, '_>, slot: usize) -> bool {
        let e = &mut self.evals[slot];
        if !self.picked.is_empty() {
            let taken = self.picked.word(e.base / BLOCK);
            e.fresh &= !taken;
            e.ties &= !taken;
        }
        if e.fresh != 0 && e.ties == 0 {
            (e.value, e.ties) = rarest_of(s.counts, e.base, e.fresh);
        }
        e.fresh != 0
    }

    /// A fresh chunk of the tail, from a random place; `None` when none.
    fn tail_chunk(&self, s: &Search<'_, '_>, rng: &mut dyn Rng) -> Option<u64> {
        let (lo, hi) = (s.tree_end, s.end - 1);
        let at = rng.random_range(lo..=hi);
        let fresh = Candidates::fresh(s.view, &self.picked);
        let run = fresh
            .first_run(at, hi)
            .or_else(|| (at > lo).then(|| fresh.first_run(lo, at - 1)).flatten())?;
        Some(run.first().0)
    }

    /// The fresh run from `chunk` rightwards, then leftwards, within budget.
    fn extend(&self, s: &Search<'_, '_>, chunk: u64, budget: u64) -> ChunkRange {
        let fresh = Candidates::fresh(s.view, &self.picked);
        let last = fresh
            .first_run(chunk, s.end - 1)
            .map_or(chunk, |run| run.last().0.min(chunk + (budget - 1)));
        let first = fresh.extend_left(chunk, budget - (last - chunk + 1));
        ChunkRange::new(first, last).expect("first ≤ chunk ≤ last")
    }

    /// [`RarestFirst::extend`] for a chunk of an evaluated block, reading
    /// the block's mask and searching the binmaps only past its edges.
    fn extend_in_block(&self, s: &Search<'_, '_>, e: &Eval, chunk: u64, budget: u64) -> ChunkRange {
        let fresh = Candidates::fresh(s.view, &self.picked);
        let i = chunk - e.base;
        let run = u64::from((!(e.fresh >> i)).trailing_zeros());
        let mut last = chunk + run.min(budget) - 1;
        let block_last = (e.base + (BLOCK - 1)).min(s.tree_end - 1);
        if last == block_last && last - chunk + 1 < budget && last + 1 < s.end {
            if let Some(next) = fresh.first_run(last + 1, s.end - 1) {
                if next.first().0 == last + 1 {
                    last = next.last().0.min(chunk + (budget - 1));
                }
            }
        }
        let rest = budget - (last - chunk + 1);
        let mut first = chunk;
        if rest > 0 && i > 0 {
            // Fresh chunks right below `chunk` in the block.
            let below = u64::from((e.fresh << (BLOCK - i)).leading_ones());
            first = chunk - below.min(rest);
            if below == i && below < rest {
                first = fresh.extend_left(e.base, rest - below);
            }
        }
        ChunkRange::new(first, last).expect("first ≤ chunk ≤ last")
    }
}

impl Search<'_, '_> {
    /// The chunks of `block` covered by the counts and pickable.
    fn block_bounds(&self, block: usize) -> (u64, u64) {
        let lo = block as u64 * BLOCK;
        (lo, (lo + BLOCK - 1).min(self.tree_end - 1))
    }

    /// The chunks under `node` covered by the counts and pickable, if any.
    fn node_bounds(&self, node: usize) -> Option<(u64, u64)> {
        let (first, blocks) = self.tree.blocks(node);
        let lo = first as u64 * BLOCK;
        let hi = ((first + blocks) as u64 * BLOCK - 1).min(self.tree_end - 1);
        (lo <= hi).then_some((lo, hi))
    }
}

/// Empties the scratch set.
fn clear(map: &mut Binmap) {
    if !map.is_empty() {
        map.clear(ChunkRange::new(0, MAX_CHUNK_INDEX).expect("a valid range"));
    }
}

/// The heap class of a tree node: deeper nodes first among equal bounds, so
/// that ties are searched depth-first.
fn node_class(node: usize) -> u32 {
    1 + (63 - BlockMinima::depth(node))
}

/// The smallest count among the chunks of `mask` (bit `i` for chunk
/// `base + i`, not empty) and the chunks having it.
fn rarest_of(counts: &[u16], base: u64, mut mask: u64) -> (u32, u64) {
    let (mut min, mut ties) = (u16::MAX, 0u64);
    while mask != 0 {
        let i = mask.trailing_zeros();
        mask &= mask - 1;
        let count = counts[(base + u64::from(i)) as usize];
        if count < min {
            (min, ties) = (count, 0);
        }
        if count == min {
            ties |= 1 << i;
        }
    }
    (u32::from(min), ties)
}

/// The first chunk of a run of `ties` (not empty), the run chosen at
/// random: starting there, the extension rightwards covers the run.
fn random_run_start(ties: u64, rng: &mut dyn Rng) -> u64 {
    let mut starts = ties & !(ties << 1);
    for _ in 0..rng.random_range(0..starts.count_ones()) {
        starts &= starts - 1;
    }
    u64::from(starts.trailing_zeros())
}

#[cfg(test)]
#[path = "rarest_tests.rs"]
mod tests;
