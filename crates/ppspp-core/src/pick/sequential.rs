//! Sequential picking: the lowest chunks first, from the playhead.
//!
//! The simplest streaming policy (and libswift's default for VoD): request
//! the fresh chunks the peer has, in order, starting at the playback
//! position when something plays and at chunk 0 otherwise, as contiguous
//! runs. Past the end it wraps around to the chunks before the playhead, so
//! that a whole download still completes. In the end game it walks the
//! end-game chunks in the same order, nearest the playhead first.

use rand::Rng;

use super::candidates::Candidates;
use super::{PickView, Picker};
use crate::binmap::Binmap;
use crate::chunk::{ChunkRange, MAX_CHUNK_INDEX};

/// Picks the lowest fresh chunks from the playhead (see the module
/// documentation). Stateless and deterministic: it ignores the generator.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sequential;

impl Sequential {
    /// The sequential picker.
    pub fn new() -> Self {
        Sequential
    }
}

impl Picker for Sequential {
    fn name(&self) -> &'static str {
        "sequential"
    }

    fn pick(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        _rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    ) {
        let end = view
            .chunk_count
            .map_or(MAX_CHUNK_INDEX + 1, |n| n.min(MAX_CHUNK_INDEX + 1));
        if max_chunks == 0 || end == 0 {
            return;
        }
        let start = view.playhead.map_or(0, |p| p.0);
        let none = Binmap::new();
        // Wrapping covers every chunk, so taking nothing means nothing is fresh.
        if Candidates::fresh(view, &none).take_wrapping(start, end, max_chunks, out) == 0
            && Candidates::end_game_open(view)
        {
            Candidates::end_game(view, &none).take_wrapping(start, end, max_chunks, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_sets::{map, Sets};
    use super::*;

    fn pick(s: &Sets, max_chunks: u64) -> Vec<(u64, u64)> {
        s.pick_with(&mut Sequential::new(), max_chunks, 1)
    }

    #[test]
    fn picks_lowest_fresh_runs_within_budget() {
        let mut s = Sets::uncounted(&[(0, 99)]);
        s.have = map(&[(0, 9), (15, 15)]);
        s.requested = map(&[(20, 24)]);
        assert_eq!(pick(&s, 20), [(10, 14), (16, 19), (25, 35)]);
        assert_eq!(pick(&s, 3), [(10, 12)]);
        assert_eq!(pick(&s, 0), []);
    }

    #[test]
    fn never_picks_what_the_peer_lacks_or_past_the_end() {
        let mut s = Sets::uncounted(&[(5, 6), (50, 2000)]);
        s.chunk_count = Some(60);
        assert_eq!(pick(&s, 100), [(5, 6), (50, 59)]);
        s.chunk_count = Some(0);
        assert_eq!(pick(&s, 100), []);
        s.chunk_count = None;
        assert_eq!(pick(&s, 4), [(5, 6), (50, 51)]);
    }

    #[test]
    fn starts_at_the_playhead_and_wraps() {
        let mut s = Sets::uncounted(&[(0, 99)]);
        s.playhead = Some(90);
        assert_eq!(pick(&s, 15), [(90, 99), (0, 4)]);
        s.have = map(&[(0, 89)]);
        assert_eq!(pick(&s, 15), [(90, 99)]);
        s.playhead = Some(5000);
        assert_eq!(pick(&s, 3), [(90, 92)]);
    }

    #[test]
    fn end_game_only_when_nothing_fresh() {
        let mut s = Sets::uncounted(&[(0, 9)]);
        s.requested = map(&[(0, 8)]);
        s.from_peer = map(&[(0, 3)]);
        // Chunk 9 is fresh: no end game yet.
        assert_eq!(pick(&s, 10), [(9, 9)]);
        s.have = map(&[(9, 9)]);
        // Nothing fresh here, but chunks 10-999 are asked of nobody: not
        // the end game yet.
        assert_eq!(pick(&s, 10), []);
        s.requested = map(&[(0, 8), (10, 999)]);
        // Nothing fresh anywhere: chunks asked from others, never from
        // this peer.
        assert_eq!(pick(&s, 10), [(4, 8)]);
        assert_eq!(pick(&s, 2), [(4, 5)]);
        s.from_peer = map(&[(0, 8)]);
        assert_eq!(pick(&s, 10), []);
    }

    #[test]
    fn end_game_starts_at_the_playhead() {
        let mut s = Sets::uncounted(&[(0, 99)]);
        s.chunk_count = Some(100);
        s.requested = map(&[(0, 99)]);
        s.from_peer = map(&[(50, 59)]);
        s.playhead = Some(55);
        assert_eq!(pick(&s, 8), [(60, 67)]);
    }
}
