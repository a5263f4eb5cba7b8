//! DATA we sent and have not seen acknowledged: round-trip samples and loss
//! detection for the sender's congestion controller.

use std::collections::VecDeque;
use std::time::Duration;

use crate::chunk::ChunkRange;
use crate::time::Instant;

/// Later acknowledgements that make an unacknowledged DATA count as lost
/// (as TCP's three duplicate ACKs, RFC 5681 §3.2).
const REORDER_THRESHOLD: usize = 3;

#[derive(Clone, Copy, Debug)]
struct Sent {
    chunk: u64,
    bytes: u64,
    at: Instant,
    acked: bool,
}

/// What an ACK did to the flight.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckOutcome {
    /// Bytes newly acknowledged.
    pub acked_bytes: u64,
    /// Round trip of the newest DATA acknowledged.
    pub rtt: Option<Duration>,
    /// Bytes now counted lost because later DATA was acknowledged.
    pub lost_bytes: u64,
}

/// The DATA in flight to one peer, oldest first.
#[derive(Debug, Default)]
pub struct InFlight {
    queue: VecDeque<Sent>,
    bytes: u64,
}

impl InFlight {
    /// Bytes sent and neither acknowledged nor lost.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// When the oldest DATA in flight was sent.
    pub fn oldest(&self) -> Option<Instant> {
        self.queue.iter().find(|s| !s.acked).map(|s| s.at)
    }

    /// The DATA in flight nearest `chunk` on either side, `chunk` itself
    /// excluded (a copy of it in flight may be the one that was lost):
    /// the chunks the peer will hold once this flight arrives, which is
    /// what decides the uncle hashes the next DATA needs (see
    /// `Upload::vouched`).
    pub fn nearest_unacked(&self, chunk: u64) -> (Option<u64>, Option<u64>) {
        let mut left = None;
        let mut right = None;
        for s in self.queue.iter().filter(|s| !s.acked) {
            if s.chunk < chunk {
                left = left.max(Some(s.chunk));
            } else if s.chunk > chunk {
                right = Some(right.map_or(s.chunk, |r: u64| r.min(s.chunk)));
            }
        }
        (left, right)
    }

    /// A DATA for `chunk` of `bytes` went out at `now`.
    pub fn on_sent(&mut self, chunk: u64, bytes: u64, now: Instant) {
        self.queue.push_back(Sent {
            chunk,
            bytes,
            at: now,
            acked: false,
        });
        self.bytes += bytes;
    }

    /// An ACK for `range` arrived at `now`.
    pub fn on_ack(&mut self, range: ChunkRange, now: Instant) -> AckOutcome {
        let mut out = AckOutcome::default();
        let mut newest: Option<Instant> = None;
        for s in self.queue.iter_mut().filter(|s| !s.acked) {
            if range.first().0 <= s.chunk && s.chunk <= range.last().0 {
                s.acked = true;
                out.acked_bytes += s.bytes;
                newest = Some(newest.map_or(s.at, |n| n.max(s.at)));
            }
        }
        self.bytes -= out.acked_bytes;
        out.rtt = newest.map(|at| now.saturating_since(at));
        out.lost_bytes = self.detect_losses();
        out
    }

    /// The peer announced `range` (HAVE): DATA of it in flight needs no
    /// ACK any more. libswift answers a DATA it already has with a HAVE,
    /// not an ACK; waiting for that ACK ended in a retransmission timeout.
    /// No round-trip sample and no loss inference: a HAVE says nothing of
    /// when or whether our DATA arrived. Returns the bytes taken out.
    pub fn on_have(&mut self, range: ChunkRange) -> u64 {
        if self.bytes == 0 {
            return 0;
        }
        let mut freed = 0;
        for s in self.queue.iter_mut().filter(|s| !s.acked) {
            if range.first().0 <= s.chunk && s.chunk <= range.last().0 {
                s.acked = true;
                freed += s.bytes;
            }
        }
        self.bytes -= freed;
        freed
    }

    /// The retransmission timer: once the oldest DATA in flight is older
    /// than `rto`, the whole flight is declared lost; returns the bytes (0:
    /// the timer has not fired). One expiry is one loss episode: the ACK
    /// clock has stopped, and whatever is still in flight was sent before
    /// the timer fired (after an RTO, TCP resends from the first
    /// unacknowledged byte, RFC 5681 §3.1, and backs off once, RFC 6298
    /// §5.5). Expiring the flight in slices, each an RTO after the last and
    /// each doubling it, stalled a channel for the sum of the doubled
    /// timeouts when a whole window was lost at once: 11–17 s against
    /// libswift, whose socket buffer overflowed at 100 MB over loopback.
    pub fn on_rto(&mut self, now: Instant, rto: Duration) -> u64 {
        match self.oldest() {
            Some(at) if now.saturating_since(at) >= rto => self.expire(now, Duration::ZERO),
            _ => 0,
        }
    }

    /// Declares lost every DATA older than `rto`; returns the bytes.
    pub fn expire(&mut self, now: Instant, rto: Duration) -> u64 {
        let mut lost = 0;
        while let Some(&s) = self.queue.front() {
            if !s.acked && now.saturating_since(s.at) < rto {
                break;
            }
            self.queue.pop_front();
            if !s.acked {
                lost += s.bytes;
            }
        }
        self.bytes -= lost;
        lost
    }

    fn detect_losses(&mut self) -> u64 {
        let mut lost = 0;
        while let Some(front) = self.queue.front() {
            if front.acked {
                self.queue.pop_front();
                continue;
            }
            let later_acked = self
                .queue
                .iter()
                .skip(1)
                .filter(|s| s.acked)
                .take(REORDER_THRESHOLD)
                .count();
            if later_acked < REORDER_THRESHOLD {
                break;
            }
            lost += front.bytes;
            self.queue.pop_front();
        }
        self.bytes -= lost;
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtt_and_reordering_loss() {
        let t = |ms| Instant::from_micros(ms * 1000);
        let mut f = InFlight::default();
        for c in 0..6 {
            f.on_sent(c, 100, t(c));
        }
        assert_eq!(f.bytes(), 600);
        let a = f.on_ack(ChunkRange::single(1u64).unwrap(), t(20));
        assert_eq!(
            a,
            AckOutcome {
                acked_bytes: 100,
                rtt: Some(Duration::from_millis(19)),
                lost_bytes: 0
            }
        );
        f.on_ack(ChunkRange::single(2u64).unwrap(), t(21));
        let a = f.on_ack(ChunkRange::new(3u64, 4u64).unwrap(), t(22));
        // Chunk 0 was passed by three acknowledged DATA: lost.
        assert_eq!(a.lost_bytes, 100);
        assert_eq!(f.bytes(), 100);
        assert_eq!(f.oldest(), Some(t(5)));
        assert_eq!(f.expire(t(1000), Duration::from_millis(500)), 100);
        assert_eq!(f.bytes(), 0);
    }

    #[test]
    fn a_timeout_takes_the_whole_flight() {
        let t = |ms: u64| Instant::from_micros(ms * 1000);
        let rto = Duration::from_millis(200);
        let mut f = InFlight::default();
        for (c, at) in [(0, 0), (1, 10), (2, 150), (3, 190)] {
            f.on_sent(c, 100, t(at));
        }
        f.on_ack(ChunkRange::single(1u64).unwrap(), t(20));
        assert_eq!(f.on_rto(t(199), rto), 0, "not yet");
        // The oldest has waited an RTO: it and the DATA sent after it go,
        // not just those an RTO old.
        assert_eq!(f.on_rto(t(200), rto), 300);
        assert_eq!(f.bytes(), 0);
        assert_eq!(f.oldest(), None);
        // HAVE takes DATA out of the flight without a sample or a loss.
        assert_eq!(f.nearest_unacked(0), (None, None));
        f.on_sent(4, 100, t(300));
        f.on_sent(5, 100, t(301));
        assert_eq!(f.on_have(ChunkRange::single(5u64).unwrap()), 100);
        assert_eq!(f.bytes(), 100);
        assert_eq!(f.oldest(), Some(t(300)));
        assert_eq!(f.nearest_unacked(4), (None, None), "itself, and 5 is acked");
        f.on_sent(9, 100, t(302));
        f.on_sent(7, 100, t(303));
        assert_eq!(f.nearest_unacked(6), (Some(4), Some(7)));
        assert_eq!(f.nearest_unacked(9), (Some(7), None));
    }
}
