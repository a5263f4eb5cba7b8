//! How many connected peers have each chunk: the input of rarest-first.
//!
//! Peers that have everything (seeders) are counted once as a number added
//! to every chunk, so a swarm full of seeders costs nothing per chunk. The
//! other peers' chunks are counted per chunk, and a tree of per-block minima
//! (see `block_minima`) is kept beside the counts so that rarest-first finds
//! the rarest chunks without scanning them all. Chunks we have ourselves
//! ([`Availability::mark_have`]) are left out of the minima: after a while of
//! rarest-first they are the rarest ones, and would otherwise hide where the
//! rare chunks still worth requesting are.

use super::block_minima::{BlockMinima, BLOCK, NONE};
use crate::chunk::{ChunkIndex, ChunkRange};

/// The largest per-chunk count; [`NONE`] is reserved for "no counted chunk".
const MAX_COUNT: u16 = NONE - 1;

/// Per-chunk counts of the connected peers that have each chunk.
#[derive(Clone, Debug, Default)]
pub struct Availability {
    /// Peers that have every chunk.
    complete: u32,
    /// Counts from peers with some chunks, one per chunk of the content.
    counts: Vec<u16>,
    /// One bit per chunk (64 per word, one word per block): chunks we have,
    /// left out of the block minima.
    ours: Vec<u64>,
    /// The smallest count of each block, over chunks not ours.
    minima: BlockMinima,
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
        self.ours.resize(blocks, 0);
        if n % BLOCK as usize != 0 {
            // Forget "ours" bits of chunks cut off by a shrink.
            self.ours[blocks - 1] &= (1u64 << (n % BLOCK as usize)) - 1;
        }
        let Self {
            counts,
            ours,
            minima,
            ..
        } = self;
        minima.rebuild(blocks, |b| block_min(counts, ours, b));
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
        self.add_runs(Some(range));
    }

    /// One peer fewer has the chunks of `range`.
    pub fn remove(&mut self, range: ChunkRange) {
        self.remove_runs(Some(range));
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

    /// We have the chunks of `range` ourselves: rarest-first need not look
    /// at them any more. Counts are unchanged. Only speed depends on it, but
    /// a chunk marked here and missing from the picker's `have` may be
    /// passed over as if it were common.
    pub fn mark_have(&mut self, range: ChunkRange) {
        self.set_ours(range, true);
    }

    /// Undoes [`Availability::mark_have`] for `range` (e.g. chunks found
    /// corrupt and dropped).
    pub fn unmark_have(&mut self, range: ChunkRange) {
        self.set_ours(range, false);
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

    /// The number of peers that have everything.
    pub fn complete_peers(&self) -> u32 {
        self.complete
    }

    /// The per-chunk counts of peers that do not have everything.
    pub(crate) fn partial_counts(&self) -> &[u16] {
        &self.counts
    }

    /// The tree of block minima.
    pub(crate) fn minima(&self) -> &BlockMinima {
        &self.minima
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
            self.counts[first..=last].iter_mut().for_each(&f);
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

    fn set_ours(&mut self, range: ChunkRange, ours: bool) {
        let Some((first, last)) = self.clip(range) else {
            return;
        };
        for b in first / 64..=last / 64 {
            let lo = first.max(b * 64) - b * 64;
            let hi = last.min(b * 64 + 63) - b * 64;
            let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << lo);
            if ours {
                self.ours[b] |= mask;
            } else {
                self.ours[b] &= !mask;
            }
        }
        self.refresh(first, last);
    }

    /// Recomputes the minima of the blocks holding chunks `first ..= last`.
    fn refresh(&mut self, first: usize, last: usize) {
        let Self {
            counts,
            ours,
            minima,
            ..
        } = self;
        minima.update(first / 64, last / 64, |b| block_min(counts, ours, b));
    }
}

/// The smallest count in block `b` over chunks not ours; [`NONE`] when there
/// is none.
fn block_min(counts: &[u16], ours: &[u64], b: usize) -> u16 {
    let lo = b * BLOCK as usize;
    let hi = (lo + BLOCK as usize).min(counts.len());
    let Some(slice) = counts.get(lo..hi) else {
        return NONE;
    };
    let word = ours.get(b).copied().unwrap_or(0);
    if word == 0 {
        slice.iter().copied().min().unwrap_or(NONE)
    } else {
        slice
            .iter()
            .enumerate()
            .filter(|&(i, _)| word >> i & 1 == 0)
            .map(|(_, &c)| c)
            .min()
            .unwrap_or(NONE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(first: u64, last: u64) -> ChunkRange {
        ChunkRange::new(first, last).unwrap()
    }

    /// The minimum over the chunks not marked ours, by brute force.
    fn brute_min(a: &Availability, ours: &[bool]) -> u16 {
        (0..a.counts.len())
            .filter(|&i| !ours[i])
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
        let ours = vec![false; 5000];
        a.add_runs([r(0, 4999)]);
        a.add_runs([r(4000, 4000), r(10, 20), r(0, 9), r(64, 64), r(21, 4999)]);
        a.remove_runs([r(3000, 3001), r(5, 5), r(4999, 6000)]);
        for b in 0..5000usize.div_ceil(64) {
            let lo = b * 64;
            let hi = (lo + 64).min(5000);
            let want = a.counts[lo..hi].iter().copied().min().unwrap();
            assert_eq!(a.minima().leaf(b), want, "block {b}");
        }
        assert_eq!(a.minima().value(1), brute_min(&a, &ours));
        assert_eq!(a.minima().value(1), 1);
        assert_eq!(a.count(ChunkIndex(4000)), 3);
    }

    #[test]
    fn minima_track_adds_removes_and_our_chunks() {
        let mut a = Availability::new();
        a.set_chunk_count(200);
        let mut ours = vec![false; 200];
        a.add(r(0, 199));
        a.add(r(0, 199));
        a.remove(r(130, 131));
        assert_eq!(a.minima().value(1), 1);
        assert_eq!(a.minima().value(1), brute_min(&a, &ours));
        // Block 2 (chunks 128..192) holds the minimum; marking the two rare
        // chunks as ours lifts it.
        a.mark_have(r(130, 131));
        ours[130..=131].fill(true);
        assert_eq!(a.minima().value(1), 2);
        assert_eq!(a.minima().value(1), brute_min(&a, &ours));
        a.unmark_have(r(131, 131));
        ours[131] = false;
        assert_eq!(a.minima().value(1), 1);
        // A block that is all ours has no minimum at all.
        a.mark_have(r(0, 199));
        assert_eq!(a.minima().value(1), NONE);
        // Counts stay as they were.
        assert_eq!(a.count(ChunkIndex(130)), 1);
    }

    #[test]
    fn counts_saturate_below_the_sentinel() {
        let mut a = Availability::new();
        a.set_chunk_count(3);
        for _ in 0..u16::MAX as u32 + 5 {
            a.add(r(1, 1));
        }
        assert_eq!(a.count(ChunkIndex(1)), u32::from(MAX_COUNT));
        a.mark_have(r(0, 0));
        a.mark_have(r(2, 2));
        assert_eq!(a.minima().value(1), MAX_COUNT);
    }

    #[test]
    fn resizing_keeps_minima_consistent() {
        let mut a = Availability::new();
        a.set_chunk_count(100);
        a.add(r(0, 99));
        a.mark_have(r(0, 99));
        a.set_chunk_count(70);
        assert_eq!(a.minima().value(1), NONE);
        a.set_chunk_count(130);
        // The new chunks are counted 0 and not ours.
        assert_eq!(a.minima().value(1), 0);
        assert_eq!(a.count(ChunkIndex(80)), 0);
        assert_eq!(a.count(ChunkIndex(50)), 1);
    }
}
