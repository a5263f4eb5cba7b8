use super::*;
use crate::bin::Bin;
use crate::chunk::ChunkIndex;

const MAX: u64 = MAX_CHUNK_INDEX;

fn r(first: u64, last: u64) -> ChunkRange {
    ChunkRange::new(first, last).expect("valid test range")
}

fn c(i: u64) -> ChunkIndex {
    ChunkIndex(i)
}

fn runs(map: &Binmap) -> Vec<(u64, u64)> {
    map.filled_runs()
        .map(|run| (run.first().0, run.last().0))
        .collect()
}

fn diff_runs(a: &Binmap, b: &Binmap) -> Vec<(u64, u64)> {
    a.difference_runs(b)
        .map(|run| (run.first().0, run.last().0))
        .collect()
}

/// A tiny seeded generator so the tests are reproducible without `rand`.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn empty_binmap_allocates_nothing_and_answers_everything() {
    let map = Binmap::new();
    assert!(map.is_empty());
    assert_eq!(map.count(), 0);
    assert_eq!(map.heap_bytes(), 0);
    assert!(!map.contains(c(0)));
    assert!(!map.contains(c(MAX)));
    assert!(!map.contains(c(u64::MAX)));
    assert_eq!(map.first_filled_from(c(0)), None);
    assert_eq!(map.first_empty_from(c(0)), Some(c(0)));
    assert_eq!(map.first_empty_from(c(MAX)), Some(c(MAX)));
    assert_eq!(map.first_empty_from(c(MAX + 1)), None);
    assert!(map.is_empty_range(r(0, MAX)));
    assert!(!map.is_filled(r(5, 5)));
    assert_eq!(map.count_in(r(0, MAX)), 0);
    assert_eq!(runs(&map), vec![]);
    assert_eq!(map, Binmap::default());
}

#[test]
fn chunk_zero_and_last_chunk() {
    let mut map = Binmap::new();
    map.set_chunk(c(0));
    assert!(map.contains(c(0)));
    assert!(!map.contains(c(1)));
    assert_eq!(map.height, MIN_HEIGHT);
    map.set_chunk(c(MAX));
    assert_eq!(
        map.height, MAX_HEIGHT,
        "the root grows to cover 2^63 chunks"
    );
    assert!(map.contains(c(MAX)));
    assert!(!map.contains(c(MAX - 1)));
    assert_eq!(map.count(), 2);
    assert_eq!(runs(&map), vec![(0, 0), (MAX, MAX)]);
    assert_eq!(map.first_filled_from(c(1)), Some(c(MAX)));
    assert_eq!(map.first_empty_from(c(MAX)), None);
    assert_eq!(map.first_empty_from(c(MAX - 1)), Some(c(MAX - 1)));
    assert_eq!(map.count_in(r(1, MAX)), 1);
    // One path of cells down to each of the two chunks.
    assert!(map.live_cells() <= 2 * 57, "{} cells", map.live_cells());

    map.clear_chunk(c(MAX));
    assert_eq!(map.height, MIN_HEIGHT, "the root shrinks back");
    assert_eq!(map.live_cells(), 1);
    map.clear_chunk(c(0));
    assert!(map.is_empty());
    assert_eq!(map.heap_bytes(), 0);
    // Out-of-range chunk indices are ignored, never a panic.
    map.set_chunk(c(MAX + 1));
    map.set_chunk(c(u64::MAX));
    assert!(map.is_empty());
}

#[test]
fn full_binmap_over_every_chunk_has_no_cells() {
    let mut map = Binmap::new();
    map.set(r(0, MAX));
    assert_eq!(map.count(), 1 << 63);
    assert_eq!(map.live_cells(), 0);
    assert_eq!(map.heap_bytes(), 0);
    assert!(map.is_filled(r(0, MAX)));
    assert!(map.is_filled_bin(Bin::ALL));
    assert_eq!(map.first_empty_from(c(0)), None);
    assert_eq!(map.first_filled_from(c(MAX)), Some(c(MAX)));
    assert_eq!(runs(&map), vec![(0, MAX)]);

    map.clear(r(1, MAX - 1));
    assert_eq!(map.count(), 2);
    assert_eq!(runs(&map), vec![(0, 0), (MAX, MAX)]);
    assert!(map.live_cells() <= 2 * 57);

    map.set(r(1, MAX - 1));
    assert_eq!(map.live_cells(), 0);
    assert_eq!(map.count(), 1 << 63);
    map.clear_chunk(c(MAX));
    assert_eq!(map.first_empty_from(c(0)), Some(c(MAX)));
    assert_eq!(map.count(), MAX);
}

#[test]
fn growth_of_the_root_keeps_existing_chunks() {
    let mut map = Binmap::new();
    map.set(r(3, 200));
    map.set_chunk(c(1 << 40));
    assert_eq!(map.height, 41);
    assert_eq!(runs(&map), vec![(3, 200), (1 << 40, 1 << 40)]);
    map.set(r(0, 127));
    assert_eq!(map.height, 41);
    map.clear_chunk(c(1 << 40));
    assert_eq!(map.height, 8);
    assert_eq!(runs(&map), vec![(0, 200)]);
    // A full root grows by pairing it with an empty half.
    let mut full = Binmap::new();
    full.set(r(0, 127));
    assert_eq!(full.live_cells(), 0);
    full.set_chunk(c(128));
    assert_eq!(runs(&full), vec![(0, 128)]);
    assert_eq!(full.count(), 129);
}

#[test]
fn sequential_fill_collapses_to_uniform() {
    let mut map = Binmap::new();
    for i in 0..10_000 {
        map.set_chunk(c(i));
        assert!(
            map.live_cells() <= 14,
            "{} cells at chunk {i}",
            map.live_cells()
        );
    }
    assert_eq!(runs(&map), vec![(0, 9_999)]);
    assert_eq!(map.count(), 10_000);
    let mut whole = Binmap::new();
    whole.set(r(0, 16_383));
    for i in 10_000..16_384 {
        map.set_chunk(c(i));
    }
    assert_eq!(map.live_cells(), 0, "a full tree is one reference");
    assert_eq!(map, whole);
    // Clear it again chunk by chunk, from the right.
    for i in (0..16_384).rev() {
        map.clear_chunk(c(i));
    }
    assert!(map.is_empty());
    assert_eq!(map.heap_bytes(), 0);
}

#[test]
fn counts_after_overlapping_set_and_clear() {
    let mut map = Binmap::new();
    map.set(r(10, 99));
    map.set(r(50, 199));
    assert_eq!(map.count(), 190);
    map.clear(r(80, 120));
    assert_eq!(map.count(), 149);
    map.clear(r(80, 120));
    assert_eq!(map.count(), 149);
    map.set(r(0, 1000));
    assert_eq!(map.count(), 1001);
    map.clear(r(500, 5000));
    assert_eq!(map.count(), 500);
    assert_eq!(map.count_in(r(0, 9)), 10);
    assert_eq!(map.count_in(r(490, 510)), 10);
    assert_eq!(map.count_in(r(499, MAX)), 1);
    map.clear(r(1 << 50, MAX));
    assert_eq!(map.count(), 500);
}

#[test]
fn set_then_clear_same_random_ranges_leaves_nothing() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for round in 0..50 {
        let mut map = Binmap::new();
        let mut ranges = Vec::new();
        for _ in 0..40 {
            // Mix tiny, medium and huge ranges at small and huge offsets.
            let scale = [10, 4_000, 1 << 40, MAX][(rng.next() % 4) as usize];
            let first = rng.next() % scale;
            let len = 1 + rng.next() % [1, 100, 1 << 20, MAX][(rng.next() % 4) as usize];
            let last = first.saturating_add(len - 1).min(MAX);
            ranges.push(r(first, last));
        }
        for &range in &ranges {
            map.set(range);
            assert!(map.is_filled(range));
        }
        // Each range adds at most its two boundary paths, however long it is.
        assert!(map.live_cells() <= ranges.len() * 2 * 57);
        for &range in ranges.iter().rev().skip(round % 3) {
            map.clear(range);
            assert!(map.is_empty_range(range));
        }
        for &range in ranges.iter().rev().take(round % 3) {
            map.clear(range);
        }
        assert!(map.is_empty(), "round {round}: {map:?}");
        assert_eq!(map.count(), 0);
        assert_eq!(map.live_cells(), 0);
        assert_eq!(map.heap_bytes(), 0);
    }
}

#[test]
fn alternating_chunks_cost_about_a_bitset() {
    let n: u64 = 1 << 16;
    let mut map = Binmap::new();
    for i in (0..n).step_by(2) {
        map.set_chunk(c(i));
    }
    // The tree went flat once it took a bitset's memory: the words plus
    // two summary bits per word.
    assert!(map.is_flat());
    assert_eq!(map.live_cells(), 0);
    let bitset_bytes = (n / 8) as usize;
    assert_eq!(map.heap_bytes(), bitset_bytes + bitset_bytes / 32);
    assert_eq!(map.count(), n / 2);
    assert_eq!(map.first_empty_from(c(0)), Some(c(1)));
    assert_eq!(map.first_filled_from(c(1)), Some(c(2)));
    assert_eq!(map.filled_runs().count() as u64, n / 2);
}

#[test]
fn a_fragmented_tree_goes_flat_when_it_costs_a_bitset() {
    // 2^12 chunks: the flat layout takes 512 + 16 bytes, 33 cells' worth.
    let mut map = Binmap::new();
    map.set_chunk(c(4095));
    let mut went_flat_at = None;
    for i in (0..4096).step_by(128) {
        map.set_chunk(c(i));
        if map.is_flat() {
            went_flat_at = Some(i);
            break;
        }
        assert!(map.live_cells() * 16 < 528, "{} cells", map.live_cells());
    }
    assert!(went_flat_at.is_some(), "never went flat");
    let before = map.clone();
    // Filling every chunk makes it uniform: back to a tree without cells.
    map.set(r(0, 4095));
    assert!(!map.is_flat());
    assert_eq!(map.heap_bytes(), 0);
    assert_eq!(map.count(), 4096);
    // Clearing every filled chunk of a flat binmap leaves an empty one.
    let mut emptied = before.clone();
    for run in before.filled_runs() {
        emptied.clear(run);
    }
    assert!(emptied.is_empty() && !emptied.is_flat());
    assert_eq!(emptied.heap_bytes(), 0);
}

#[test]
fn a_flat_binmap_updated_past_its_end_grows_as_a_tree() {
    let mut map = Binmap::new();
    for i in (0..4096).step_by(2) {
        map.set_chunk(c(i));
    }
    assert!(map.is_flat());
    let copy = map.clone();
    map.set_chunk(c(1 << 40));
    assert!(map.contains(c(1 << 40)));
    assert_eq!(map.count(), 2049);
    // Taller than the flat layout allows: the tree keeps it.
    assert!(!map.is_flat());
    map.clear_chunk(c(1 << 40));
    assert_eq!(map, copy);
    // A range past the end does the same, and clears beyond it are no-ops.
    let mut ranged = copy.clone();
    ranged.set(r(4000, 5000));
    assert_eq!(ranged.count_in(r(4000, 5000)), 1001);
    assert_eq!(ranged.count(), 2000 + 1001);
    let mut cleared = copy.clone();
    cleared.clear(r(5000, 1 << 50));
    cleared.clear_chunk(c(1 << 50));
    assert!(cleared.is_flat());
    assert_eq!(cleared, copy);
}

#[test]
fn difference_skips_what_the_other_has() {
    let mut a = Binmap::new();
    a.set(r(0, 999));
    let mut b = Binmap::new();
    b.set(r(100, 199));
    b.set(r(500, 1 << 40));
    assert_eq!(diff_runs(&a, &b), vec![(0, 99), (200, 499)]);
    assert_eq!(a.first_in_difference(&b, c(100)), Some(c(200)));
    assert_eq!(a.first_in_difference(&b, c(500)), None);
    assert_eq!(b.first_in_difference(&a, c(0)), Some(c(1000)));
    assert_eq!(diff_runs(&b, &a), vec![(1000, 1 << 40)]);
    let bounded: Vec<_> = a.difference_runs_in(&b, r(50, 300)).collect();
    assert_eq!(bounded, vec![r(50, 99), r(200, 300)]);
    // A binmap minus itself, or minus everything, is empty.
    assert_eq!(diff_runs(&a, &a), vec![]);
    let mut all = Binmap::new();
    all.set(r(0, MAX));
    assert_eq!(diff_runs(&a, &all), vec![]);
    assert_eq!(diff_runs(&all, &Binmap::new()), vec![(0, MAX)]);
    assert_eq!(diff_runs(&all, &a), vec![(1000, MAX)]);
    assert_eq!(all.first_in_difference(&b, c(500)), Some(c((1 << 40) + 1)));
}

#[test]
fn equality_is_semantic() {
    let mut a = Binmap::new();
    a.set(r(0, 300));
    a.set(r(1 << 40, (1 << 40) + 5));
    let mut b = Binmap::new();
    b.set(r((1 << 40) + 3, (1 << 40) + 5));
    for i in (0..=300).rev() {
        b.set_chunk(c(i));
    }
    b.set(r(1 << 40, (1 << 40) + 2));
    assert_eq!(a, b);
    b.clear_chunk(c(1 << 40));
    assert_ne!(a, b);
    b.set_chunk(c(1 << 40));
    b.set_chunk(c(MAX));
    assert_ne!(a, b);
    // Same count, different chunks.
    let mut x = Binmap::new();
    x.set_chunk(c(1));
    let mut y = Binmap::new();
    y.set_chunk(c(1 << 50));
    assert_ne!(x, y);
    assert_eq!(x.clone(), x);
}

#[test]
fn bins_map_to_their_chunk_ranges() {
    let mut map = Binmap::new();
    map.set_bin(Bin(3)); // chunks 0..=3
    assert!(map.is_filled_bin(Bin(3)));
    assert!(map.is_filled_bin(Bin(1)));
    assert!(!map.is_filled_bin(Bin(7)));
    assert!(map.is_empty_bin(Bin(11)));
    assert!(!map.is_empty_bin(Bin(7)));
    assert!(!map.is_filled_bin(Bin::NONE));
    assert!(!map.is_empty_bin(Bin::NONE));
    map.set_bin(Bin::NONE);
    assert_eq!(map.count(), 4);
    map.clear_bin(Bin(1));
    assert_eq!(runs(&map), vec![(2, 3)]);
    map.clear_bin(Bin::ALL);
    assert!(map.is_empty());
}

#[test]
fn runs_in_a_range_are_cut_at_its_ends() {
    let map: Binmap = [r(0, 10), r(20, 30), r(100, 200)].into_iter().collect();
    let cut: Vec<_> = map.filled_runs_in(r(5, 150)).collect();
    assert_eq!(cut, vec![r(5, 10), r(20, 30), r(100, 150)]);
    assert_eq!(map.filled_runs_in(r(11, 19)).count(), 0);
    assert_eq!(map.filled_runs_in(r(MAX, MAX)).count(), 0);
}

#[test]
fn debug_shows_count_and_first_runs() {
    let mut map = Binmap::new();
    map.set(r(1, 2));
    assert_eq!(format!("{map:?}"), "Binmap { count: 2, runs: [1..=2] }");
    for i in 0..20 {
        map.set_chunk(c(10 + 2 * i));
    }
    assert!(format!("{map:?}").ends_with("…] }"));
}
