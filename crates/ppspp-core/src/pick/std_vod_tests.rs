use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use super::*;
use crate::chunk::ChunkIndex;
use crate::pick::availability::Availability;
use crate::time::Instant;

fn r(first: u64, last: u64) -> ChunkRange {
    ChunkRange::new(first, last).unwrap()
}

fn map(ranges: &[(u64, u64)]) -> Binmap {
    ranges.iter().map(|&(a, b)| r(a, b)).collect()
}

/// The sets a pick depends on, owned: 1000 chunks, playhead 100, a high
/// window of 10 chunks (100..=109) and a mid window of 20 (110..=129).
struct Sets {
    have: Binmap,
    requested: Binmap,
    from_peer: Binmap,
    peer_has: Binmap,
    availability: Availability,
    playhead: u64,
}

impl Sets {
    fn new() -> Self {
        let mut availability = Availability::new();
        availability.set_chunk_count(1000);
        // This peer and two others have everything, counted chunk by
        // chunk.
        for _ in 0..3 {
            availability.add(r(0, 999));
        }
        Sets {
            have: Binmap::new(),
            requested: Binmap::new(),
            from_peer: Binmap::new(),
            peer_has: map(&[(0, 999)]),
            availability,
            playhead: 100,
        }
    }

    /// Marks `range` requested (as the swarm does, taken too).
    fn request(&mut self, first: u64, last: u64) {
        self.requested.set(r(first, last));
        self.availability.mark_taken(r(first, last));
    }

    fn pick_seeded(&self, max_chunks: u64, seed: u64) -> Vec<(u64, u64)> {
        let view = PickView {
            now: Instant::ZERO,
            chunk_count: Some(1000),
            have: &self.have,
            requested: &self.requested,
            requested_from_peer: &self.from_peer,
            peer_has: &self.peer_has,
            availability: &self.availability,
            peer_counted: true,
            playhead: Some(ChunkIndex(self.playhead)),
            dry: None,
        };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut out = Vec::new();
        StdVod::with_windows(10, 20).pick(&view, max_chunks, &mut rng, &mut out);
        out.iter().map(|r| (r.first().0, r.last().0)).collect()
    }

    fn pick(&self, max_chunks: u64) -> Vec<(u64, u64)> {
        self.pick_seeded(max_chunks, 1)
    }
}

#[test]
fn the_high_set_goes_first_in_order() {
    let mut s = Sets::new();
    s.have = map(&[(102, 103)]);
    assert_eq!(s.pick(5), [(100, 101), (104, 106)]);
}

#[test]
fn the_mid_set_goes_rarest_first_after_the_high_set() {
    let mut s = Sets::new();
    s.request(100, 109);
    // Chunk 120 has one holder fewer than the rest, 125 two fewer.
    s.availability.remove(r(120, 120));
    s.availability.remove(r(125, 125));
    s.availability.remove(r(125, 125));
    assert_eq!(s.pick(1), [(125, 125)]);
    // A rarest chunk extends rightwards into a run, as in rarest-first.
    assert_eq!(s.pick(2), [(125, 126)]);
    s.have.set(r(126, 126));
    assert_eq!(s.pick(3), [(125, 125), (120, 121)]);
    // The rest of the mid set before anything past it.
    let picked = s.pick(30);
    let chunks: u64 = picked.iter().map(|(a, b)| b - a + 1).sum();
    assert_eq!(chunks, 30);
    let mid: u64 = picked
        .iter()
        .filter(|&&(a, b)| a >= 110 && b <= 129)
        .map(|(a, b)| b - a + 1)
        .sum();
    assert_eq!(mid, 19, "all of 110..=129 but 126: {picked:?}");
}

#[test]
fn the_low_set_is_everything_else_rarest_first() {
    let mut s = Sets::new();
    s.request(100, 129);
    s.availability.remove(r(40, 40));
    s.availability.remove(r(700, 700));
    s.availability.remove(r(700, 700));
    // Runs extend rightwards, then leftwards, as in rarest-first.
    assert_eq!(s.pick(2), [(700, 701)]);
    s.have = map(&[(39, 39), (41, 41), (699, 699), (701, 701)]);
    assert_eq!(s.pick(2), [(700, 700), (40, 40)]);
}

#[test]
fn the_end_game_goes_in_order_from_the_playhead() {
    let mut s = Sets::new();
    s.request(0, 999);
    s.from_peer = map(&[(100, 104)]);
    assert_eq!(s.pick(4), [(105, 108)]);
    s.playhead = 998;
    assert_eq!(s.pick(4), [(998, 999), (0, 1)]);
}

#[test]
fn windows_are_cut_at_the_end() {
    let mut s = Sets::new();
    s.playhead = 995;
    assert_eq!(s.pick(5), [(995, 999)]);
    s.playhead = 5000;
    let picked = s.pick(2);
    assert_eq!(
        picked[0],
        (999, 999),
        "a playhead past the end is the last chunk"
    );
    assert_eq!(picked.len(), 2);
}

#[test]
fn picks_are_fresh_disjoint_and_within_budget() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    for round in 0..200 {
        let mut s = Sets::new();
        s.playhead = rng.random_range(0..1000);
        for _ in 0..rng.random_range(0..30) {
            let a = rng.random_range(0..1000);
            let b = (a + rng.random_range(0..40)).min(999);
            match rng.random_range(0..4) {
                0 => s.have.set(r(a, b)),
                1 => s.request(a, b),
                2 => s.peer_has.clear(r(a, b)),
                _ => s.availability.remove(r(a, b)),
            }
        }
        let budget = rng.random_range(1..80);
        let picked = s.pick_seeded(budget, round);
        let mut seen = Binmap::new();
        let mut total = 0;
        for &(a, b) in &picked {
            let range = r(a, b);
            assert!(
                seen.is_empty_range(range),
                "round {round}: {picked:?} overlaps"
            );
            seen.set(range);
            total += range.len();
            assert!(
                s.peer_has.is_filled(range),
                "round {round}: peer lacks {range:?}"
            );
            assert!(
                s.have.is_empty_range(range),
                "round {round}: have {range:?}"
            );
        }
        assert!(total <= budget, "round {round}");
        let fresh = |c: u64| {
            s.peer_has.contains(ChunkIndex(c))
                && !s.have.contains(ChunkIndex(c))
                && !s.requested.contains(ChunkIndex(c))
        };
        let fresh_count = (0..1000).filter(|&c| fresh(c)).count() as u64;
        if fresh_count > 0 {
            assert_eq!(total, budget.min(fresh_count), "round {round}");
            assert!(picked.iter().all(|&(a, b)| (a..=b).all(fresh)));
            // High-set chunks are never passed over for others.
            let high_fresh = (s.playhead..(s.playhead + 10).min(1000))
                .filter(|&c| fresh(c))
                .count() as u64;
            let high_taken = (s.playhead..(s.playhead + 10).min(1000))
                .filter(|&c| seen.contains(ChunkIndex(c)))
                .count() as u64;
            assert_eq!(high_taken, high_fresh.min(budget), "round {round}");
        }
    }
}
