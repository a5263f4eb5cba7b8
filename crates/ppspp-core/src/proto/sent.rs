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
}
