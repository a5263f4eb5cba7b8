//! How many connected peers have each chunk: the input of rarest-first.
//!
//! Peers that have everything (seeders) are counted once as a number added
//! to every chunk, so a swarm full of seeders costs nothing per chunk. The
//! other peers' chunks are counted per chunk, and a tree of per-block minima
//! (see `block_minima`) is kept beside the counts so that rarest-first finds
//! the rarest chunks without scanning them all. Chunks taken — ones we have
//! or have requested ([`Availability::mark_taken`]) — are left out of the
//! minima: rarest-first takes the rarest chunks first, so they soon are the
//! rarest ones, and would otherwise hide where the rare chunks still worth
//! requesting are.
//!
//! Two trees of minima are kept. One is over every counted chunk; the other
//! ("held") only over chunks some counted peer has. A peer counted chunk by
//! chunk gives each of its chunks a count of at least one, so for such a
//! peer the held minima are a valid bound, and a much tighter one while most
//! chunks are held by no neighbour (a flash crowd): every block then has a
//! chunk of count 0, and a bound of 0 tells the search nothing. A complete
//! peer is counted once for all chunks, so chunks only it has are counted 0:
//! for it the search needs the first tree.

use super::block_minima::{BlockMinima, BLOCK, NONE};
use crate::chunk::{ChunkIndex, ChunkRange};

/// The largest per-chunk count; [`NONE`] is reserved for "no counted chunk".
const MAX_COUNT: u16 = NONE - 1;

/// Counts below this are also kept as one bitset word per block and count
/// ([`Availability::levels`]), so that the rarest of any set of a block's
/// chunks takes a few word operations instead of a look-up per chunk. In a
/// swarm where every neighbour holds a chunk the counts reach the neighbour
/// count; below eight they are where rarity matters most.
pub(crate) const LEVELS: usize = 8;

/// Per-chunk counts of the connected peers that have each chunk.
#[derive(Clone, Debug, Default)]
pub struct Availability {
    /// Peers that have every chunk.
    complete: u32,
    /// Counts from peers with some chunks, one per chunk of the content.
    counts: Vec<u16>,
    /// Per block and count `c < LEVELS`: the chunks counted exactly `c`.
    levels: Vec<[u64; LEVELS]>,
    /// One bit per chunk (64 per word, one word per block): chunks taken
    /// (had or requested), left out of the block minima.
    taken: Vec<u64>,
    /// The smallest count of each block, over chunks not taken.
    minima: BlockMinima,
    /// The smallest count of each block, over chunks not taken that some
    /// counted peer has (count at least one).
    held: BlockMinima,
}

impl Availability {
    /// No peers, no chunks known.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the counts to `chunk_count` chunks (once the size is known).
    /// Chunks past the end are never counted. Takes time linear in the
    /// chunk count: call it once, when the size becomes known.
    pub fn set_chunk_count(&mut self, chunk_count: u64) {
        let n = usize::try_from(chunk_count).unwrap_or(usize::MAX);
        self.counts.resize(n, 0);
        let blocks = n.div_ceil(BLOCK as usize);
        self.taken.resize(blocks, 0);
        if n % BLOCK as usize != 0 {
            // Forget "taken" bits of chunks cut off by a shrink.
            self.taken[blocks - 1] &= (1u64 << (n % BLOCK as usize)) - 1;
        }
        self.levels.clear();
        self.levels.resize(blocks, [0; LEVELS]);
        for (i, &c) in self.counts.iter().enumerate() {
            set_level(&mut self.levels, i, c, true);
        }
        let (counts, taken, trees) = self.split();
        for (tree, floor) in trees {
            tree.rebuild(blocks, |b| block_min(counts, taken, b, floor));
        }
    }

    /// The counts and the taken marks, beside each tree of minima with the
    /// floor of the counts it keeps (borrowed apart, to update the trees).
    fn split(&mut self) -> (&[u16], &[u64], [(&mut BlockMinima, u16); 2]) {
        let trees = [(&mut self.minima, 0), (&mut self.held, 1)];
        (&self.counts, &self.taken, trees)
    }

    /// The number of chunks counted individually (0 until
    /// [`Availability::set_chunk_count`]).
    pub fn chunk_count(&self) -> u64 {
        self.counts.len() as u64
    }

    /// A peer that has every chunk joined.
    pub fn add_complete_peer(&mut self) {
        self.complete += 1;
    }

    /// A peer that had every chunk left.
    pub fn remove_complete_peer(&mut self) {
        self.complete = self.complete.saturating_sub(1);
    }

    /// One more peer has the chunks of `range` (newly: the caller counts
    /// each peer's chunk once).
    pub fn add(&mut self, range: ChunkRange) {
        if range.len() == 1 {
            self.update_chunk(range.first(), |c| c.saturating_add(1).min(MAX_COUNT));
        } else {
            self.add_runs(Some(range));
        }
    }

    /// One peer fewer has the chunks of `range`.
    pub fn remove(&mut self, range: ChunkRange) {
        if range.len() == 1 {
            self.update_chunk(range.first(), |c| c.saturating_sub(1));
        } else {
            self.remove_runs(Some(range));
        }
    }

    /// [`Availability::add`] for many ranges at once — e.g. a joining peer's
    /// whole HAVE set, `peer_has.filled_runs()` — updating the minima once.
    pub fn add_runs(&mut self, runs: impl IntoIterator<Item = ChunkRange>) {
        self.update_runs(runs, |c| *c = c.saturating_add(1).min(MAX_COUNT));
    }

    /// [`Availability::remove`] for many ranges at once — e.g. a leaving
    /// peer's whole HAVE set.
    pub fn remove_runs(&mut self, runs: impl IntoIterator<Item = ChunkRange>) {
        self.update_runs(runs, |c| *c = c.saturating_sub(1));
    }

    /// The chunks of `range` are taken — we have them, or requested them —
    /// so rarest-first need not look at them. Counts are unchanged. The
    /// swarm keeps the marks equal to what it has and requested: a chunk
    /// marked here that is still fresh is passed over by rarest-first.
    pub fn mark_taken(&mut self, range: ChunkRange) {
        self.set_taken(range, true);
    }

    /// Undoes [`Availability::mark_taken`] for `range` (e.g. requests given
    /// up on).
    pub fn unmark_taken(&mut self, range: ChunkRange) {
        self.set_taken(range, false);
    }

    /// How many connected peers have `chunk`.
    pub fn count(&self, chunk: ChunkIndex) -> u32 {
        let partial = usize::try_from(chunk.0)
            .ok()
            .and_then(|i| self.counts.get(i))
            .copied()
            .unwrap_or(0);
        self.complete + u32::from(partial)
    }

    /// Whether `chunk` is marked taken ([`Availability::mark_taken`]).
    pub fn is_taken(&self, chunk: ChunkIndex) -> bool {
        let i = chunk.0 / BLOCK;
        usize::try_from(i)
            .ok()
            .and_then(|i| self.taken.get(i))
            .is_some_and(|w| w >> (chunk.0 % BLOCK) & 1 == 1)
    }

    /// The number of peers that have everything.
    pub fn complete_peers(&self) -> u32 {
        self.complete
    }

    /// The per-chunk counts of peers that do not have everything.
    pub(crate) fn partial_counts(&self) -> &[u16] {
        &self.counts
    }

    /// The tree of block minima over every counted chunk not taken.
    #[cfg(test)]
    pub(crate) fn minima(&self) -> &BlockMinima {
        &self.minima
    }

    /// The tree of block minima over the chunks not taken that some counted
    /// peer has.
    #[cfg(test)]
    pub(crate) fn held_minima(&self) -> &BlockMinima {
        &self.held
    }

    /// Block `block`'s chunks by count, for counts below [`LEVELS`].
    pub(crate) fn levels(&self, block: usize) -> &[u64; LEVELS] {
        &self.levels[block]
    }

    /// Block `block`'s taken chunks ([`Availability::mark_taken`]).
    pub(crate) fn taken_word(&self, block: usize) -> u64 {
        self.taken.get(block).copied().unwrap_or(0)
    }

    /// The tree bounding from below the count of any chunk worth asking a
    /// peer for: [`Availability::held_minima`] when the peer is counted
    /// chunk by chunk (`counted`), as each of its chunks then counts at
    /// least one, else [`Availability::minima`].
    pub(crate) fn bound_for(&self, counted: bool) -> &BlockMinima {
        if counted {
            &self.held
        } else {
            &self.minima
        }
    }

    /// The counted chunks of `range`, as indices into `counts`, if any.
    fn clip(&self, range: ChunkRange) -> Option<(usize, usize)> {
        let len = self.counts.len() as u64;
        let first = range.first().0;
        let end = range.last().0.saturating_add(1).min(len);
        (first < end).then(|| (first as usize, end as usize - 1))
    }

    /// Applies `f` to the counts of every range, refreshing the minima of
    /// the blocks touched, once per stretch of neighbouring blocks.
    fn update_runs(&mut self, runs: impl IntoIterator<Item = ChunkRange>, f: impl Fn(&mut u16)) {
        // The chunks of the stretch of blocks touched and not yet refreshed.
        let mut pending: Option<(usize, usize)> = None;
        for range in runs {
            let Some((first, last)) = self.clip(range) else {
                continue;
            };
            for i in first..=last {
                let before = self.counts[i];
                f(&mut self.counts[i]);
                set_level(&mut self.levels, i, before, false);
                set_level(&mut self.levels, i, self.counts[i], true);
            }
            pending = match pending {
                Some((a, b)) if first / 64 <= b / 64 + 1 && last / 64 + 1 >= a / 64 => {
                    Some((a.min(first), b.max(last)))
                }
                Some((a, b)) => {
                    self.refresh(a, b);
                    Some((first, last))
                }
                None => Some((first, last)),
            };
        }
        if let Some((first, last)) = pending {
            self.refresh(first, last);
        }
    }

    fn set_taken(&mut self, range: ChunkRange, taken: bool) {
        let Some((first, last)) = self.clip(range) else {
            return;
        };
        if first == last {
            let (b, bit) = (first / 64, 1u64 << (first % 64));
            if (self.taken[b] & bit != 0) != taken {
                self.taken[b] ^= bit;
                let count = Some(self.counts[first]);
                let (before, after) = if taken { (count, None) } else { (None, count) };
                self.chunk_changed(first, before, after);
            }
            return;
        }
        let mut changed = false;
        for b in first / 64..=last / 64 {
            let lo = first.max(b * 64) - b * 64;
            let hi = last.min(b * 64 + 63) - b * 64;
            let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << lo);
            let word = if taken {
                self.taken[b] | mask
            } else {
                self.taken[b] & !mask
            };
            changed |= word != self.taken[b];
            self.taken[b] = word;
        }
        // A chunk verified after it was requested is marked twice: the
        // second time costs one lookup, not a refresh of the minima.
        if changed {
            self.refresh(first, last);
        }
    }

    /// Applies `f` to the count of one chunk, keeping the minima exact
    /// without recomputing its block unless it held the block's minimum.
    fn update_chunk(&mut self, chunk: ChunkIndex, f: impl Fn(u16) -> u16) {
        let Some(i) = usize::try_from(chunk.0)
            .ok()
            .filter(|&i| i < self.counts.len())
        else {
            return;
        };
        let before = self.counts[i];
        let after = f(before);
        self.counts[i] = after;
        set_level(&mut self.levels, i, before, false);
        set_level(&mut self.levels, i, after, true);
        // A taken chunk is in no minimum: only its count changes.
        if self.taken[i / 64] >> (i % 64) & 1 == 0 {
            self.chunk_changed(i, Some(before), Some(after));
        }
    }

    /// Chunk `i`'s part in the minima went from `before` to `after` (its
    /// count, or `None` while taken); updates both trees. The new minimum
    /// of its block is `after` when that is lower; it needs recomputing
    /// only when `before` was the minimum and the part rose.
    fn chunk_changed(&mut self, i: usize, before: Option<u16>, after: Option<u16>) {
        let b = i / 64;
        let (counts, taken, trees) = self.split();
        for (tree, floor) in trees {
            let (was, now) = (lift(before, floor), lift(after, floor));
            let leaf = tree.leaf(b);
            if now < leaf {
                tree.set_leaf(b, now);
            } else if was == leaf && now > was {
                tree.set_leaf(b, block_min(counts, taken, b, floor));
            }
        }
    }

    /// Recomputes the minima of the blocks holding chunks `first ..= last`.
    fn refresh(&mut self, first: usize, last: usize) {
        let (counts, taken, trees) = self.split();
        for (tree, floor) in trees {
            tree.update(first / 64, last / 64, |b| {
                block_min(counts, taken, b, floor)
            });
        }
    }
}

/// The smallest count of at least `floor` in block `b`, over chunks not
/// taken; [`NONE`] when there is none.
fn block_min(counts: &[u16], taken: &[u64], b: usize, floor: u16) -> u16 {
    let lo = b * BLOCK as usize;
    let hi = (lo + BLOCK as usize).min(counts.len());
    let Some(slice) = counts.get(lo..hi) else {
        return NONE;
    };
    let word = taken.get(b).copied().unwrap_or(0);
    // Counts below the floor are lifted to NONE, which never wins a min:
    // `c - floor` wraps them past every real count (branch-free).
    let lifted = |c: u16| c.wrapping_sub(floor).saturating_add(floor);
    if word == 0 {
        slice.iter().map(|&c| lifted(c)).min().unwrap_or(NONE)
    } else {
        // Taken chunks are or'ed up to NONE, also without a branch.
        slice
            .iter()
            .enumerate()
            .map(|(i, &c)| lifted(c) | ((word >> i & 1) as u16).wrapping_neg())
            .min()
            .unwrap_or(NONE)
    }
}

/// Puts chunk `i` in (`on`) or out of the level bitset of count `count`.
fn set_level(levels: &mut [[u64; LEVELS]], i: usize, count: u16, on: bool) {
    if usize::from(count) < LEVELS {
        let word = &mut levels[i / 64][usize::from(count)];
        let bit = 1u64 << (i % 64);
        if on {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }
}

/// A chunk's part in the minima with counts below `floor` left out:
/// [`NONE`] for none.
fn lift(part: Option<u16>, floor: u16) -> u16 {
    part.filter(|&c| c >= floor).unwrap_or(NONE)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(first: u64, last: u64) -> ChunkRange {
        ChunkRange::new(first, last).unwrap()
    }

    /// The minimum over the chunks not marked taken, by brute force.
    fn brute_min(a: &Availability, taken: &[bool]) -> u16 {
        (0..a.counts.len())
            .filter(|&i| !taken[i])
            .map(|i| a.counts[i])
            .min()
            .unwrap_or(NONE)
    }

    #[test]
    fn counts_partial_and_complete_peers() {
        let mut a = Availability::new();
        a.set_chunk_count(10);
        a.add_complete_peer();
        a.add(r(2, 4));
        a.add(r(4, 20));
        assert_eq!(a.count(ChunkIndex(0)), 1);
        assert_eq!(a.count(ChunkIndex(3)), 2);
        assert_eq!(a.count(ChunkIndex(4)), 3);
        assert_eq!(a.count(ChunkIndex(9)), 2);
        assert_eq!(a.count(ChunkIndex(10)), 1);
        a.remove(r(0, 4));
        a.remove_complete_peer();
        assert_eq!(a.count(ChunkIndex(3)), 0);
        assert_eq!(a.count(ChunkIndex(4)), 1);
        assert_eq!(a.complete_peers(), 0);
    }

    #[test]
    fn unknown_size_counts_only_complete_peers() {
        let mut a = Availability::new();
        a.add(r(0, 100));
        a.add_complete_peer();
        a.add_complete_peer();
        assert_eq!(a.chunk_count(), 0);
        assert_eq!(a.count(ChunkIndex(5)), 2);
        assert_eq!(a.minima().root(), None);
        a.remove_complete_peer();
        a.remove_complete_peer();
        a.remove_complete_peer();
        assert_eq!(a.count(ChunkIndex(5)), 0);
    }

    #[test]
    fn batch_runs_match_single_ranges() {
        let ranges = [r(0, 3), r(70, 200), r(199, 199), r(250, 900)];
        let mut one = Availability::new();
        let mut batch = Availability::new();
        one.set_chunk_count(300);
        batch.set_chunk_count(300);
        ranges.iter().for_each(|&x| one.add(x));
        batch.add_runs(ranges);
        assert_eq!(one.counts, batch.counts);
        assert_eq!(batch.minima().value(1), 0);
        one.remove_runs(ranges);
        assert!(one.counts.iter().all(|&c| c == 0));
    }

    #[test]
    fn batches_of_scattered_and_unordered_runs_keep_minima_exact() {
        let mut a = Availability::new();
        a.set_chunk_count(5000);
        let taken = vec![false; 5000];
        a.add_runs([r(0, 4999)]);
        a.add_runs([r(4000, 4000), r(10, 20), r(0, 9), r(64, 64), r(21, 4999)]);
        a.remove_runs([r(3000, 3001), r(5, 5), r(4999, 6000)]);
        for b in 0..5000usize.div_ceil(64) {
            let lo = b * 64;
            let hi = (lo + 64).min(5000);
            let want = a.counts[lo..hi].iter().copied().min().unwrap();
            assert_eq!(a.minima().leaf(b), want, "block {b}");
        }
        assert_eq!(a.minima().value(1), brute_min(&a, &taken));
        assert_eq!(a.minima().value(1), 1);
        assert_eq!(a.count(ChunkIndex(4000)), 3);
    }

    #[test]
    fn minima_track_adds_removes_and_our_chunks() {
        let mut a = Availability::new();
        a.set_chunk_count(200);
        let mut taken = vec![false; 200];
        a.add(r(0, 199));
        a.add(r(0, 199));
        a.remove(r(130, 131));
        assert_eq!(a.minima().value(1), 1);
        assert_eq!(a.minima().value(1), brute_min(&a, &taken));
        // Block 2 (chunks 128..192) holds the minimum; marking the two rare
        // chunks as taken lifts it.
        a.mark_taken(r(130, 131));
        taken[130..=131].fill(true);
        assert_eq!(a.minima().value(1), 2);
        assert_eq!(a.minima().value(1), brute_min(&a, &taken));
        a.unmark_taken(r(131, 131));
        taken[131] = false;
        assert_eq!(a.minima().value(1), 1);
        // A block that is all taken has no minimum at all.
        a.mark_taken(r(0, 199));
        assert_eq!(a.minima().value(1), NONE);
        // Counts stay as they were.
        assert_eq!(a.count(ChunkIndex(130)), 1);
    }

    #[test]
    fn held_minima_leave_out_chunks_nobody_counted_has() {
        let mut a = Availability::new();
        a.set_chunk_count(300);
        // Nothing held: both trees know a chunk of count 0 only.
        assert_eq!(a.minima().value(1), 0);
        assert_eq!(a.held_minima().value(1), NONE);
        a.add(r(70, 75));
        a.add(r(70, 71));
        a.add(r(200, 200));
        a.add(r(200, 200));
        assert_eq!(a.minima().value(1), 0);
        assert_eq!(a.held_minima().value(1), 1);
        // Block 1 holds 70..=75 (counts 2, 2, 1, 1, 1, 1); block 3 holds 200.
        assert_eq!(a.held_minima().leaf(1), 1);
        assert_eq!(a.held_minima().leaf(3), 2);
        assert_eq!(a.held_minima().leaf(0), NONE);
        a.mark_taken(r(72, 75));
        assert_eq!(a.held_minima().leaf(1), 2);
        assert_eq!(a.held_minima().value(1), 2);
        a.remove(r(200, 200));
        assert_eq!(a.held_minima().value(1), 1);
        // A complete peer changes no per-chunk count, so neither tree.
        a.add_complete_peer();
        assert_eq!(a.held_minima().value(1), 1);
        assert!(std::ptr::eq(a.bound_for(true), a.held_minima()));
        assert!(std::ptr::eq(a.bound_for(false), a.minima()));
    }

    /// Both trees, leaf by leaf and at the root, against brute force.
    fn assert_exact(a: &Availability, taken: &[bool], step: usize) {
        for (tree, floor) in [(a.minima(), 0u16), (a.held_minima(), 1)] {
            let brute = |lo: usize, hi: usize| {
                (lo..hi.min(a.counts.len()))
                    .filter(|&i| !taken[i] && a.counts[i] >= floor)
                    .map(|i| a.counts[i])
                    .min()
                    .unwrap_or(NONE)
            };
            for b in 0..a.counts.len().div_ceil(64) {
                let want = brute(b * 64, b * 64 + 64);
                assert_eq!(tree.leaf(b), want, "step {step}, floor {floor}, block {b}");
            }
            assert_eq!(tree.value(1), brute(0, a.counts.len()), "step {step}");
        }
        for (i, &c) in a.counts.iter().enumerate() {
            for (level, word) in a.levels(i / 64).iter().enumerate() {
                let want = usize::from(c) == level;
                assert_eq!(word >> (i % 64) & 1 == 1, want, "step {step}, chunk {i}");
            }
        }
    }

    #[test]
    fn single_chunk_updates_keep_both_trees_exact() {
        use rand::rngs::Xoshiro256PlusPlus;
        use rand::{RngExt, SeedableRng};
        let n = 700;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut a = Availability::new();
        a.set_chunk_count(n as u64);
        let mut taken = vec![false; n];
        for step in 0..20_000 {
            // Mostly single chunks in a few blocks, so that minima are hit
            // often; now and then a range.
            let first = rng.random_range(0..n as u64);
            let last = if rng.random_bool(0.1) {
                (first + rng.random_range(0..150)).min(n as u64 - 1)
            } else {
                first
            };
            let range = r(first, last);
            let chunks = first as usize..=last as usize;
            match rng.random_range(0..4) {
                0 | 1 => a.add(range),
                2 => a.remove(range),
                _ => {
                    let mark = rng.random_bool(0.5);
                    if mark {
                        a.mark_taken(range);
                    } else {
                        a.unmark_taken(range);
                    }
                    taken[chunks].fill(mark);
                }
            }
            assert_exact(&a, &taken, step);
        }
        assert!(a.counts.iter().any(|&c| c > 2), "counts hardly moved");
    }

    #[test]
    fn counts_saturate_below_the_sentinel() {
        let mut a = Availability::new();
        a.set_chunk_count(3);
        for _ in 0..u16::MAX as u32 + 5 {
            a.add(r(1, 1));
        }
        assert_eq!(a.count(ChunkIndex(1)), u32::from(MAX_COUNT));
        a.mark_taken(r(0, 0));
        a.mark_taken(r(2, 2));
        assert_eq!(a.minima().value(1), MAX_COUNT);
    }

    #[test]
    fn resizing_keeps_minima_consistent() {
        let mut a = Availability::new();
        a.set_chunk_count(100);
        a.add(r(0, 99));
        a.mark_taken(r(0, 99));
        a.set_chunk_count(70);
        assert_eq!(a.minima().value(1), NONE);
        a.set_chunk_count(130);
        // The new chunks are counted 0 and not taken.
        assert_eq!(a.minima().value(1), 0);
        assert_eq!(a.count(ChunkIndex(80)), 0);
        assert_eq!(a.count(ChunkIndex(50)), 1);
    }
}
