//! Property tests: pickers against a plain model over ~500 chunks.
//!
//! Random binmaps (long runs or coin-flip fragments) stand for what we have,
//! what is requested (from anyone and from this peer), what the peer has and
//! what other peers have; the model is a `Vec<bool>` per set and a count per
//! chunk. Every pick must choose only chunks the peer has, we lack and this
//! peer is not asked for; fresh chunks while there are any, else end-game
//! ones; as many as the budget and the set allow; the same chunks for the
//! same seed. Rarest-first's first range must hold a rarest fresh chunk;
//! sequential must take the fresh chunks in order from the playhead.

use ppspp_core::pick::availability::Availability;
use ppspp_core::pick::{DryBlocks, PickView, Picker, RarestFirst, Sequential};
use ppspp_core::time::Instant;
use ppspp_core::{Binmap, ChunkIndex, ChunkRange};
use proptest::prelude::*;
use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

/// Chunks the random sets touch; content sizes vary around it.
const UNIVERSE: usize = 520;

/// A set of chunks below [`UNIVERSE`], as a bitset.
fn chunk_set() -> impl Strategy<Value = Vec<bool>> {
    let runs = proptest::collection::vec((0..UNIVERSE, 1..80usize), 0..8).prop_map(|runs| {
        let mut bits = vec![false; UNIVERSE];
        for (first, len) in runs {
            bits[first..(first + len).min(UNIVERSE)].fill(true);
        }
        bits
    });
    let coins = (1u32..8).prop_flat_map(|eighths| {
        proptest::collection::vec(proptest::bool::weighted(f64::from(eighths) / 8.0), UNIVERSE)
    });
    prop_oneof![
        Just(vec![false; UNIVERSE]),
        Just(vec![true; UNIVERSE]),
        runs.clone(),
        runs,
        coins
    ]
}

fn binmap(bits: &[bool]) -> Binmap {
    let mut map = Binmap::new();
    for (i, _) in bits.iter().enumerate().filter(|(_, &b)| b) {
        map.set_chunk(ChunkIndex(i as u64));
    }
    map
}

#[derive(Clone, Debug)]
struct Case {
    have: Vec<bool>,
    requested: Vec<bool>,
    /// Which requested chunks are requested from this peer.
    from_peer_mask: Vec<bool>,
    peer_has: Vec<bool>,
    others: Vec<Vec<bool>>,
    /// Peers among `others` that left again (their chunks removed).
    left: Vec<bool>,
    complete: u32,
    /// Whether the peer's own chunks are in the availability.
    count_peer: bool,
    /// Whether our chunks are marked in the availability.
    mark_taken: bool,
    chunk_count: Option<u64>,
    /// The size the availability counts (the content size, or not known).
    counted: u64,
    playhead: Option<u64>,
    budget: u64,
    seed: u64,
}

fn case() -> impl Strategy<Value = Case> {
    let sets = (chunk_set(), chunk_set(), chunk_set(), chunk_set());
    let others = proptest::collection::vec(chunk_set(), 0..6);
    let sizes = prop_oneof![
        (400..=UNIVERSE as u64).prop_map(|n| (Some(n), n)),
        (1..=UNIVERSE as u64).prop_map(|n| (Some(n), n)),
        Just((None, 0)),
        (1..=UNIVERSE as u64).prop_map(|n| (None, n)),
        (1..=UNIVERSE as u64, 0..=UNIVERSE as u64).prop_map(|(n, m)| (Some(n), m)),
    ];
    let knobs = (
        0u32..3,
        any::<bool>(),
        any::<bool>(),
        proptest::option::of(0..600u64),
        prop_oneof![Just(0u64), 1..8u64, 1..100u64, Just(1000u64)],
        any::<u64>(),
    );
    let left = proptest::collection::vec(proptest::bool::weighted(0.3), 6);
    (sets, others, left, sizes, knobs).prop_map(
        |(
            (have, requested, from_peer_mask, peer_has),
            others,
            left,
            (chunk_count, counted),
            (complete, count_peer, mark_taken, playhead, budget, seed),
        )| Case {
            have,
            requested,
            from_peer_mask,
            peer_has,
            others,
            left,
            complete,
            count_peer,
            mark_taken,
            chunk_count,
            counted,
            playhead,
            budget,
            seed,
        },
    )
}

/// The binmaps and availability of a case, and the model counts.
struct World {
    have: Binmap,
    requested: Binmap,
    from_peer: Binmap,
    peer_has: Binmap,
    /// Nothing went late: the model has no deadlines.
    late: Binmap,
    availability: Availability,
    counts: Vec<u32>,
}

impl World {
    fn new(c: &Case) -> Self {
        let from_peer: Vec<bool> = (0..UNIVERSE)
            .map(|i| c.requested[i] && c.from_peer_mask[i])
            .collect();
        let mut availability = Availability::new();
        availability.set_chunk_count(c.counted);
        let mut counts = vec![c.complete; UNIVERSE];
        (0..c.complete).for_each(|_| availability.add_complete_peer());
        let mut count = |bits: &[bool], delta: i32, a: &mut Availability| {
            let map = binmap(bits);
            if delta > 0 {
                a.add_runs(map.filled_runs());
            } else {
                a.remove_runs(map.filled_runs());
            }
            for i in 0..UNIVERSE.min(c.counted as usize) {
                if bits[i] {
                    counts[i] = counts[i].checked_add_signed(delta).expect("no underflow");
                }
            }
        };
        if c.count_peer {
            count(&c.peer_has, 1, &mut availability);
        }
        for (i, other) in c.others.iter().enumerate() {
            count(other, 1, &mut availability);
            if c.left[i] {
                count(other, -1, &mut availability);
            }
        }
        let have = binmap(&c.have);
        if c.mark_taken {
            have.filled_runs().for_each(|r| availability.mark_taken(r));
        }
        World {
            have,
            requested: binmap(&c.requested),
            from_peer: binmap(&from_peer),
            peer_has: binmap(&c.peer_has),
            late: Binmap::new(),
            availability,
            counts,
        }
    }

    fn view(&self, c: &Case) -> PickView<'_> {
        PickView {
            now: Instant::ZERO,
            chunk_count: c.chunk_count,
            have: &self.have,
            requested: &self.requested,
            requested_from_peer: &self.from_peer,
            peer_has: &self.peer_has,
            late: &self.late,
            availability: &self.availability,
            peer_counted: c.count_peer,
            playhead: c.playhead.map(ChunkIndex),
            live: false,
            dry: None,
            link: ppspp_core::pick::PeerLink::default(),
        }
    }

    fn pick(&self, c: &Case, picker: &mut dyn Picker) -> Vec<ChunkRange> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(c.seed);
        let mut out = Vec::new();
        picker.pick(&self.view(c), c.budget, &mut rng, &mut out);
        out
    }
}

/// The model's fresh and end-game chunks, ascending.
fn model_sets(c: &Case) -> (Vec<usize>, Vec<usize>) {
    let end = c.chunk_count.map_or(UNIVERSE, |n| UNIVERSE.min(n as usize));
    let lacking = |i: &usize| c.peer_has[*i] && !c.have[*i];
    let fresh = (0..end).filter(lacking).filter(|&i| !c.requested[i]);
    // The end game opens once every chunk of the content is had or asked.
    let open = c.chunk_count.is_none_or(|n| {
        n as usize <= UNIVERSE && (0..n as usize).all(|i| c.have[i] || c.requested[i])
    });
    let end_game = (0..end)
        .filter(|_| open)
        .filter(lacking)
        .filter(|&i| c.requested[i] && !c.from_peer_mask[i]);
    (fresh.collect(), end_game.collect())
}

/// The checks every picker must pass; returns the picked chunks in order.
fn check_common(c: &Case, picked: &[ChunkRange]) -> Result<Vec<usize>, TestCaseError> {
    let chunks: Vec<usize> = picked
        .iter()
        .flat_map(|r| r.first().0..=r.last().0)
        .map(|i| i as usize)
        .collect();
    let (fresh, end_game) = model_sets(c);
    let set = if fresh.is_empty() { &end_game } else { &fresh };
    prop_assert!(chunks.len() as u64 <= c.budget, "over budget");
    prop_assert_eq!(chunks.len() as u64, c.budget.min(set.len() as u64));
    let mut sorted = chunks.clone();
    sorted.sort_unstable();
    sorted.dedup();
    prop_assert_eq!(sorted.len(), chunks.len(), "a chunk picked twice");
    for &i in &chunks {
        prop_assert!(set.binary_search(&i).is_ok(), "chunk {} not allowed", i);
    }
    Ok(chunks)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn availability_counts_match_the_model(c in case()) {
        let w = World::new(&c);
        for i in 0..UNIVERSE {
            prop_assert_eq!(w.availability.count(ChunkIndex(i as u64)), w.counts[i], "chunk {}", i);
        }
    }

    #[test]
    fn sequential_takes_fresh_chunks_in_order_from_the_playhead(c in case()) {
        let w = World::new(&c);
        let picked = w.pick(&c, &mut Sequential::new());
        let chunks = check_common(&c, &picked)?;
        let (fresh, end_game) = model_sets(&c);
        let set = if fresh.is_empty() { end_game } else { fresh };
        let start = c.playhead.map_or(0, |p| p as usize);
        let start = if c.chunk_count.is_some_and(|n| start as u64 >= n) { 0 } else { start };
        let order: Vec<usize> = set.iter().filter(|&&i| i >= start)
            .chain(set.iter().filter(|&&i| i < start)).copied().collect();
        prop_assert_eq!(&chunks[..], &order[..chunks.len()]);
    }

    #[test]
    fn rarest_first_picks_a_rarest_fresh_chunk_first(c in case()) {
        let w = World::new(&c);
        let mut picker = RarestFirst::new();
        let picked = w.pick(&c, &mut picker);
        let chunks = check_common(&c, &picked)?;
        let (fresh, _) = model_sets(&c);
        if let (Some(first), false) = (picked.first(), fresh.is_empty()) {
            let min = fresh.iter().map(|&i| w.counts[i]).min().unwrap();
            let first_min = (first.first().0..=first.last().0)
                .map(|i| w.counts[i as usize]).min().unwrap();
            prop_assert_eq!(first_min, min, "first range {} misses the rarest", first);
        }
        // The same seed, with a fresh or a reused picker, picks the same.
        prop_assert_eq!(&w.pick(&c, &mut picker), &picked);
        prop_assert_eq!(&w.pick(&c, &mut RarestFirst::new()), &picked);
        prop_assert!(chunks.len() as u64 <= c.budget);
    }

    #[test]
    fn rarest_first_rounds_go_from_rarer_to_commoner(c in case()) {
        rounds_from_rarer_to_commoner(&c, false)?;
    }

    #[test]
    fn dry_marks_kept_between_picks_are_right_and_change_no_choice(c in case()) {
        rounds_from_rarer_to_commoner(&c, true)?;
    }
}

/// With one chunk per range (budget spent chunk by chunk), each pick takes
/// a rarest chunk of what is left. With `dry`, the blocks the picks find
/// dry are remembered from one pick to the next, as a channel does, and no
/// block holding a fresh chunk of the peer may be marked.
fn rounds_from_rarer_to_commoner(c: &Case, dry: bool) -> Result<(), TestCaseError> {
    let w = World::new(c);
    let (fresh, _) = model_sets(c);
    let mut left = fresh.clone();
    let mut requested = w.requested.clone();
    let mut marks = DryBlocks::new();
    let mut picker = RarestFirst::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(c.seed);
    for _ in 0..c.budget.min(5) {
        let mut out = Vec::new();
        {
            let mut view = w.view(c);
            view.requested = &requested;
            if dry {
                view.dry = c.chunk_count.map(|n| marks.view(n));
            }
            picker.pick(&view, 1, &mut rng, &mut out);
        }
        for &i in &left {
            prop_assert!(!marks.is_dry(i / 64), "chunk {} in a dry block", i);
        }
        if left.is_empty() {
            break;
        }
        prop_assert_eq!(out.len(), 1);
        let chunk = out[0].first().0 as usize;
        let min = left.iter().map(|&i| w.counts[i]).min().unwrap();
        prop_assert_eq!(w.counts[chunk], min);
        left.retain(|&i| i != chunk);
        requested.set(out[0]);
    }
    Ok(())
}
