//! An append-only log of chunk indices read through cursors: the swarm's
//! log of verified chunks (each channel sends HAVE from its own cursor,
//! a player learns from its own which chunks came when) and of chunks to
//! CANCEL elsewhere.
//!
//! A static swarm logs each chunk at most once, so its log is bounded by
//! the content. A live stream has no end: its log forgets its oldest
//! entries ([`ChunkLog::forget_before`]) while positions stay absolute, so
//! cursors keep their meaning and a cursor that fell behind what is kept
//! resumes at the oldest entry kept.

use std::collections::VecDeque;

use crate::chunk::ChunkIndex;

/// Chunk indices in the order logged, at absolute positions from 0.
#[derive(Clone, Debug, Default)]
pub struct ChunkLog {
    /// Entries forgotten: the position of `kept[0]`.
    forgotten: usize,
    kept: VecDeque<ChunkIndex>,
}

impl ChunkLog {
    /// An empty log.
    pub const fn new() -> Self {
        ChunkLog {
            forgotten: 0,
            kept: VecDeque::new(),
        }
    }

    /// The position the next entry will take: every entry ever logged,
    /// forgotten ones included.
    pub fn len(&self) -> usize {
        self.forgotten + self.kept.len()
    }

    /// Whether nothing was ever logged.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The position of the oldest entry kept.
    pub fn first_kept(&self) -> usize {
        self.forgotten
    }

    /// How many entries are kept (what the log costs in memory).
    pub fn kept_len(&self) -> usize {
        self.kept.len()
    }

    /// Appends `chunk`.
    pub fn push(&mut self, chunk: ChunkIndex) {
        self.kept.push_back(chunk);
    }

    /// Appends every chunk of `chunks`.
    pub fn extend(&mut self, chunks: impl IntoIterator<Item = ChunkIndex>) {
        self.kept.extend(chunks);
    }

    /// The entry at `position`, if logged and kept.
    pub fn get(&self, position: usize) -> Option<ChunkIndex> {
        self.kept
            .get(position.checked_sub(self.forgotten)?)
            .copied()
    }

    /// Where a reader at `cursor` goes on from: `cursor`, or the oldest
    /// entry kept if it fell behind that.
    pub fn resume(&self, cursor: usize) -> usize {
        cursor.max(self.forgotten)
    }

    /// The entries from `cursor` on (from the oldest kept, if it fell
    /// behind), in order.
    pub fn since(&self, cursor: usize) -> impl ExactSizeIterator<Item = ChunkIndex> + '_ {
        let from = (self.resume(cursor) - self.forgotten).min(self.kept.len());
        self.kept.range(from..).copied()
    }

    /// Forgets the entries before `position` (no effect on positions).
    pub fn forget_before(&mut self, position: usize) {
        let n = position.saturating_sub(self.forgotten).min(self.kept.len());
        self.kept.drain(..n);
        self.forgotten += n;
        if self.kept.capacity() > 4 * self.kept.len().max(64) {
            self.kept.shrink_to_fit();
        }
    }

    /// Keeps at most `max` entries, forgetting the oldest ones half a log
    /// at a time (so forgetting costs amortised constant time per entry).
    pub fn bound(&mut self, max: usize) {
        if self.kept.len() > max.max(1) {
            self.forget_before(self.len() - max.max(1) / 2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log_of(n: u64) -> ChunkLog {
        let mut log = ChunkLog::new();
        log.extend((0..n).map(|i| ChunkIndex(i * 10)));
        log
    }

    #[test]
    fn positions_stay_absolute_when_entries_are_forgotten() {
        let mut log = log_of(10);
        assert_eq!(log.len(), 10);
        assert_eq!(log.get(3), Some(ChunkIndex(30)));
        log.forget_before(4);
        assert_eq!((log.len(), log.first_kept(), log.kept_len()), (10, 4, 6));
        assert_eq!(log.get(3), None);
        assert_eq!(log.get(4), Some(ChunkIndex(40)));
        assert_eq!(log.get(10), None);
        log.push(ChunkIndex(7));
        assert_eq!(log.get(10), Some(ChunkIndex(7)));
    }

    #[test]
    fn a_cursor_behind_the_kept_entries_resumes_at_the_oldest() {
        let mut log = log_of(10);
        log.forget_before(6);
        assert_eq!(log.resume(2), 6);
        assert_eq!(log.resume(8), 8);
        let rest: Vec<u64> = log.since(2).map(|c| c.0).collect();
        assert_eq!(rest, [60, 70, 80, 90]);
        assert_eq!(log.since(9).len(), 1);
        assert_eq!(log.since(10).len(), 0);
        assert_eq!(log.since(99).len(), 0);
    }

    #[test]
    fn forgetting_past_the_end_empties_without_moving_positions_back() {
        let mut log = log_of(5);
        log.forget_before(50);
        assert_eq!((log.len(), log.first_kept(), log.kept_len()), (5, 5, 0));
        log.forget_before(2);
        assert_eq!(log.first_kept(), 5);
    }

    #[test]
    fn a_bounded_log_keeps_between_half_and_all_of_its_bound() {
        let mut log = ChunkLog::new();
        for i in 0..10_000u64 {
            log.push(ChunkIndex(i));
            log.bound(100);
            assert!(log.kept_len() <= 100);
        }
        assert!(log.kept_len() >= 50);
        assert_eq!(log.len(), 10_000);
        assert_eq!(log.get(9_999), Some(ChunkIndex(9_999)));
    }
}
