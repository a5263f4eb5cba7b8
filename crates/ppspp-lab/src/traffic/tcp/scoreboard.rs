//! The SACK scoreboard of a TCP sender (RFC 6675 §3): which bytes above the
//! cumulative ACK the receiver reported holding, and the questions RFC
//! 6675's loss recovery asks of them — IsLost() and the pipe estimate.

use std::collections::BTreeMap;

/// RFC 6675's DupThresh: a byte is deemed lost once more than
/// `(DUP_THRESH − 1)·SMSS` bytes above it were SACKed.
pub const DUP_THRESH: u64 = 3;

/// SACKed byte ranges `[start, end)` above the cumulative ACK: disjoint,
/// not adjacent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scoreboard {
    ranges: BTreeMap<u64, u64>,
}

impl Scoreboard {
    /// Records a SACK block, clamped to `[una, max)`: what was sent and
    /// not cumulatively acknowledged (a block outside says nothing).
    pub fn add(&mut self, una: u64, max: u64, block: (u64, u64)) {
        let (mut s, mut e) = (block.0.max(una), block.1.min(max));
        if s >= e {
            return;
        }
        if let Some((&ps, &pe)) = self.ranges.range(..=s).next_back() {
            if pe >= s {
                self.ranges.remove(&ps);
                s = ps;
                e = e.max(pe);
            }
        }
        while let Some((&ns, &ne)) = self.ranges.range(s..).next() {
            if ns > e {
                break;
            }
            self.ranges.remove(&ns);
            e = e.max(ne);
        }
        self.ranges.insert(s, e);
    }

    /// Forgets what the cumulative ACK `una` now covers.
    pub fn advance(&mut self, una: u64) {
        while let Some((&s, &e)) = self.ranges.first_key_value() {
            if s >= una {
                break;
            }
            self.ranges.remove(&s);
            if e > una {
                self.ranges.insert(una, e);
                break;
            }
        }
    }

    /// Forgets everything (after a retransmission timeout: a receiver may
    /// renege, RFC 2018 §8).
    pub fn clear(&mut self) {
        self.ranges.clear();
    }

    /// Whether nothing is SACKed.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// One past the highest SACKed byte.
    pub fn highest(&self) -> Option<u64> {
        self.ranges.last_key_value().map(|(_, e)| *e)
    }

    /// The SACKed range holding byte `x`, if any.
    pub fn sacked_range(&self, x: u64) -> Option<(u64, u64)> {
        let (&s, &e) = self.ranges.range(..=x).next_back()?;
        (e > x).then_some((s, e))
    }

    /// Where the next SACKed range above `x` begins (the end of the hole
    /// `x` is in).
    pub fn next_sacked(&self, x: u64) -> Option<u64> {
        self.ranges.range(x..).next().map(|(s, _)| *s)
    }

    /// The first byte at or after `x` that is not SACKed.
    pub fn first_unsacked(&self, x: u64) -> u64 {
        self.sacked_range(x).map_or(x, |(_, e)| e)
    }

    /// RFC 6675's IsLost() as a boundary: every unSACKed byte below it has
    /// more than `(DUP_THRESH − 1)·mss` SACKed bytes above it; none at or
    /// above. (Inside a SACKed range the count changes, but those bytes
    /// are SACKed, so the range's start serves.) `None` when nothing is
    /// lost.
    pub fn lost_below(&self, mss: u64) -> Option<u64> {
        let mut above = 0;
        for (&s, &e) in self.ranges.iter().rev() {
            above += e - s;
            if above > (DUP_THRESH - 1) * mss {
                return Some(s);
            }
        }
        None
    }

    /// Bytes of `[a, b)` not SACKed.
    pub fn unsacked_in(&self, a: u64, b: u64) -> u64 {
        if a >= b {
            return 0;
        }
        let mut sacked = 0;
        let first = self.sacked_range(a).map_or(a, |(s, _)| s);
        for (&s, &e) in self.ranges.range(first..b) {
            sacked += e.min(b) - s.max(a);
        }
        b - a - sacked
    }

    /// RFC 6675 §4 SetPipe(): the bytes in flight in `[una, max)` — every
    /// unSACKed byte not deemed lost, plus every unSACKed byte already
    /// retransmitted (below `high_rxt`), each once per count.
    pub fn pipe(&self, una: u64, max: u64, high_rxt: u64, mss: u64) -> u64 {
        let lost = self.lost_below(mss).unwrap_or(una).clamp(una, max);
        self.unsacked_in(lost, max) + self.unsacked_in(una, high_rxt.min(max))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u64 = 1000;

    fn board(blocks: &[(u64, u64)]) -> Scoreboard {
        let mut b = Scoreboard::default();
        for &x in blocks {
            b.add(0, 100 * M, x);
        }
        b
    }

    #[test]
    fn blocks_merge_and_are_clamped_to_what_is_outstanding() {
        let mut b = board(&[(5 * M, 6 * M), (7 * M, 8 * M), (6 * M, 7 * M)]);
        assert_eq!(b.sacked_range(6 * M), Some((5 * M, 8 * M)));
        b.add(10 * M, 20 * M, (9 * M, 25 * M));
        assert_eq!(b.sacked_range(19 * M), Some((10 * M, 20 * M)));
        assert_eq!(b.highest(), Some(20 * M));
        b.advance(6 * M);
        assert_eq!(b.sacked_range(6 * M), Some((6 * M, 8 * M)));
        assert_eq!(b.sacked_range(5 * M), None);
        b.advance(30 * M);
        assert!(b.is_empty());
    }

    /// Segment 2 lost, 3 4 5 SACKed: 3 segments above 2 is more than
    /// (DupThresh − 1)·SMSS, so 2 is lost; nothing above 3 is.
    #[test]
    fn is_lost_needs_more_than_two_segments_sacked_above() {
        let two = board(&[(3 * M, 5 * M)]);
        assert_eq!(two.lost_below(M), None);
        let three = board(&[(3 * M, 6 * M)]);
        assert_eq!(three.lost_below(M), Some(3 * M));
        // Holes at 2 and 7; SACKed 3-6 and 8-9: the hole at 7 has one
        // segment above it, the one at 2 has four.
        let two_holes = board(&[(3 * M, 7 * M), (8 * M, 9 * M)]);
        assert_eq!(two_holes.lost_below(M), Some(3 * M));
        assert_eq!(two_holes.first_unsacked(3 * M), 7 * M);
        assert_eq!(two_holes.next_sacked(7 * M), Some(8 * M));
    }

    /// 0-9 sent, 3-6 SACKed: 0-2 have four segments SACKed above them and
    /// are lost, 7-9 are in flight; once 0-2 are retransmitted they count
    /// again.
    #[test]
    fn pipe_counts_the_unsacked_not_lost_and_the_retransmitted() {
        let b = board(&[(3 * M, 7 * M)]);
        assert_eq!(b.unsacked_in(0, 10 * M), 6 * M);
        assert_eq!(b.unsacked_in(4 * M, 8 * M), M);
        assert_eq!(b.pipe(0, 10 * M, 0, M), 3 * M);
        // After retransmitting 0-2 (HighRxt = 3): those count again.
        assert_eq!(b.pipe(0, 10 * M, 3 * M, M), 6 * M);
        // Nothing SACKed: everything outstanding is in flight.
        assert_eq!(Scoreboard::default().pipe(0, 10 * M, 0, M), 10 * M);
    }
}
