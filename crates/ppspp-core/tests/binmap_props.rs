//! Property tests: a `Binmap` answers every query like a plain model does,
//! after any sequence of set/clear operations.
//!
//! Two models: a `Vec<bool>` bitset over a small universe (dense
//! fragmentation, every position checked), and a sorted interval list for
//! ranges near 2^40 and near `MAX_CHUNK_INDEX`, and ranges up to 2^63
//! chunks long, where only the interval boundaries need checking because
//! both sets are uniform between them.

use ppspp_core::chunk::MAX_CHUNK_INDEX;
use ppspp_core::{Binmap, ChunkIndex, ChunkRange};
use proptest::prelude::*;

const MAX: u64 = MAX_CHUNK_INDEX;

fn r(first: u64, last: u64) -> ChunkRange {
    ChunkRange::new(first, last).expect("valid test range")
}

fn pairs(runs: impl Iterator<Item = ChunkRange>) -> Vec<(u64, u64)> {
    runs.map(|run| (run.first().0, run.last().0)).collect()
}

/// One update: set (`true`) or clear `first ..= last`.
type Op = (bool, u64, u64);

/// Applies `ops`; single chunks at even positions go through the one-chunk
/// calls, which have their own fast path (at multiples of four the one
/// that also tells whether the chunk was new).
fn apply(map: &mut Binmap, ops: &[Op]) {
    for &(set, first, last) in ops {
        match (set, first == last && first % 2 == 0) {
            (true, false) => map.set(r(first, last)),
            (false, false) => map.clear(r(first, last)),
            (true, true) if first % 4 == 0 => {
                let was = map.contains(ChunkIndex(first));
                assert_eq!(map.insert_chunk(ChunkIndex(first)), !was, "chunk {first}");
            }
            (true, true) => map.set_chunk(ChunkIndex(first)),
            (false, true) => map.clear_chunk(ChunkIndex(first)),
        }
    }
}

// ---------------------------------------------------------------------------
// Dense model: a bitset over chunks 0 .. UNIVERSE.

/// Updates touch chunks below `OPS_END`; queries look a little further.
const OPS_END: u64 = 2000;
const UNIVERSE: u64 = 2100;

fn small_op() -> impl Strategy<Value = Op> {
    let len = prop_oneof![Just(1u64), 1..8u64, 1..300u64, 1..OPS_END];
    (any::<bool>(), 0..OPS_END, len)
        .prop_map(|(set, first, len)| (set, first, (first + len - 1).min(OPS_END - 1)))
}

fn small_range() -> impl Strategy<Value = (u64, u64)> {
    (0..UNIVERSE, 0..UNIVERSE).prop_map(|(a, b)| (a.min(b), a.max(b)))
}

fn bitset(ops: &[Op]) -> Vec<bool> {
    let mut bits = vec![false; UNIVERSE as usize];
    for &(set, first, last) in ops {
        bits[first as usize..=last as usize].fill(set);
    }
    bits
}

fn bit_runs(bits: &[bool], lo: u64, hi: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for i in lo..=hi {
        if bits[i as usize] {
            match out.last_mut() {
                Some(run) if run.1 + 1 == i => run.1 = i,
                _ => out.push((i, i)),
            }
        }
    }
    out
}

fn check_dense(map: &Binmap, bits: &[bool], ranges: &[(u64, u64)]) {
    let count = bits.iter().filter(|&&b| b).count() as u64;
    assert_eq!(map.count(), count);
    assert_eq!(map.is_empty(), count == 0);
    assert_eq!(pairs(map.filled_runs()), bit_runs(bits, 0, UNIVERSE - 1));
    for pos in 0..UNIVERSE {
        assert_eq!(map.contains(ChunkIndex(pos)), bits[pos as usize], "{pos}");
        let filled = (pos..UNIVERSE).find(|&i| bits[i as usize]);
        assert_eq!(
            map.first_filled_from(ChunkIndex(pos)),
            filled.map(ChunkIndex)
        );
        let before = (0..=pos).rev().find(|&i| bits[i as usize]);
        assert_eq!(map.last_filled_to(ChunkIndex(pos)), before.map(ChunkIndex));
        // Past the bitset everything is empty, so an empty chunk always exists.
        let empty = (pos..UNIVERSE)
            .find(|&i| !bits[i as usize])
            .unwrap_or(UNIVERSE);
        assert_eq!(
            map.first_empty_from(ChunkIndex(pos)),
            Some(ChunkIndex(empty))
        );
    }
    // Whole 64-chunk words, past the bitset too (empty there).
    for w in 0..UNIVERSE.div_ceil(64) + 2 {
        let want = (0..64u64).fold(0u64, |m, i| {
            let c = (w * 64 + i) as usize;
            m | (u64::from(bits.get(c).copied().unwrap_or(false)) << i)
        });
        assert_eq!(map.word(w), want, "word {w}");
    }
    assert_eq!(map.word(u64::MAX), 0);
    for &(lo, hi) in ranges {
        let slice = &bits[lo as usize..=hi as usize];
        let range = r(lo, hi);
        assert_eq!(map.is_filled(range), slice.iter().all(|&b| b), "{range}");
        assert_eq!(
            map.is_empty_range(range),
            !slice.iter().any(|&b| b),
            "{range}"
        );
        let n = slice.iter().filter(|&&b| b).count() as u64;
        assert_eq!(map.count_in(range), n, "{range}");
        assert_eq!(pairs(map.filled_runs_in(range)), bit_runs(bits, lo, hi));
        // The same range stretched to the end of the chunk space.
        let to_end = r(lo, MAX);
        let tail = &bits[lo as usize..];
        assert_eq!(
            map.count_in(to_end),
            tail.iter().filter(|&&b| b).count() as u64
        );
        assert_eq!(map.is_empty_range(to_end), !tail.iter().any(|&b| b));
        assert!(!map.is_filled(to_end));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn dense_queries_match_a_bitset(
        ops in prop::collection::vec(small_op(), 0..40),
        ranges in prop::collection::vec(small_range(), 1..20),
    ) {
        let mut map = Binmap::new();
        apply(&mut map, &ops);
        check_dense(&map, &bitset(&ops), &ranges);
    }

    #[test]
    fn dense_difference_matches_a_bitset(
        a_ops in prop::collection::vec(small_op(), 0..30),
        b_ops in prop::collection::vec(small_op(), 0..30),
        shared in 0usize..30,
        ranges in prop::collection::vec(small_range(), 1..8),
    ) {
        // B often repeats A's first updates, so the two trees share shapes.
        let shared = shared.min(a_ops.len());
        let b_ops: Vec<Op> = a_ops[..shared].iter().chain(&b_ops).copied().collect();
        let (mut a, mut b) = (Binmap::new(), Binmap::new());
        apply(&mut a, &a_ops);
        apply(&mut b, &b_ops);
        let (abits, bbits) = (bitset(&a_ops), bitset(&b_ops));
        let diff: Vec<bool> = abits.iter().zip(&bbits).map(|(&x, &y)| x && !y).collect();
        prop_assert_eq!(pairs(a.difference_runs(&b)), bit_runs(&diff, 0, UNIVERSE - 1));
        for pos in 0..UNIVERSE {
            let want = (pos..UNIVERSE).find(|&i| diff[i as usize]).map(ChunkIndex);
            prop_assert_eq!(a.first_in_difference(&b, ChunkIndex(pos)), want);
        }
        for &(lo, hi) in &ranges {
            prop_assert_eq!(
                pairs(a.difference_runs_in(&b, r(lo, hi))),
                bit_runs(&diff, lo, hi)
            );
        }
        prop_assert_eq!(a == b, abits == bbits);
        // Rebuilding from the runs, in reverse, gives an equal binmap.
        let runs: Vec<ChunkRange> = a.filled_runs().collect();
        let rebuilt: Binmap = runs.into_iter().rev().collect();
        prop_assert_eq!(&rebuilt, &a);
    }

    #[test]
    fn set_then_clear_in_any_order_is_empty(
        ops in prop::collection::vec(small_op(), 1..30),
        seed in any::<u64>(),
    ) {
        let mut map = Binmap::new();
        for &(_, first, last) in &ops {
            map.set(r(first, last));
        }
        // Clear the same ranges in a rotated order.
        let k = (seed % ops.len() as u64) as usize;
        for &(_, first, last) in ops[k..].iter().chain(&ops[..k]) {
            map.clear(r(first, last));
        }
        prop_assert!(map.is_empty());
        prop_assert_eq!(map.count(), 0);
        prop_assert_eq!(map.heap_bytes(), 0);
    }
}

/// A comb: every `step`-th chunk from `offset`, set one at a time, the way
/// rarest-first HAVEs fill a peer's binmap. It fragments the tree enough to
/// turn it flat (`Binmap::is_flat`), so the updates after it run on the
/// flat layout, and the ones that fill or empty it bring the tree back.
fn comb(step: u64, offset: u64) -> Vec<Op> {
    (offset..OPS_END)
        .step_by(step as usize)
        .map(|i| (true, i, i))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn flat_layout_answers_like_the_tree(
        step in 2..9u64,
        offset in 0..8u64,
        ops in prop::collection::vec(small_op(), 0..40),
        other_ops in prop::collection::vec(small_op(), 0..20),
        ranges in prop::collection::vec(small_range(), 1..20),
    ) {
        let combed = comb(step, offset);
        let mut map = Binmap::new();
        apply(&mut map, &combed);
        prop_assert!(map.is_flat(), "a comb of step {} did not go flat", step);
        apply(&mut map, &ops);
        let all: Vec<Op> = combed.iter().chain(&ops).copied().collect();
        let bits = bitset(&all);
        check_dense(&map, &bits, &ranges);
        // Differences between a flat and a tree binmap, both ways.
        let mut other = Binmap::new();
        apply(&mut other, &other_ops);
        let obits = bitset(&other_ops);
        let diff = |x: &[bool], y: &[bool]| -> Vec<bool> {
            x.iter().zip(y).map(|(&p, &q)| p && !q).collect()
        };
        let (ab, ba) = (diff(&bits, &obits), diff(&obits, &bits));
        prop_assert_eq!(pairs(map.difference_runs(&other)), bit_runs(&ab, 0, UNIVERSE - 1));
        prop_assert_eq!(pairs(other.difference_runs(&map)), bit_runs(&ba, 0, UNIVERSE - 1));
        for pos in (0..UNIVERSE).step_by(7) {
            let want = (pos..UNIVERSE).find(|&i| ab[i as usize]).map(ChunkIndex);
            prop_assert_eq!(map.first_in_difference(&other, ChunkIndex(pos)), want);
        }
        prop_assert_eq!(map == other, bits == obits);
        // A copy rebuilt through the tree is equal, whatever its layout.
        let rebuilt: Binmap = map.filled_runs().collect();
        prop_assert_eq!(&rebuilt, &map);
    }
}

// ---------------------------------------------------------------------------
// Sparse model: sorted, disjoint, non-adjacent inclusive intervals.

#[derive(Clone, Debug, Default, PartialEq)]
struct Intervals(Vec<(u64, u64)>);

impl Intervals {
    fn clear(&mut self, lo: u64, hi: u64) {
        let mut out = Vec::new();
        for &(a, b) in &self.0 {
            if b < lo || a > hi {
                out.push((a, b));
            } else {
                if a < lo {
                    out.push((a, lo - 1));
                }
                if b > hi {
                    out.push((hi + 1, b));
                }
            }
        }
        self.0 = out;
    }

    fn set(&mut self, lo: u64, hi: u64) {
        self.clear(lo, hi);
        self.0.push((lo, hi));
        self.0.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for &(a, b) in &self.0 {
            match merged.last_mut() {
                Some(last) if last.1 + 1 == a => last.1 = b,
                _ => merged.push((a, b)),
            }
        }
        self.0 = merged;
    }

    fn contains(&self, c: u64) -> bool {
        self.0.iter().any(|&(a, b)| a <= c && c <= b)
    }

    fn first_filled_from(&self, pos: u64) -> Option<u64> {
        self.0
            .iter()
            .find(|&&(_, b)| b >= pos)
            .map(|&(a, _)| a.max(pos))
    }

    fn last_filled_to(&self, pos: u64) -> Option<u64> {
        self.0
            .iter()
            .rev()
            .find(|&&(a, _)| a <= pos)
            .map(|&(_, b)| b.min(pos))
    }

    fn first_empty_from(&self, pos: u64) -> Option<u64> {
        match self.0.iter().find(|&&(a, b)| a <= pos && pos <= b) {
            Some(&(_, b)) => b.checked_add(1).filter(|&e| e <= MAX),
            None => Some(pos),
        }
    }

    fn count_in(&self, lo: u64, hi: u64) -> u64 {
        self.0
            .iter()
            .map(|&(a, b)| {
                let (x, y) = (a.max(lo), b.min(hi));
                if x <= y {
                    y - x + 1
                } else {
                    0
                }
            })
            .sum()
    }

    fn runs_in(&self, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        self.0
            .iter()
            .map(|&(a, b)| (a.max(lo), b.min(hi)))
            .filter(|&(x, y)| x <= y)
            .collect()
    }

    fn minus(&self, other: &Intervals) -> Intervals {
        let mut out = self.clone();
        for &(a, b) in &other.0 {
            out.clear(a, b);
        }
        out
    }
}

const ANCHORS: [u64; 4] = [0, 1 << 40, 1 << 62, MAX];

/// A chunk near an anchor, or anywhere.
fn sparse_point() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => (0..ANCHORS.len(), -300i64..300).prop_map(|(i, off)| {
            ANCHORS[i].saturating_add_signed(off).min(MAX)
        }),
        1 => 0..=MAX,
    ]
}

fn sparse_op() -> impl Strategy<Value = Op> {
    (any::<bool>(), sparse_point(), sparse_point())
        .prop_map(|(set, a, b)| (set, a.min(b), a.max(b)))
}

fn intervals(ops: &[Op]) -> Intervals {
    let mut model = Intervals::default();
    for &(set, first, last) in ops {
        if set {
            model.set(first, last);
        } else {
            model.clear(first, last);
        }
    }
    model
}

/// Every place where an answer can change: op ends, their neighbours, anchors.
fn probe_points(ops: &[Op]) -> Vec<u64> {
    let mut points: Vec<u64> = ANCHORS.to_vec();
    for &(_, first, last) in ops {
        for p in [first, last] {
            points.extend([p.saturating_sub(1), p, (p + 1).min(MAX)]);
        }
    }
    points.sort_unstable();
    points.dedup();
    points
}

fn check_sparse(map: &Binmap, model: &Intervals, points: &[u64]) {
    assert_eq!(map.count(), model.count_in(0, MAX));
    assert_eq!(pairs(map.filled_runs()), model.0);
    for &p in points {
        assert_eq!(map.contains(ChunkIndex(p)), model.contains(p), "{p}");
        assert_eq!(
            map.first_filled_from(ChunkIndex(p)).map(ChunkIndex::get),
            model.first_filled_from(p),
            "{p}"
        );
        assert_eq!(
            map.last_filled_to(ChunkIndex(p)).map(ChunkIndex::get),
            model.last_filled_to(p),
            "{p}"
        );
        assert_eq!(
            map.first_empty_from(ChunkIndex(p)).map(ChunkIndex::get),
            model.first_empty_from(p),
            "{p}"
        );
    }
    // Ranges between neighbouring probe points, and from each to the end.
    for w in points.windows(2) {
        for (lo, hi) in [(w[0], w[1]), (w[0], MAX), (0, w[1])] {
            let range = r(lo, hi);
            let n = model.count_in(lo, hi);
            assert_eq!(map.count_in(range), n, "{range}");
            assert_eq!(map.is_filled(range), n == range.len(), "{range}");
            assert_eq!(map.is_empty_range(range), n == 0, "{range}");
            assert_eq!(pairs(map.filled_runs_in(range)), model.runs_in(lo, hi));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn sparse_queries_match_intervals(ops in prop::collection::vec(sparse_op(), 0..30)) {
        let mut map = Binmap::new();
        apply(&mut map, &ops);
        check_sparse(&map, &intervals(&ops), &probe_points(&ops));
    }

    #[test]
    fn sparse_difference_matches_intervals(
        a_ops in prop::collection::vec(sparse_op(), 0..20),
        b_ops in prop::collection::vec(sparse_op(), 0..20),
    ) {
        let (mut a, mut b) = (Binmap::new(), Binmap::new());
        apply(&mut a, &a_ops);
        apply(&mut b, &b_ops);
        let (am, bm) = (intervals(&a_ops), intervals(&b_ops));
        let diff = am.minus(&bm);
        prop_assert_eq!(pairs(a.difference_runs(&b)), diff.0.clone());
        prop_assert_eq!(pairs(b.difference_runs(&a)), bm.minus(&am).0);
        let all_ops: Vec<Op> = a_ops.iter().chain(&b_ops).copied().collect();
        let points = probe_points(&all_ops);
        for &p in &points {
            prop_assert_eq!(
                a.first_in_difference(&b, ChunkIndex(p)).map(ChunkIndex::get),
                diff.first_filled_from(p)
            );
        }
        for w in points.windows(2) {
            prop_assert_eq!(
                pairs(a.difference_runs_in(&b, r(w[0], w[1]))),
                diff.runs_in(w[0], w[1])
            );
        }
        prop_assert_eq!(a == b, am == bm);
    }
}
