use super::super::test_sets::{map, r, Sets};
use super::*;
use crate::chunk::ChunkIndex;
use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

fn pick(s: &Sets, max: u64, seed: u64) -> Vec<(u64, u64)> {
    s.pick_with(&mut RarestFirst::new(), max, seed)
}

#[test]
fn picks_only_fresh_chunks_within_budget() {
    let mut s = Sets::counted(1000, &[(0, 999)]);
    s.have = map(&[(0, 99), (500, 599)]);
    s.requested = map(&[(100, 149), (700, 700)]);
    s.from_peer = map(&[(100, 109)]);
    for seed in 0..20 {
        for max in [1, 7, 64, 2000] {
            let picked = pick(&s, max, seed);
            let chunks = s.check(&picked, max);
            assert!(chunks.iter().all(|&c| !s.requested.contains(ChunkIndex(c))));
            assert_eq!(chunks.len() as u64, max.min(1000 - 200 - 51));
        }
    }
    assert!(pick(&s, 0, 1).is_empty());
}

#[test]
fn picks_the_rarest_chunk_and_extends_it() {
    let mut s = Sets::counted(1000, &[(0, 999)]);
    // A second peer has everything but 600 ..= 609: those are the rarest.
    s.availability.add_runs([r(0, 599), r(610, 999)]);
    for seed in 0..20 {
        let picked = pick(&s, 10, seed);
        assert_eq!(picked, [(600, 609)], "seed {seed}");
    }
    // With a larger budget the run grows right, then left.
    assert_eq!(pick(&s, 30, 3), [(600, 629)]);
    // Rightwards first: with the right side short, leftwards too.
    s.have = map(&[(615, 999)]);
    assert_eq!(pick(&s, 30, 3), [(585, 614)]);
}

#[test]
fn common_chunks_are_ranked_by_their_counts() {
    // Every count above the per-count bitsets: the counts themselves rank.
    let mut s = Sets::counted(1000, &[(0, 999)]);
    (0..12).for_each(|_| s.availability.add(r(0, 999)));
    s.availability.remove(r(500, 503));
    (0..3).for_each(|_| s.availability.add(r(0, 499)));
    for seed in 0..8 {
        assert_eq!(pick(&s, 4, seed), [(500, 503)], "seed {seed}");
    }
    // One chunk drops into the bitsets' range: it comes first.
    (0..9).for_each(|_| s.availability.remove(r(77, 77)));
    assert_eq!(s.availability.count(ChunkIndex(77)), 7);
    assert_eq!(pick(&s, 5, 1), [(77, 81)]);
}

#[test]
fn bounds_spread_over_many_values_take_several_passes() {
    // Block b: a chunk the peer lacks counted 1 + b % 5 (the block's bound),
    // and a chunk of the peer's counted 6 or more, but 4 in block 29: the
    // first passes (bounds 1, 2, 3) find only commoner chunks of the peer.
    let blocks = 32u64;
    let peer: Vec<(u64, u64)> = (0..blocks).map(|b| (b * 64 + 1, b * 64 + 1)).collect();
    let mut s = Sets::counted(blocks * 64, &peer);
    for b in 0..blocks {
        let lacking = b * 64 + 2;
        (0..=b % 5).for_each(|_| s.availability.add(r(lacking, lacking)));
        let extra = if b == 29 { 3 } else { 5 + (b * 37) % 11 };
        (0..extra).for_each(|_| s.availability.add(r(b * 64 + 1, b * 64 + 1)));
    }
    assert_eq!(s.availability.count(ChunkIndex(29 * 64 + 1)), 4);
    // A limit above the blocks: the search must find the rarest, not
    // settle.
    for seed in 0..16 {
        let mut picker = RarestFirst::with_search_limit(64);
        let picked = s.pick_with(&mut picker, 1, seed);
        assert_eq!(picked, [(29 * 64 + 1, 29 * 64 + 1)], "seed {seed}");
    }
}

#[test]
fn ties_are_broken_by_the_seeded_generator() {
    let mut s = Sets::counted(4096, &[(0, 4095)]);
    // Single rare chunks, one per 512, each between common ones.
    let rare: Vec<u64> = (0..8).map(|i| i * 512 + 77).collect();
    let mut others = Binmap::new();
    others.set(r(0, 4095));
    rare.iter().for_each(|&c| others.clear_chunk(ChunkIndex(c)));
    s.availability.add_runs(others.filled_runs());
    s.requested = others.clone(); // Only the rare chunks are fresh.
    let mut firsts = Vec::new();
    for seed in 0..32 {
        let picked = pick(&s, 1, seed);
        assert_eq!(picked.len(), 1);
        assert!(rare.contains(&picked[0].0), "{picked:?}");
        assert_eq!(picked, pick(&s, 1, seed), "not deterministic");
        firsts.push(picked[0].0);
    }
    firsts.sort_unstable();
    firsts.dedup();
    assert!(firsts.len() >= 4, "ties hardly vary: {firsts:?}");
    // A bigger budget takes all eight, one range each.
    let mut all = pick(&s, 100, 5);
    all.sort_unstable();
    assert_eq!(all, rare.iter().map(|&c| (c, c)).collect::<Vec<_>>());
}

#[test]
fn rarest_among_candidates_not_among_all_chunks() {
    let mut s = Sets::counted(2048, &[(0, 2047)]);
    let drop = |s: &mut Sets, c: u64, times: u32| {
        (0..times).for_each(|_| s.availability.remove(r(c, c)));
    };
    for _ in 0..10 {
        s.availability.add(r(0, 2047));
    }
    // In every block: a chunk of ours is the rarest (half of them marked in
    // the availability), a requested one next, then a fresh one.
    for b in 0..32u64 {
        s.have.set_chunk(ChunkIndex(b * 64 + 5));
        drop(&mut s, b * 64 + 5, 10);
        if b % 2 == 0 {
            s.availability.mark_taken(r(b * 64 + 5, b * 64 + 5));
        }
        s.requested.set_chunk(ChunkIndex(b * 64 + 9));
        drop(&mut s, b * 64 + 9, 9);
        drop(&mut s, b * 64 + 20, 5);
    }
    // The rarest fresh chunk, alone between requested ones.
    drop(&mut s, 1500, 7);
    s.requested.set_chunk(ChunkIndex(1499));
    s.requested.set_chunk(ChunkIndex(1501));
    let min = (0..2048u64)
        .filter(|&c| !s.have.contains(ChunkIndex(c)) && !s.requested.contains(ChunkIndex(c)))
        .map(|c| s.availability.count(ChunkIndex(c)))
        .min()
        .unwrap();
    assert_eq!((min, s.availability.count(ChunkIndex(1500))), (4, 4));
    for seed in 0..10 {
        assert_eq!(pick(&s, 1, seed), [(1500, 1500)], "seed {seed}");
        // Next comes a fresh chunk of count 6, extended rightwards.
        let picked = pick(&s, 3, seed);
        assert_eq!(picked.len(), 2);
        assert_eq!(picked[0], (1500, 1500));
        let (a, b) = picked[1];
        assert_eq!((a % 64, b), (20, a + 1), "{picked:?}");
    }
}

/// A flash crowd as one leecher sees it: most chunks are held by no
/// neighbour, so every block's plain minimum is 0.
fn flash_crowd_view(n: u64, rare_block: u64) -> Sets {
    // The peer has chunk 7 of every block; three others hold it too,
    // except in `rare_block` where only one does.
    let peer: Vec<(u64, u64)> = (0..n / 64).map(|b| (b * 64 + 7, b * 64 + 7)).collect();
    let mut s = Sets::counted(n, &peer);
    for b in 0..n / 64 {
        let times = if b == rare_block { 1 } else { 3 };
        (0..times).for_each(|_| s.availability.add(r(b * 64 + 7, b * 64 + 7)));
        // Chunks the peer lacks, held by three others.
        (0..3).for_each(|_| s.availability.add(r(b * 64 + 30, b * 64 + 33)));
    }
    s
}

#[test]
fn a_counted_peer_is_searched_past_chunks_nobody_has() {
    let n = 64 * 64;
    for (seed, rare_block) in (0..12).zip([0, 5, 17, 63].into_iter().cycle()) {
        let s = flash_crowd_view(n, rare_block);
        // The chunks counted 0 do not hide the rare one: the bounds lead
        // straight to it, so one evaluated block is enough.
        let picked = s.pick_with(&mut RarestFirst::with_search_limit(1), 1, seed);
        assert_eq!(
            picked,
            [(rare_block * 64 + 7, rare_block * 64 + 7)],
            "seed {seed}"
        );
    }
}

#[test]
fn a_complete_peer_finds_the_chunks_only_it_has() {
    let n = 64 * 64;
    for (seed, x) in (0..12).zip([3, 700, 2049, n - 1].into_iter().cycle()) {
        // A complete peer is counted once for all chunks; one other peer
        // has all but chunk `x`, which only the complete peer has.
        let mut s = Sets::counted(n, &[]);
        s.peer_has = map(&[(0, n - 1)]);
        s.peer_counted = false;
        s.availability.add_complete_peer();
        s.availability
            .add_runs([ChunkRange::new(0, x).unwrap(), r(x, n - 1)]);
        s.availability.remove(r(x, x));
        s.availability.remove(r(x, x));
        assert_eq!(s.availability.count(ChunkIndex(x)), 1);
        assert_eq!(pick(&s, 1, seed), [(x, x)], "seed {seed}");
    }
}

#[test]
fn end_game_only_when_nothing_fresh() {
    let mut s = Sets::counted(100, &[(0, 49)]);
    s.requested = map(&[(0, 48)]);
    s.from_peer = map(&[(0, 19)]);
    // Chunk 49 is fresh: only it.
    assert_eq!(pick(&s, 10, 1), [(49, 49)]);
    s.have = map(&[(49, 49)]);
    // Nothing fresh at this peer, but chunks 50-99 are asked of nobody:
    // not the end game yet.
    assert!(pick(&s, 10, 1).is_empty());
    s.requested = map(&[(0, 48), (50, 99)]);
    for seed in 0..10 {
        let picked = pick(&s, 10, seed);
        let chunks = s.check(&picked, 10);
        assert_eq!(chunks.len(), 10);
        assert!(chunks.iter().all(|&c| (20..=48).contains(&c)), "{picked:?}");
    }
    s.from_peer = map(&[(0, 48)]);
    assert!(pick(&s, 10, 1).is_empty());
}

#[test]
fn unknown_size_treats_the_peers_chunks_as_equally_rare() {
    let mut s = Sets::counted(0, &[(10, 19), (1000, 1999)]);
    s.chunk_count = None;
    s.have = map(&[(1500, 1999)]);
    let mut starts = Vec::new();
    for seed in 0..16 {
        let picked = pick(&s, 8, seed);
        assert_eq!(s.check(&picked, 8).len(), 8);
        assert_eq!(picked, pick(&s, 8, seed));
        starts.push(picked[0].0);
    }
    starts.sort_unstable();
    starts.dedup();
    assert!(starts.len() > 4, "{starts:?}");
    // Counts covering part of the content: the rest is the tail.
    let mut s = Sets::counted(64, &[(0, 199)]);
    s.chunk_count = Some(200);
    s.availability.add_runs([r(0, 63)]);
    s.availability.add_runs([r(0, 63)]);
    for seed in 0..8 {
        let picked = pick(&s, 4, seed);
        assert!(picked[0].0 >= 64, "the uncounted tail is rarer: {picked:?}");
    }
}

#[test]
fn search_limit_settles_but_stays_valid() {
    // Every block's minimum is a chunk the peer lacks, one below the
    // candidates: the adversarial layout for the bounds.
    let n = 64 * 256;
    let mut s = Sets::counted(n, &[]);
    let mut peer = Binmap::new();
    for c in (0..n).step_by(2) {
        peer.set_chunk(ChunkIndex(c));
    }
    s.availability.add_runs(peer.filled_runs());
    s.availability.add_runs(peer.filled_runs());
    let mut odd = Binmap::new();
    (1..n).step_by(2).for_each(|c| odd.set_chunk(ChunkIndex(c)));
    s.availability.add_runs(odd.filled_runs());
    s.peer_has = peer;
    // The one chunk with count 1 among the candidates sits in the last block.
    s.availability.remove(r(n - 2, n - 2));
    let exact = s.pick_with(&mut RarestFirst::with_search_limit(1000), 1, 7);
    assert_eq!(exact, [(n - 2, n - 2)]);
    let settled = s.pick_with(&mut RarestFirst::with_search_limit(4), 16, 7);
    assert_eq!(s.check(&settled, 16).len(), 16);
}

#[test]
fn fragmented_peers_give_many_short_ranges_in_budget() {
    let n = 5000u64;
    let mut s = Sets::counted(n, &[]);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(99);
    let mut peer = Binmap::new();
    for c in 0..n {
        if rng.random_bool(0.5) {
            peer.set_chunk(ChunkIndex(c));
        }
    }
    for _ in 0..20 {
        let mut other = Binmap::new();
        for c in 0..n {
            if rng.random_bool(0.5) {
                other.set_chunk(ChunkIndex(c));
            }
        }
        s.availability.add_runs(other.filled_runs());
    }
    s.availability.add_runs(peer.filled_runs());
    s.peer_has = peer;
    let picked = pick(&s, 64, 1);
    let chunks = s.check(&picked, 64);
    assert_eq!(chunks.len(), 64);
    let min = (0..n)
        .filter(|&c| s.peer_has.contains(ChunkIndex(c)))
        .map(|c| s.availability.count(ChunkIndex(c)))
        .min()
        .unwrap();
    let (a, b) = picked[0];
    assert!((a..=b).any(|c| s.availability.count(ChunkIndex(c)) == min));
    // Ranges are maximal runs: none touches the next chunk it could take.
    for &(_, b) in &picked[..picked.len() - 1] {
        let next = b + 1;
        assert!(
            !s.peer_has.contains(ChunkIndex(next)) || chunks.contains(&next),
            "{picked:?}"
        );
    }
}

#[test]
fn scattered_equally_rare_chunks_of_a_block_cost_one_walk() {
    // The peer has every fourth chunk of block 3 (held by nobody else) and
    // of block 7 (held by one more peer): single-chunk runs.
    let rare: Vec<u64> = (0..16).map(|i| 3 * 64 + 4 * i).collect();
    let less: Vec<u64> = (0..4).map(|i| 7 * 64 + 4 * i).collect();
    let peer: Vec<(u64, u64)> = rare.iter().chain(&less).map(|&c| (c, c)).collect();
    let mut s = Sets::counted(640, &peer);
    less.iter().for_each(|&c| s.availability.add(r(c, c)));
    // Eight of block 3's sixteen: one walk.
    let mut picker = RarestFirst::new();
    let picked = s.pick_with(&mut picker, 8, 5);
    assert_eq!(s.check(&picked, 8).len(), 8);
    assert!(
        picked.iter().all(|&(a, b)| a == b && rare.contains(&a)),
        "{picked:?}"
    );
    assert_eq!(picker.walks(), 1);
    // All twenty: block 3's first, then one more walk finds block 7's.
    let mut picker = RarestFirst::new();
    let picked = s.pick_with(&mut picker, 20, 5);
    let chunks = s.check(&picked, 20);
    assert_eq!(chunks.len(), 20);
    assert!(chunks[..16].iter().all(|c| rare.contains(c)), "{picked:?}");
    assert_eq!(picker.walks(), 2);
}

#[test]
fn name_and_default() {
    assert_eq!(RarestFirst::default().name(), "rarest-first");
}
