//! The chunks we have requested from one peer and not yet received.

use std::collections::VecDeque;
use std::time::Duration;

use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::time::Instant;

/// Outstanding requests to one peer, with when each range was asked for.
#[derive(Debug, Default)]
pub struct Outstanding {
    /// Chunks requested and not yet received, cancelled or timed out.
    chunks: Binmap,
    /// Ranges in the order they were requested.
    order: VecDeque<(ChunkRange, Instant)>,
}

impl Outstanding {
    /// The chunks outstanding.
    pub fn chunks(&self) -> &Binmap {
        &self.chunks
    }

    /// How many chunks are outstanding.
    pub fn count(&self) -> u64 {
        self.chunks.count()
    }

    /// Records a REQUEST for `range` sent at `now`.
    pub fn add(&mut self, range: ChunkRange, now: Instant) {
        self.chunks.set(range);
        self.order.push_back((range, now));
    }

    /// `chunk` arrived. Returns when it was requested, if it was.
    pub fn received(&mut self, chunk: ChunkIndex) -> Option<Instant> {
        if !self.chunks.contains(chunk) {
            return None;
        }
        self.chunks.clear_chunk(chunk);
        // Chunks mostly arrive in the order asked for: look near the front.
        let at = self
            .order
            .iter()
            .take(16)
            .find(|(r, _)| r.contains(chunk))
            .map(|e| e.1);
        self.prune();
        at
    }

    /// Forgets `range` (cancelled, choked, or received elsewhere).
    pub fn remove(&mut self, range: ChunkRange) {
        self.chunks.clear(range);
        self.prune();
    }

    /// Forgets everything; returns what was outstanding.
    pub fn clear(&mut self) -> Binmap {
        self.order.clear();
        std::mem::take(&mut self.chunks)
    }

    /// When the oldest outstanding request was sent.
    pub fn oldest(&self) -> Option<Instant> {
        self.order.front().map(|e| e.1)
    }

    /// Takes out the chunks of requests older than `timeout`, appending
    /// their still-outstanding runs to `expired`.
    pub fn expire(&mut self, now: Instant, timeout: Duration, expired: &mut Vec<ChunkRange>) {
        while let Some(&(range, at)) = self.order.front() {
            if now.saturating_since(at) < timeout {
                break;
            }
            self.order.pop_front();
            let runs: Vec<ChunkRange> = self.chunks.filled_runs_in(range).collect();
            for r in runs {
                self.chunks.clear(r);
                expired.push(r);
            }
        }
        self.prune();
    }

    /// Drops ranges at the front with nothing outstanding left.
    fn prune(&mut self) {
        while let Some(&(range, _)) = self.order.front() {
            if self.chunks.is_empty_range(range) {
                self.order.pop_front();
            } else {
                break;
            }
        }
        if self.chunks.is_empty() {
            self.order.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: u64, b: u64) -> ChunkRange {
        ChunkRange::new(a, b).unwrap()
    }

    #[test]
    fn receive_expire_and_prune() {
        let t0 = Instant::from_micros(1_000);
        let mut o = Outstanding::default();
        o.add(r(0, 3), t0);
        o.add(r(10, 11), t0 + Duration::from_millis(100));
        assert_eq!(o.count(), 6);
        assert_eq!(o.received(ChunkIndex(1)), Some(t0));
        assert_eq!(o.received(ChunkIndex(1)), None);
        let mut expired = Vec::new();
        o.expire(
            t0 + Duration::from_millis(50),
            Duration::from_millis(50),
            &mut expired,
        );
        assert_eq!(expired, [r(0, 0), r(2, 3)]);
        assert_eq!(o.oldest(), Some(t0 + Duration::from_millis(100)));
        o.remove(r(10, 11));
        assert_eq!(o.count(), 0);
        assert_eq!(o.oldest(), None);
    }
}
