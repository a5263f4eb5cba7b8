//! Requests a peer made to us, waiting to be served.

use std::collections::VecDeque;

use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange};

/// A FIFO of requested chunk ranges, bounded in ranges, not chunks: one
/// REQUEST may ask for the whole content (libswift asks for tens of
/// thousands of chunks at once and never re-asks on that channel, wire
/// notes' interop profile), and a range costs the same whatever its length.
/// A chunk already queued is not queued again (libswift may send the same
/// REQUEST twice).
#[derive(Debug, Default)]
pub struct UploadQueue {
    ranges: VecDeque<ChunkRange>,
    /// The chunks in `ranges`.
    queued: Binmap,
    chunks: u64,
}

/// A request did not fit: the queue holds its most ranges already. The
/// caller voids the peer's requests with CHOKE/UNCHOKE (RFC 7574 §3.9) so
/// that it asks again, rather than dropping part of one silently.
#[derive(Debug, PartialEq, Eq)]
pub struct QueueFull;

impl UploadQueue {
    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.chunks == 0
    }

    /// How many chunks wait.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Queues the chunks of `range` not queued yet, in order, in at most
    /// `max_ranges` ranges in all; returns how many chunks it added. On
    /// [`QueueFull`] nothing of `range` is queued.
    pub fn push(&mut self, range: ChunkRange, max_ranges: usize) -> Result<u64, QueueFull> {
        let fresh = self.unqueued_runs(range);
        let merges = fresh
            .first()
            .zip(self.ranges.back())
            .is_some_and(|(f, b)| b.last().0 + 1 == f.first().0);
        let added_ranges = fresh.len() - usize::from(merges);
        if self.ranges.len() + added_ranges > max_ranges {
            return Err(QueueFull);
        }
        let mut added = 0;
        for (i, run) in fresh.into_iter().enumerate() {
            self.queued.set(run);
            added += run.len();
            match self.ranges.back_mut() {
                // A request that continues the last one (requests in order)
                // extends it instead of taking a range of its own.
                Some(back) if i == 0 && merges => {
                    *back = ChunkRange::new(back.first(), run.last()).unwrap_or(*back);
                }
                _ => self.ranges.push_back(run),
            }
        }
        self.chunks += added;
        Ok(added)
    }

    /// The runs of `range` not queued yet.
    fn unqueued_runs(&self, range: ChunkRange) -> Vec<ChunkRange> {
        let mut runs = Vec::new();
        let mut pos = range.first();
        while pos <= range.last() {
            let Some(start) = self
                .queued
                .first_empty_from(pos)
                .filter(|&s| s <= range.last())
            else {
                break;
            };
            let end = match self.queued.first_filled_from(start) {
                Some(f) if f <= range.last() => ChunkIndex(f.0 - 1),
                _ => range.last(),
            };
            runs.extend(ChunkRange::new(start, end));
            pos = ChunkIndex(end.0 + 1);
        }
        runs
    }

    /// Removes `range` wherever it is queued (CANCEL).
    pub fn cancel(&mut self, range: ChunkRange) {
        if self.queued.is_empty_range(range) {
            return;
        }
        self.queued.clear(range);
        let mut kept = VecDeque::with_capacity(self.ranges.len());
        let mut chunks = 0;
        for r in self.ranges.drain(..) {
            match r.intersect(range) {
                None => {
                    chunks += r.len();
                    kept.push_back(r);
                }
                Some(cut) => {
                    if cut.first() > r.first() {
                        let left = ChunkRange::new(r.first(), cut.first().0 - 1);
                        kept.extend(left.inspect(|l| chunks += l.len()));
                    }
                    if cut.last() < r.last() {
                        let right = ChunkRange::new(cut.last().0 + 1, r.last());
                        kept.extend(right.inspect(|l| chunks += l.len()));
                    }
                }
            }
        }
        self.ranges = kept;
        self.chunks = chunks;
    }

    /// Drops everything queued.
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.queued = Binmap::new();
        self.chunks = 0;
    }

    /// The chunks to send next, in order, left in the queue.
    pub fn upcoming(&self) -> impl Iterator<Item = ChunkIndex> + '_ {
        self.ranges
            .iter()
            .flat_map(|r| (r.first().0..=r.last().0).map(ChunkIndex))
    }

    /// The next chunk to send, left in the queue.
    pub fn peek(&self) -> Option<ChunkIndex> {
        self.ranges.front().map(|r| r.first())
    }

    /// Takes the next chunk to send.
    pub fn pop(&mut self) -> Option<ChunkIndex> {
        let front = self.ranges.front_mut()?;
        let chunk = front.first();
        match ChunkRange::new(chunk.0 + 1, front.last()) {
            Some(rest) if chunk < front.last() => *front = rest,
            _ => {
                self.ranges.pop_front();
            }
        }
        self.queued.clear_chunk(chunk);
        self.chunks -= 1;
        Some(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: u64, b: u64) -> ChunkRange {
        ChunkRange::new(a, b).unwrap()
    }

    fn drain(q: &mut UploadQueue) -> Vec<u64> {
        std::iter::from_fn(|| q.pop()).map(|c| c.0).collect()
    }

    #[test]
    fn fifo_cancellable_and_unbounded_in_chunks() {
        let mut q = UploadQueue::default();
        assert_eq!(q.push(r(0, 9), 8), Ok(10));
        assert_eq!(q.push(r(20, 21), 8), Ok(2));
        q.cancel(r(2, 3));
        assert_eq!(q.chunks(), 10);
        assert_eq!(drain(&mut q), [0, 1, 4, 5, 6, 7, 8, 9, 20, 21]);
        assert!(q.is_empty());
        // One request for tens of thousands of chunks (libswift) is one
        // range: all of it is queued.
        assert_eq!(q.push(r(5, 60_004), 1), Ok(60_000));
        assert_eq!(q.chunks(), 60_000);
    }

    #[test]
    fn a_chunk_asked_twice_is_queued_once() {
        let mut q = UploadQueue::default();
        assert_eq!(q.push(r(0, 3), 8), Ok(4));
        assert_eq!(q.push(r(2, 5), 8), Ok(2));
        assert_eq!(q.push(r(0, 5), 8), Ok(0));
        assert_eq!(drain(&mut q), [0, 1, 2, 3, 4, 5]);
        // Once sent, a chunk may be asked for again (a retransmission).
        assert_eq!(q.push(r(1, 1), 8), Ok(1));
        assert_eq!(drain(&mut q), [1]);
    }

    #[test]
    fn requests_in_order_share_one_range() {
        let mut q = UploadQueue::default();
        for c in 0..100 {
            assert_eq!(q.push(r(c, c), 1), Ok(1));
        }
        assert_eq!(q.ranges.len(), 1);
    }

    #[test]
    fn a_request_past_the_range_bound_is_refused_whole() {
        let mut q = UploadQueue::default();
        assert_eq!(q.push(r(0, 0), 2), Ok(1));
        assert_eq!(q.push(r(10, 10), 2), Ok(1));
        // 20 and 30 would be two more ranges: none of it is queued.
        q.cancel(r(0, 0));
        assert_eq!(q.push(r(20, 20), 2), Ok(1));
        assert_eq!(q.push(r(30, 30), 2), Err(QueueFull));
        assert_eq!(q.push(r(20, 20), 2), Ok(0));
        // A request split around a queued chunk needs two ranges.
        let mut q = UploadQueue::default();
        q.push(r(5, 5), 4).unwrap();
        assert_eq!(q.push(r(0, 9), 2), Err(QueueFull));
        assert_eq!(q.push(r(0, 9), 3), Ok(9));
        assert_eq!(drain(&mut q), [5, 0, 1, 2, 3, 4, 6, 7, 8, 9]);
    }
}
