//! Rarest-first picking: the fresh chunks fewest connected peers have.
//!
//! Requesting the rarest chunks first spreads them before their holders
//! leave (BitTorrent's local rarest first). Each round finds the rarest fresh
//! chunk, breaking ties with the generator handed in, then extends it into
//! the longest contiguous run the budget allows — rightwards, then leftwards
//! — because a REQUEST carries one range (RFC 7574 §8.10) and fewer, longer
//! ranges are cheaper. Rounds repeat until the budget is spent; a round
//! stays in the previous round's block while it has chunks as rare as the
//! one taken there (counts do not change during a pick, so they are still
//! the rarest), and only then searches again: where the rarest chunks are
//! scattered, a pick of many one-chunk ranges costs one search, not one per
//! range.
//!
//! # Search
//! No round scans the chunks. [`Availability`] keeps the minimum count of
//! every 64-chunk block (leaving out chunks taken: had or requested) in a
//! segment tree, whose nodes bound from below the count of any fresh chunk
//! under them. A round walks that tree depth-first, in step with the
//! peer's binmap: a subtree where the peer has nothing is skipped, and so
//! is one whose bound is no lower than the rarest chunk found so far. The
//! lower child goes first (at random between equal ones), so the first
//! block reached is usually the answer and the rest is pruned.
//!
//! At a block the peer's word, less the taken chunks, is matched against
//! the block's per-count bitsets (the availability's levels): the lowest
//! count present is the block's rarest in a few word operations. A chunk
//! marked taken is never considered, and the swarm keeps the marks equal to
//! what it has and requested; the marks may lag the other way (in tests,
//! or this pick's own choices), so a block that would improve on the best
//! so far is checked exactly against `have`, `requested` and the chunks
//! picked. Ties between blocks are broken by the random walk order, and
//! within a block by a random choice among its equally rare runs.
//!
//! A round evaluates at most [`RarestFirst::with_search_limit`] blocks
//! where the peer has chunks we lack; past that it settles for the rarest
//! chunk found so far. The bounds are over all neighbours, so when most
//! blocks hold a chunk only some other neighbour has (a flash crowd) a
//! round for a peer without such chunks visits every block of its own; the
//! limit keeps one pick's time in check.
//!
//! The channel keeps, from pick to pick, the blocks where the peer was
//! found to have nothing fresh ([`dry`](super::dry)); the walk skips
//! subtrees all dry, and marks the blocks it finds so.
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

use rand::{Rng, RngExt};

use super::availability::LEVELS;
use super::block_minima::{BlockMinima, BLOCK, NONE};
use super::candidates::{domain_end, Candidates};
use super::{PickView, Picker};
use crate::binmap::{Binmap, Subtree};
use crate::chunk::{ChunkRange, MAX_CHUNK_INDEX};

/// Blocks a round evaluates exactly before settling, by default.
///
/// Chosen: 16. In a flash crowd most of a peer's chunks are held by
/// several neighbours while every block holds some chunk only one
/// neighbour has, so a round rarely proves its choice the rarest and
/// evaluates blocks up to the limit. On the lab's 1,000-peer flash crowd
/// 16 gave the same completion time as 64 (263 s against 262 s of
/// virtual time) for a fifth of the picking work.
pub const DEFAULT_SEARCH_LIMIT: u32 = 16;

/// Picks the rarest fresh chunks, extended into runs (see the module
/// documentation).
#[derive(Debug)]
pub struct RarestFirst {
    /// Blocks one round may evaluate before settling.
    search_limit: u32,
    /// Chunks chosen earlier in the current pick (scratch, empty between picks).
    picked: Binmap,
    /// Walks of the availability tree so far (for tests and benchmarks).
    walks: u64,
}

/// The rarest fresh chunks of one block.
#[derive(Clone, Copy, Debug)]
struct Eval {
    /// The block's first chunk.
    base: u64,
    /// Its fresh chunks (bit `i` for chunk `base + i`), exactly.
    fresh: u64,
    /// The smallest partial count among them.
    value: u32,
    /// The fresh chunks with that count.
    ties: u64,
}

impl Eval {
    /// The block less the chunks of `range`; `None` when no equally rare
    /// chunk is left in it.
    fn without(self, range: ChunkRange) -> Option<Eval> {
        let (first, last) = (range.first().0, range.last().0);
        let block_last = self.base + (BLOCK - 1);
        if last < self.base || first > block_last {
            return Some(self);
        }
        let lo = first.max(self.base) - self.base;
        let hi = last.min(block_last) - self.base;
        let taken = (u64::MAX >> (BLOCK - 1 - (hi - lo))) << lo;
        let e = Eval {
            fresh: self.fresh & !taken,
            ties: self.ties & !taken,
            ..self
        };
        (e.ties != 0).then_some(e)
    }
}

/// A round's depth-first walk: the rarest block so far and the work done.
///
/// A walk in bound order would evaluate the fewest blocks, but pays a heap
/// operation per node; a plain depth-first walk is cheap per node but, where
/// bounds vary a lot, evaluates many blocks before it finds a good one to
/// prune with. So the walk goes in passes: each enters only subtrees whose
/// bound is at most a threshold, starting at the lowest bound; if a better
/// chunk may still lie above it, the next pass raises the threshold to the
/// lowest bound left out, and evaluates only the blocks newly within it.
struct Walk {
    best: Option<Eval>,
    evaluated: u32,
    /// This pass's threshold.
    threshold: u32,
    /// Blocks with a bound below this were evaluated by earlier passes.
    done_below: u32,
    /// The lowest bound this pass left out for being over the threshold.
    next: Option<u32>,
    /// The least the threshold rises by at the next pass.
    step: u32,
    /// Random bits for the walk's coin flips between equal bounds, drawn
    /// once per round (a generator call per node would cost more than the
    /// node).
    coins: u64,
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
            walks: 0,
        }
    }

    /// Walks of the availability tree so far: one per round that did not
    /// continue in the previous round's block.
    pub fn walks(&self) -> u64 {
        self.walks
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
        if self.pick_fresh(view, max_chunks, rng, out, None) == 0 && Candidates::end_game_open(view)
        {
            // Nothing fresh at this peer, nor anywhere: the end game.
            let start = rng.random_range(0..end);
            let none = Binmap::new();
            Candidates::end_game(view, &none).take_wrapping(start, end, max_chunks, out);
        }
    }
}

impl RarestFirst {
    /// Appends up to `max_chunks` of the rarest fresh chunks to `out`,
    /// leaving out those of `exclude` (chosen already by a caller that
    /// picks in stages); returns how many it took.
    pub(crate) fn pick_fresh(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
        exclude: Option<&Binmap>,
    ) -> u64 {
        let end = domain_end(view);
        if max_chunks == 0 || end == 0 {
            return 0;
        }
        clear(&mut self.picked);
        for run in exclude.into_iter().flat_map(Binmap::filled_runs) {
            self.picked.set(run);
        }
        let s = Search {
            view,
            tree: view.availability.bound_for(view.peer_counted),
            counts: view.availability.partial_counts(),
            tree_end: view.availability.chunk_count().min(end),
            end,
        };
        let mut budget = max_chunks;
        // The block of the last round, with its equally rare chunks not yet
        // taken: they are as rare as any elsewhere (no count changes during
        // a pick), so the next round takes them without a walk.
        let mut rest: Option<Eval> = None;
        while budget > 0 {
            let found = match rest.take() {
                Some(e) => Some(e),
                None => {
                    self.walks += 1;
                    self.rarest_block(&s, rng)
                }
            };
            // The tail counts 0 (see the module documentation): it wins
            // unless a block has a chunk of count 0 too, then a coin decides.
            let tail = (s.tree_end < end)
                .then(|| self.tail_chunk(&s, rng))
                .flatten()
                .filter(|_| found.is_none_or(|e| e.value > 0 || rng.random_bool(0.5)));
            let range = match (tail, found) {
                (Some(chunk), _) => self.extend(&s, chunk, budget),
                (None, Some(e)) => {
                    let chunk = e.base + random_run_start(e.ties, rng);
                    let range = self.extend_in_block(&s, &e, chunk, budget);
                    rest = e.without(range);
                    range
                }
                (None, None) => break,
            };
            out.push(range);
            budget -= range.len();
            self.picked.set(range);
        }
        clear(&mut self.picked);
        max_chunks - budget
    }

    /// The block holding the rarest fresh chunks covered by the counts, with
    /// them; `None` when there is none.
    fn rarest_block(&self, s: &Search<'_, '_>, rng: &mut dyn Rng) -> Option<Eval> {
        let root = s.tree.root().filter(|_| s.tree_end > 0)?;
        let height = BLOCK.trailing_zeros() + s.tree.blocks(root).1.trailing_zeros();
        let sub = s.view.peer_has.subtree(height);
        if sub.is_empty() {
            return None;
        }
        let mut walk = Walk {
            best: None,
            evaluated: 0,
            coins: rng.next_u64(),
            threshold: u32::from(s.tree.value(root)),
            done_below: 0,
            next: None,
            step: 1,
        };
        // Passes with a rising threshold (see `Walk`): the first holds the
        // lowest bound, so a flat tree takes one pass.
        loop {
            self.visit(s, root, sub, height, &mut walk);
            let settled = walk.best.is_some() && walk.evaluated >= self.search_limit;
            match walk.next.take() {
                // Blocks left out bound their chunks by `next` at least.
                Some(next) if walk.best.is_none_or(|b| next < b.value) && !settled => {
                    // Rising by at least a doubling step keeps the passes
                    // few where bounds spread over many values.
                    walk.done_below = walk.threshold + 1;
                    walk.threshold = next.max(walk.threshold.saturating_add(walk.step));
                    walk.step = walk.step.saturating_mul(2);
                }
                _ => return walk.best,
            }
        }
    }

    /// Walks the subtree of `node` (covering `2^k` chunks, the peer's part
    /// of them being `sub`) depth-first, lower bound first, entering only
    /// subtrees whose bound is within the pass's threshold.
    fn visit(&self, s: &Search<'_, '_>, node: usize, sub: Subtree, k: u32, walk: &mut Walk) {
        if let Some(block) = s.tree.leaf_block(node) {
            // Blocks under the previous passes' threshold were evaluated.
            if u32::from(s.tree.value(node)) >= walk.done_below {
                self.evaluate(s, block, sub.word(), walk);
            }
            return;
        }
        let (left, right) = (2 * node, 2 * node + 1);
        let (left_sub, right_sub) = s.view.peer_has.subtree_halves(sub, k);
        let (l, r) = (s.tree.value(left), s.tree.value(right));
        // The node's own coin: a bit of the round's draw picked by the node
        // number, so that siblings and cousins do not all flip alike.
        let coin = walk.coins.rotate_right(node as u32 % 64) & 1 == 0;
        let left_first = l < r || (l == r && coin);
        let order = if left_first {
            [(left, left_sub), (right, right_sub)]
        } else {
            [(right, right_sub), (left, left_sub)]
        };
        for (child, child_sub) in order {
            let bound = u32::from(s.tree.value(child));
            let settled = walk.best.is_some() && walk.evaluated >= self.search_limit;
            // A bound of NONE: every counted chunk below is taken.
            let (first, n) = s.tree.blocks(child);
            if child_sub.is_empty()
                || s.view.dry.is_some_and(|d| d.all_dry(first, n))
                || bound == u32::from(NONE)
                || walk.best.is_some_and(|b| bound >= b.value)
                || settled
                || first as u64 * BLOCK >= s.tree_end
            {
                continue;
            }
            if bound > walk.threshold {
                walk.next = Some(walk.next.map_or(bound, |n| n.min(bound)));
                continue;
            }
            self.visit(s, child, child_sub, k - 1, walk);
        }
    }

    /// Evaluates `block`, where the peer has `peer_word`, keeping it when
    /// its rarest fresh chunks beat the best so far.
    fn evaluate(&self, s: &Search<'_, '_>, block: usize, peer_word: u64, walk: &mut Walk) {
        let base = block as u64 * BLOCK;
        let valid = u64::MAX >> (BLOCK - (s.tree_end - base).min(BLOCK));
        let hint = peer_word & valid & !s.view.availability.taken_word(block);
        // Only a block the counts cover whole can be judged: chunks past
        // them are searched as the tail.
        let covered = base + BLOCK <= s.tree_end || s.tree_end == s.end;
        let dry = || {
            if let Some(d) = s.view.dry.filter(|_| covered) {
                d.mark(block);
            }
        };
        if hint == 0 {
            // Every chunk of the peer's here is taken (see `dry`).
            dry();
            return;
        }
        walk.evaluated += 1;
        let below = walk.best.map_or(u32::MAX, |b| b.value);
        let levels = s.view.availability.levels(block);
        if rarest_in(levels, s.counts, base, hint, below).is_none() {
            return;
        }
        // It would improve: check against the sets themselves.
        let w = base / BLOCK;
        let mut fresh = hint & !s.view.have.word(w) & !s.view.requested.word(w);
        if fresh == 0 {
            // The taken marks lagged: every chunk here is had or requested.
            dry();
            return;
        }
        if !self.picked.is_empty() {
            // Not dry for chunks picked now: they may not all go out.
            fresh &= !self.picked.word(w);
        }
        if fresh == 0 {
            return;
        }
        if let Some((value, ties)) = rarest_in(levels, s.counts, base, fresh, below) {
            walk.best = Some(Eval {
                base,
                fresh,
                value,
                ties,
            });
        }
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

/// Empties the scratch set.
pub(crate) fn clear(map: &mut Binmap) {
    if !map.is_empty() {
        map.clear(ChunkRange::new(0, MAX_CHUNK_INDEX).expect("a valid range"));
    }
}

/// The rarest chunks of `mask` (block chunks from `base`, not empty) if
/// their count is below `below`: the count and the chunks having it. The
/// per-count bitsets answer counts under [`LEVELS`]; past them (every
/// chunk of the mask that common) the counts are read one by one.
pub(crate) fn rarest_in(
    levels: &[u64; LEVELS],
    counts: &[u16],
    base: u64,
    mask: u64,
    below: u32,
) -> Option<(u32, u64)> {
    for (count, &level) in levels
        .iter()
        .enumerate()
        .take(below.min(LEVELS as u32) as usize)
    {
        let ties = mask & level;
        if ties != 0 {
            return Some((count as u32, ties));
        }
    }
    if below as usize <= LEVELS {
        return None;
    }
    let (value, ties) = rarest_of(counts, base, mask);
    (value < below).then_some((value, ties))
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
pub(crate) fn random_run_start(ties: u64, rng: &mut dyn Rng) -> u64 {
    let mut starts = ties & !(ties << 1);
    for _ in 0..rng.random_range(0..starts.count_ones()) {
        starts &= starts - 1;
    }
    u64::from(starts.trailing_zeros())
}

#[cfg(test)]
#[path = "rarest_tests.rs"]
mod tests;
