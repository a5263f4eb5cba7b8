//! The chunks we have requested from one peer and not yet received.

use std::collections::{BTreeSet, VecDeque};
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
    /// Ranges with a deadline (urgent ones), by deadline: (when, first,
    /// last chunk).
    deadlines: BTreeSet<(Instant, u64, u64)>,
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

    /// Records a REQUEST for `range` sent at `now`, late after `deadline`
    /// if it has one.
    pub fn add(&mut self, range: ChunkRange, now: Instant, deadline: Option<Instant>) {
        self.chunks.set(range);
        self.order.push_back((range, now));
        if let Some(d) = deadline {
            self.deadlines.insert((d, range.first().0, range.last().0));
        }
    }

    /// The earliest deadline still recorded.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|e| e.0)
    }

    /// Appends to `late` the still-outstanding runs of ranges whose
    /// deadline passed, and forgets those deadlines. The chunks stay
    /// outstanding here — a late answer is still welcome, and this peer is
    /// not asked for them again — while the caller gives them to other
    /// peers. Returns how many chunks were late.
    pub fn pass_deadlines(&mut self, now: Instant, late: &mut Vec<ChunkRange>) -> u64 {
        let mut n = 0;
        while let Some(&(at, first, last)) = self.deadlines.first() {
            if at > now {
                break;
            }
            self.deadlines.pop_first();
            let Some(range) = ChunkRange::new(first, last) else {
                continue;
            };
            for run in self.chunks.filled_runs_in(range) {
                n += run.len();
                late.push(run);
            }
        }
        n
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
        self.deadlines.clear();
        std::mem::take(&mut self.chunks)
    }

    /// When the oldest outstanding request was sent.
    pub fn oldest(&self) -> Option<Instant> {
        self.order.front().map(|e| e.1)
    }

    /// Takes out the chunks of requests older than `timeout`, appending
    /// their still-outstanding runs to `expired`; returns when the newest
    /// of the requests that expired with chunks outstanding was sent.
    pub fn expire(
        &mut self,
        now: Instant,
        timeout: Duration,
        expired: &mut Vec<ChunkRange>,
    ) -> Option<Instant> {
        let mut newest = None;
        while let Some(&(range, at)) = self.order.front() {
            if now.saturating_since(at) < timeout {
                break;
            }
            self.order.pop_front();
            let runs: Vec<ChunkRange> = self.chunks.filled_runs_in(range).collect();
            for r in runs {
                self.chunks.clear(r);
                expired.push(r);
                newest = Some(at);
            }
        }
        self.prune();
        newest
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
            self.deadlines.clear();
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
        o.add(r(0, 3), t0, None);
        o.add(r(10, 11), t0 + Duration::from_millis(100), None);
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

    #[test]
    fn late_requests_stay_outstanding_but_are_handed_out() {
        let t0 = Instant::from_micros(1_000);
        let mut o = Outstanding::default();
        o.add(r(0, 9), t0, Some(t0 + Duration::from_millis(300)));
        o.add(r(20, 29), t0, None);
        o.add(r(10, 19), t0, Some(t0 + Duration::from_millis(100)));
        assert_eq!(o.next_deadline(), Some(t0 + Duration::from_millis(100)));
        o.received(ChunkIndex(12));
        let mut late = Vec::new();
        assert_eq!(
            o.pass_deadlines(t0 + Duration::from_millis(99), &mut late),
            0
        );
        assert_eq!(
            o.pass_deadlines(t0 + Duration::from_millis(100), &mut late),
            9
        );
        assert_eq!(late, [r(10, 11), r(13, 19)]);
        // Still outstanding: a late answer is taken, no second hand-out.
        assert_eq!(o.count(), 29);
        assert_eq!(o.received(ChunkIndex(13)), Some(t0));
        assert_eq!(
            o.pass_deadlines(t0 + Duration::from_millis(200), &mut late),
            0
        );
        assert_eq!(o.next_deadline(), Some(t0 + Duration::from_millis(300)));
        o.clear();
        assert_eq!(o.next_deadline(), None);
    }
}
