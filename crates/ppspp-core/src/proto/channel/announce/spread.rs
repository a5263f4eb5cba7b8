//! A live source's fresh chunks announced to its served peers in turns, so
//! that every chunk leaves the source about equally often (RFC 7574 §3.2
//! leaves the timing of HAVE open).
//!
//! A live viewer asks the source for what the source announced and it
//! lacks, the newest first, each from a pseudo-random entry point
//! (`pick/live.rs`). Each of the source's served peers gets well under the
//! stream's rate from it, so each asks for part of every segment, and
//! which part is left to chance: the copies of a chunk that leave the
//! source are a sum of independent draws. Traced in `live-500` (500
//! viewers, 90 s, seed 1; `RUST_LOG=ppspp_core::proto::channel=trace`):
//! the source sent 4.3 copies of a chunk in mean, but 2.2 % of chunks went
//! to one viewer within a second of being made, and 0.02 % to none; a
//! chunk sent once reached 90 % of viewers in 4.5 s at p95 against 2.8 s
//! for one sent four times. With the lag a viewer keeps (about 4 s), each
//! such chunk made tens of viewers stall at once.
//!
//! So the source announces each segment of [`SEGMENT`] chunks to each of
//! its `of` unchoked peers in `of` parts, `share` of them at once, and the
//! rest [`HOLD`] later: every part goes first to `share` peers, and the
//! part a peer hears first turns with the segment, so no peer always gets
//! a segment's head. This is BitTorrent's super-seeding (BEP 16: a seed
//! shows each peer only some pieces, so its upload goes to pieces nobody
//! has) bounded in time: after the hold every peer hears of every chunk,
//! and a peer that missed a chunk elsewhere still gets it from the source.

use std::time::Duration;

use crate::chunk::ChunkRange;

/// The unit announced in parts: the live picker's segment, a munro of RFC
/// 7574 §6.1.2's default 32 chunks.
pub(crate) const SEGMENT: u64 = crate::pick::live::SEGMENT;

/// How long the chunks of a segment not in a peer's first parts wait before
/// the source announces them to it: long enough for the peers that heard
/// first to ask (the request round trip to the source is a few hundred
/// milliseconds under load), short of the lag a live viewer plays at.
pub(crate) const HOLD: Duration = Duration::from_millis(1000);

/// Where one served peer stands among the source's unchoked peers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spread {
    /// This peer's place among them, from 0.
    pub rank: u32,
    /// How many unchoked peers the source serves (at least 2).
    pub of: u32,
    /// How many of a segment's `of` parts each peer hears of at once (1
    /// to `of`).
    pub first: u32,
}

impl Spread {
    /// The place of the `rank`th of `of` unchoked peers, each hearing
    /// `share` (0 to 1) of a segment first; `None` when there is nothing to
    /// spread (fewer than two peers, or a share that covers everything).
    pub fn new(rank: usize, of: usize, share: f64) -> Option<Spread> {
        let of = u32::try_from(of).ok()?;
        let rank = u32::try_from(rank).ok()?;
        if of < 2 || rank >= of || !(share > 0.0 && share < 1.0) {
            return None;
        }
        let first = ((f64::from(of) * share).round() as u32).clamp(1, of);
        (first < of).then_some(Spread { rank, of, first })
    }

    /// Whether this peer hears of `chunk` at once.
    pub fn first_hears(&self, chunk: u64) -> bool {
        let segment = chunk / SEGMENT;
        let part = (chunk % SEGMENT) * u64::from(self.of) / SEGMENT;
        let of = u64::from(self.of);
        // The parts this peer hears first start at its rank, moved on by
        // one per segment.
        let start = (u64::from(self.rank) + segment) % of;
        (part + of - start) % of < u64::from(self.first)
    }

    /// Splits `range` into the runs this peer hears of at once and the runs
    /// it hears of after the hold, in order.
    pub fn split(&self, range: ChunkRange) -> (Vec<ChunkRange>, Vec<ChunkRange>) {
        let (mut now, mut later) = (Vec::new(), Vec::new());
        let mut c = range.first().0;
        while c <= range.last().0 {
            let first = self.first_hears(c);
            let mut end = c;
            while end < range.last().0 && self.first_hears(end + 1) == first {
                end += 1;
            }
            if let Some(run) = ChunkRange::new(c, end) {
                if first { &mut now } else { &mut later }.push(run);
            }
            c = end + 1;
        }
        (now, later)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: u64, b: u64) -> ChunkRange {
        ChunkRange::new(a, b).unwrap()
    }

    #[test]
    fn nothing_to_spread_with_one_peer_or_a_full_share() {
        assert_eq!(Spread::new(0, 1, 0.5), None);
        assert_eq!(Spread::new(0, 8, 1.0), None);
        assert_eq!(Spread::new(0, 8, 0.0), None);
        assert_eq!(Spread::new(8, 8, 0.5), None, "rank out of range");
        assert_eq!(Spread::new(0, 8, 0.99), None, "rounds to everything");
        assert_eq!(
            Spread::new(3, 8, 0.5),
            Some(Spread {
                rank: 3,
                of: 8,
                first: 4
            })
        );
    }

    #[test]
    fn every_chunk_goes_first_to_the_same_number_of_peers() {
        for of in 2..=16usize {
            for share in [0.25, 0.5, 0.625] {
                let peers: Vec<Spread> =
                    (0..of).filter_map(|k| Spread::new(k, of, share)).collect();
                if peers.len() != of {
                    continue;
                }
                let first = peers[0].first as usize;
                for chunk in 0..SEGMENT * 5 {
                    let n = peers.iter().filter(|p| p.first_hears(chunk)).count();
                    assert_eq!(n, first, "chunk {chunk}, {of} peers, share {share}");
                }
            }
        }
    }

    #[test]
    fn a_peers_first_part_turns_with_the_segment() {
        let p = Spread::new(0, 4, 0.25).unwrap();
        let heads: Vec<bool> = (0..4).map(|s| p.first_hears(s * SEGMENT)).collect();
        assert_eq!(heads, [true, false, false, false]);
        // 8 chunks per part; segment 1's first part for rank 0 is part 1.
        assert!(p.first_hears(SEGMENT + 8) && p.first_hears(SEGMENT + 15));
        assert!(!p.first_hears(SEGMENT + 16));
    }

    #[test]
    fn split_covers_the_range_in_runs() {
        let p = Spread::new(1, 4, 0.5).unwrap();
        // Segment 0: rank 1 hears parts 1 and 2 (chunks 8-23) first.
        let (now, later) = p.split(r(0, 31));
        assert_eq!(now, vec![r(8, 23)]);
        assert_eq!(later, vec![r(0, 7), r(24, 31)]);
        // Across a segment's end: segment 1 starts at part 2 (chunks 48-63).
        let (now, later) = p.split(r(20, 40));
        assert_eq!(now, vec![r(20, 23)]);
        assert_eq!(later, vec![r(24, 40)]);
    }
}
