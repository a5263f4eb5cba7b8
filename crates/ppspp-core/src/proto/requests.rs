//! The chunks we have requested from one peer and not yet received.

use std::collections::{BTreeSet, VecDeque};
use std::time::Duration;

use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::time::Instant;

/// How many ranges given up without an answer `Outstanding` remembers, to
/// know a request for them again as ambiguous.
const FORGOTTEN: usize = 64;

/// One REQUEST as recorded: its range, when it was sent, the request
/// sequence number of its first chunk (chunks are numbered in the order
/// they were asked for), and whether it asked again for chunks an earlier
/// request of ours may still bring.
#[derive(Debug, Clone, Copy)]
struct Asked {
    range: ChunkRange,
    at: Instant,
    seq: u64,
    ambiguous: bool,
}

impl Asked {
    /// The sequence number of `chunk`, one of the range's.
    fn seq_of(&self, chunk: ChunkIndex) -> u64 {
        self.seq + (chunk.0 - self.range.first().0)
    }
}

/// What an arriving chunk answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// When the request for it was sent.
    pub sent: Instant,
    /// Whether the answer can be timed: false when we had asked the peer
    /// for the chunk before and given up, so the chunk may answer the
    /// older request (Karn's algorithm, RFC 6298 §3: no round-trip sample,
    /// and no conclusion about what the peer passed over).
    pub timed: bool,
}

/// Outstanding requests to one peer, with when each range was asked for.
#[derive(Debug, Default)]
pub struct Outstanding {
    /// Chunks requested and not yet received, cancelled or timed out.
    chunks: Binmap,
    /// Ranges in the order they were requested. They never overlap: a
    /// chunk asked again leaves its older request.
    order: VecDeque<Asked>,
    /// The chunks `order`'s ranges cover.
    covered: Binmap,
    /// The sequence number the next requested chunk gets.
    next_seq: u64,
    /// The highest sequence number of a chunk the peer answered: the peer
    /// serves requests in the order asked (`UploadQueue` is a FIFO), so
    /// chunks asked well before it and still missing were lost.
    answered_seq: Option<u64>,
    /// The latest ranges given up here without an answer (at most
    /// [`FORGOTTEN`]): the peer may still send them.
    forgotten: VecDeque<ChunkRange>,
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
        if !self.covered.is_empty_range(range) {
            self.uncover(range);
        }
        self.covered.set(range);
        self.chunks.set(range);
        let ambiguous = self.forgotten.iter().any(|f| f.intersect(range).is_some());
        self.order.push_back(Asked {
            range,
            at: now,
            seq: self.next_seq,
            ambiguous,
        });
        self.next_seq += range.len();
        if let Some(d) = deadline {
            self.deadlines.insert((d, range.first().0, range.last().0));
        }
    }

    /// Cuts `range` out of the requests recorded (it is asked again).
    fn uncover(&mut self, range: ChunkRange) {
        let mut kept = VecDeque::with_capacity(self.order.len() + 1);
        for a in self.order.drain(..) {
            let Some(cut) = a.range.intersect(range) else {
                kept.push_back(a);
                continue;
            };
            let (first, last) = (a.range.first().0, a.range.last().0);
            if cut.first().0 > first {
                if let Some(left) = ChunkRange::new(first, cut.first().0 - 1) {
                    kept.push_back(Asked { range: left, ..a });
                }
            }
            if cut.last().0 < last {
                if let Some(right) = ChunkRange::new(cut.last().0 + 1, last) {
                    let seq = a.seq_of(right.first());
                    kept.push_back(Asked {
                        range: right,
                        seq,
                        ..a
                    });
                }
            }
        }
        self.order = kept;
        self.covered.clear(range);
    }

    /// Remembers `run`, given up without an answer.
    fn forget(&mut self, run: ChunkRange) {
        if self.forgotten.len() == FORGOTTEN {
            self.forgotten.pop_front();
        }
        self.forgotten.push_back(run);
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

    /// `chunk` arrived. Returns what it answered, if we asked for it.
    pub fn received(&mut self, chunk: ChunkIndex) -> Option<Answer> {
        if !self.chunks.contains(chunk) {
            return None;
        }
        self.chunks.clear_chunk(chunk);
        // Chunks mostly arrive in the order asked for: found near the front.
        let asked = self.order.iter().find(|a| a.range.contains(chunk)).copied();
        if let Some(a) = asked.filter(|a| !a.ambiguous) {
            let seq = a.seq_of(chunk);
            self.answered_seq = Some(self.answered_seq.map_or(seq, |s| s.max(seq)));
        }
        self.prune();
        asked.map(|a| Answer {
            sent: a.at,
            timed: !a.ambiguous,
        })
    }

    /// Takes out the chunks the peer passed over: asked at least
    /// `threshold` chunks before the newest one it answered. The peer
    /// serves in the order asked, so these were lost (the REQUEST or the
    /// DATA datagram); waiting for the request timeout would hold them for
    /// at least 500 ms more. This is TCP's duplicate-ACK threshold (RFC
    /// 5681 §3.2, DupThresh 3) and RACK's idea of inferring loss from later
    /// deliveries (RFC 8985 §6.2) in request order. Appends their runs to
    /// `lost`; returns when the newest request that lost chunks was sent.
    pub fn passed_over(&mut self, threshold: u64, lost: &mut Vec<ChunkRange>) -> Option<Instant> {
        let answered = self.answered_seq?;
        let before = lost.len();
        let mut newest = None;
        for a in &self.order {
            if a.seq + threshold > answered {
                break;
            }
            // The range's chunks up to `answered - threshold`.
            let span = (answered - threshold - a.seq).min(a.range.len() - 1);
            let Some(part) = ChunkRange::new(a.range.first().0, a.range.first().0 + span) else {
                continue;
            };
            for run in self.chunks.filled_runs_in(part) {
                lost.push(run);
                newest = Some(a.at);
            }
        }
        for &run in &lost[before..] {
            self.chunks.clear(run);
            self.forget(run);
        }
        self.prune();
        newest
    }

    /// Forgets `range`, received from another peer (and CANCELled here).
    pub fn remove(&mut self, range: ChunkRange) {
        self.chunks.clear(range);
        self.prune();
    }

    /// Forgets everything (the peer voided our requests with CHOKE);
    /// returns what was outstanding.
    pub fn clear(&mut self) -> Binmap {
        self.order.clear();
        self.covered = Binmap::new();
        self.deadlines.clear();
        std::mem::take(&mut self.chunks)
    }

    /// When the oldest outstanding request was sent.
    pub fn oldest(&self) -> Option<Instant> {
        self.order.front().map(|a| a.at)
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
        while let Some(&Asked { range, at, .. }) = self.order.front() {
            if now.saturating_since(at) < timeout {
                break;
            }
            self.order.pop_front();
            self.covered.clear(range);
            let runs: Vec<ChunkRange> = self.chunks.filled_runs_in(range).collect();
            for r in runs {
                self.chunks.clear(r);
                self.forget(r);
                expired.push(r);
                newest = Some(at);
            }
        }
        self.prune();
        newest
    }

    /// Drops ranges at the front with nothing outstanding left.
    fn prune(&mut self) {
        while let Some(a) = self.order.front() {
            if self.chunks.is_empty_range(a.range) {
                self.covered.clear(a.range);
                self.order.pop_front();
            } else {
                break;
            }
        }
        if self.chunks.is_empty() {
            self.order.clear();
            self.covered = Binmap::new();
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
        assert_eq!(o.received(ChunkIndex(1)).map(|a| a.sent), Some(t0));
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
    fn a_chunk_passed_over_by_three_later_answers_is_lost() {
        let t0 = Instant::from_micros(1_000);
        let t1 = t0 + Duration::from_millis(10);
        let mut o = Outstanding::default();
        o.add(r(0, 3), t0, None);
        o.add(r(4, 7), t1, None);
        let mut lost = vec![r(100, 100)];
        assert_eq!(o.passed_over(3, &mut lost), None);
        for c in [0, 2, 3] {
            o.received(ChunkIndex(c));
        }
        // Two answered after chunk 1: not yet.
        assert_eq!(o.passed_over(3, &mut lost), None);
        o.received(ChunkIndex(5));
        // Chunk 4 is one behind; chunk 1 three behind.
        assert_eq!(o.passed_over(3, &mut lost), Some(t0));
        assert_eq!(lost, [r(100, 100), r(1, 1)]);
        assert_eq!(o.count(), 3);
        assert!(!o.chunks().contains(ChunkIndex(1)));
        // Asked again of the same peer: it may answer the first request,
        // so the answer is not timed and says nothing of what it passed.
        let t2 = t0 + Duration::from_millis(30);
        o.add(r(1, 1), t2, None);
        let answer = Answer {
            sent: t2,
            timed: false,
        };
        assert_eq!(o.received(ChunkIndex(1)), Some(answer));
        lost.clear();
        assert_eq!(o.passed_over(3, &mut lost), None);
        // A fresh request answered moves the mark: chunk 8 was the tenth
        // asked (the second ask of chunk 1 the ninth), so chunks 4 and 6
        // are three or more behind, chunk 7 two.
        o.add(r(8, 9), t2, None);
        assert_eq!(o.received(ChunkIndex(8)).map(|a| a.timed), Some(true));
        assert_eq!(o.passed_over(3, &mut lost), Some(t1));
        assert_eq!(lost, [r(4, 4), r(6, 6)]);
        assert_eq!(o.count(), 2);
    }

    #[test]
    fn a_chunk_asked_again_leaves_its_older_request() {
        let t0 = Instant::from_micros(1_000);
        let t1 = t0 + Duration::from_millis(10);
        let mut o = Outstanding::default();
        o.add(r(0, 9), t0, None);
        // Chunks 3-4 time out elsewhere and come back to this peer while
        // the first request still waits (given back by the swarm, say).
        o.chunks.clear(r(3, 4));
        o.add(r(3, 4), t1, None);
        assert_eq!(o.count(), 10);
        // Answers to chunks 5-9 (seq 5-9) pass over nothing asked again:
        // 3-4 were asked tenth and eleventh.
        for c in 5..=9 {
            o.received(ChunkIndex(c));
        }
        let mut lost = Vec::new();
        assert_eq!(o.passed_over(3, &mut lost), Some(t0));
        assert_eq!(lost, [r(0, 2)]);
        assert_eq!(o.received(ChunkIndex(3)).map(|a| a.sent), Some(t1));
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
        assert_eq!(o.received(ChunkIndex(13)).map(|a| a.sent), Some(t0));
        assert_eq!(
            o.pass_deadlines(t0 + Duration::from_millis(200), &mut late),
            0
        );
        assert_eq!(o.next_deadline(), Some(t0 + Duration::from_millis(300)));
        o.clear();
        assert_eq!(o.next_deadline(), None);
    }
}
