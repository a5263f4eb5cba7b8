//! Requests a peer made to us, waiting to be served.

use std::collections::VecDeque;

use crate::chunk::{ChunkIndex, ChunkRange};

/// A FIFO of requested chunk ranges, bounded in chunks.
#[derive(Debug, Default)]
pub struct UploadQueue {
    ranges: VecDeque<ChunkRange>,
    chunks: u64,
}

impl UploadQueue {
    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.chunks == 0
    }

    /// How many chunks wait.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Queues `range`, cut to `limit` chunks in total; returns how many
    /// chunks were queued.
    pub fn push(&mut self, range: ChunkRange, limit: u64) -> u64 {
        let room = limit.saturating_sub(self.chunks);
        if room == 0 {
            return 0;
        }
        let take = range.len().min(room);
        let Some(r) = ChunkRange::with_len(range.first(), take) else {
            return 0;
        };
        self.ranges.push_back(r);
        self.chunks += take;
        take
    }

    /// Removes `range` wherever it is queued (CANCEL).
    pub fn cancel(&mut self, range: ChunkRange) {
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

    #[test]
    fn fifo_bounded_and_cancellable() {
        let mut q = UploadQueue::default();
        assert_eq!(q.push(r(0, 9), 8), 8);
        assert_eq!(q.push(r(20, 21), 8), 0);
        q.cancel(r(2, 3));
        assert_eq!(q.chunks, 6);
        let got: Vec<u64> = std::iter::from_fn(|| q.pop()).map(|c| c.0).collect();
        assert_eq!(got, [0, 1, 4, 5, 6, 7]);
        assert!(q.is_empty());
        assert_eq!(
            q.push(r(5, u64::from(u32::MAX)), 1 << 40),
            u64::from(u32::MAX) - 4
        );
    }
}
