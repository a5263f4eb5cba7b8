use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

use super::*;
use crate::chunk::ChunkIndex;
use crate::pick::test_sets::{map, r, Sets};

/// 1000 chunks, all at this peer and two others (counted chunk by chunk),
/// playhead 100: a high window of 10 chunks (100..=109) and a mid window
/// of 20 (110..=129).
fn sets() -> Sets {
    let mut s = Sets::counted(1000, &[(0, 999)]);
    s.availability.add(r(0, 999));
    s.availability.add(r(0, 999));
    s.playhead = Some(100);
    s
}

fn pick_seeded(s: &Sets, max_chunks: u64, seed: u64) -> Vec<(u64, u64)> {
    s.pick_with(&mut StdVod::with_windows(10, 20), max_chunks, seed)
}

fn pick(s: &Sets, max_chunks: u64) -> Vec<(u64, u64)> {
    pick_seeded(s, max_chunks, 1)
}

#[test]
fn the_high_set_goes_first_in_order() {
    let mut s = sets();
    s.have = map(&[(102, 103)]);
    assert_eq!(pick(&s, 5), [(100, 101), (104, 106)]);
}

#[test]
fn the_mid_set_goes_rarest_first_after_the_high_set() {
    let mut s = sets();
    s.request(100, 109);
    // Chunk 120 has one holder fewer than the rest, 125 two fewer.
    s.availability.remove(r(120, 120));
    s.availability.remove(r(125, 125));
    s.availability.remove(r(125, 125));
    assert_eq!(pick(&s, 1), [(125, 125)]);
    // A rarest chunk extends rightwards into a run, as in rarest-first.
    assert_eq!(pick(&s, 2), [(125, 126)]);
    s.have.set(r(126, 126));
    assert_eq!(pick(&s, 3), [(125, 125), (120, 121)]);
    // The rest of the mid set before anything past it.
    let picked = pick(&s, 30);
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
    let mut s = sets();
    s.request(100, 129);
    s.availability.remove(r(40, 40));
    s.availability.remove(r(700, 700));
    s.availability.remove(r(700, 700));
    // Runs extend rightwards, then leftwards, as in rarest-first.
    assert_eq!(pick(&s, 2), [(700, 701)]);
    s.have = map(&[(39, 39), (41, 41), (699, 699), (701, 701)]);
    assert_eq!(pick(&s, 2), [(700, 700), (40, 40)]);
}

#[test]
fn the_end_game_goes_in_order_from_the_playhead() {
    let mut s = sets();
    s.request(0, 999);
    s.from_peer = map(&[(100, 104)]);
    assert_eq!(pick(&s, 4), [(105, 108)]);
    s.playhead = Some(998);
    assert_eq!(pick(&s, 4), [(998, 999), (0, 1)]);
}

#[test]
fn windows_are_cut_at_the_end() {
    let mut s = sets();
    s.playhead = Some(995);
    assert_eq!(pick(&s, 5), [(995, 999)]);
    s.playhead = Some(5000);
    let picked = pick(&s, 2);
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
        let mut s = sets();
        let playhead = rng.random_range(0..1000);
        s.playhead = Some(playhead);
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
        let picked = pick_seeded(&s, budget, round);
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
            let high_fresh = (playhead..(playhead + 10).min(1000))
                .filter(|&c| fresh(c))
                .count() as u64;
            let high_taken = (playhead..(playhead + 10).min(1000))
                .filter(|&c| seen.contains(ChunkIndex(c)))
                .count() as u64;
            assert_eq!(high_taken, high_fresh.min(budget), "round {round}");
        }
    }
}

#[test]
fn windows_are_media_time_at_the_bitrate() {
    // 10 s and 40 s of 1 Mbit/s in 1 KiB chunks: 1220.7 and 4882.8 chunks.
    assert_eq!(StdVod::new(MediaRate::default()).windows(), (1221, 4883));
    let rate = MediaRate {
        chunk_size: crate::chunk::ChunkSize::new(8192).unwrap(),
        bitrate: crate::play::Bitrate(4_000_000),
    };
    assert_eq!(StdVod::new(rate).windows(), (611, 2442));
}

#[test]
fn windows_can_be_set_in_media_time() {
    // 5 s and 20 s of 1 Mbit/s in 1 KiB chunks: 610.4 and 2441.4 chunks.
    let windows = crate::pick::VodWindows {
        high: std::time::Duration::from_secs(5),
        mid: std::time::Duration::from_secs(20),
    };
    assert_eq!(
        StdVod::sized(MediaRate::default(), windows).windows(),
        (611, 2442)
    );
    let swift = crate::pick::SwiftVod::sized(MediaRate::default(), windows);
    assert_eq!(swift.windows(), (611, 2442));
}

fn pick_planned(s: &Sets, picker: &mut StdVod, max: u64, plan: Plan) -> Vec<(u64, u64)> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut out = Vec::new();
    picker.pick_with(&s.view(), max, &mut rng, &mut out, plan);
    out.iter().map(|r| (r.first().0, r.last().0)).collect()
}

#[test]
fn a_plan_may_take_the_back_of_the_high_set_rarest_first() {
    let mut s = sets();
    // 107 has one holder fewer than the rest of the high set.
    s.availability.remove(r(107, 107));
    let plan = Plan {
        high_in_order: 4,
        ..Plan::STANDARD
    };
    let mut picker = StdVod::with_windows(10, 20);
    // The front four in order, then the rarest of the back six.
    assert_eq!(
        pick_planned(&s, &mut picker, 5, plan),
        [(100, 103), (107, 107)]
    );
    // The whole high set before the mid set, each chunk once.
    let picked = pick_planned(&s, &mut picker, 10, plan);
    let mut chunks: Vec<u64> = picked.iter().flat_map(|&(a, b)| a..=b).collect();
    chunks.sort_unstable();
    assert_eq!(chunks, (100..=109).collect::<Vec<_>>(), "{picked:?}");
    // In order from the front: none of the back first.
    let none_in_order = Plan {
        high_in_order: 0,
        ..Plan::STANDARD
    };
    assert_eq!(
        pick_planned(&s, &mut picker, 1, none_in_order),
        [(107, 107)]
    );
    // A front longer than the high set is the standard walk.
    let all = Plan {
        high_in_order: 50,
        ..Plan::STANDARD
    };
    assert_eq!(pick_planned(&s, &mut picker, 5, all), pick(&s, 5));
}
