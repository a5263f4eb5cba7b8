//! The chunk sets pickers choose from, shared by every policy.
//!
//! - *Fresh* chunks: the peer has them, we lack them, nobody is asked for
//!   them: `peer_has − have − requested − requested_from_peer`. (A request
//!   late at this peer leaves `requested` to be asked elsewhere, but stays
//!   outstanding here: asking this peer again would only queue it behind
//!   the first request, or duplicate it.)
//! - *End-game* chunks: the peer has them, we lack them, they are asked from
//!   other peers but not from this one:
//!   `(requested − requested_from_peer) ∩ peer_has − have`.
//!
//! Binmaps answer two-set questions ("first chunk in A − B") in one descent;
//! more sets are combined by leapfrogging: find the first chunk of the
//! leading pair, and while another set disagrees there, jump to where it
//! stops disagreeing. The leading pair is chosen so that the jumps are few:
//! the other sets (requests in flight, this pick's own choices) are small.

use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange, MAX_CHUNK_INDEX};

use super::PickView;

/// A chunk set: `lead − lead_minus`, within `within` if given, minus every
/// set of `not_in`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Candidates<'a> {
    lead: &'a Binmap,
    lead_minus: &'a Binmap,
    within: Option<&'a Binmap>,
    not_in: [&'a Binmap; 3],
}

/// The empty set, for a `not_in` slot a kind of candidates does not use.
static NOTHING: Binmap = Binmap::new();

impl<'a> Candidates<'a> {
    /// Fresh chunks, less those in `picked` (chosen earlier in this pick).
    pub(crate) fn fresh(view: &PickView<'a>, picked: &'a Binmap) -> Self {
        Candidates {
            lead: view.peer_has,
            lead_minus: view.have,
            within: None,
            not_in: [view.requested, view.requested_from_peer, picked],
        }
    }

    /// End-game chunks, less those in `picked`.
    pub(crate) fn end_game(view: &PickView<'a>, picked: &'a Binmap) -> Self {
        Candidates {
            lead: view.requested,
            lead_minus: view.requested_from_peer,
            within: Some(view.peer_has),
            not_in: [view.have, picked, &NOTHING],
        }
    }

    /// Whether the end game is open: every chunk we lack is requested from
    /// some peer (or the content's size is not known yet). Only then may a
    /// pick duplicate a request — a peer with nothing fresh for us in the
    /// middle of a download is not the end game, and duplicating requests
    /// there wasted most of E1's upload once peers were not choked (every
    /// peer asking every other for the chunks already on their way).
    ///
    /// Never in a live stream: it has no end, and a viewer at the live edge
    /// finds every chunk a peer announces asked of another peer already,
    /// pick after pick. Duplicating those requests spent the viewers'
    /// upload on copies (`live-small`, std-vod with a 0.5 s high set, 8
    /// upload slots, seeds 1 and 2: continuity 0.70 and 0.61 with the end
    /// game, 0.96 and 0.96 without); a request late at one peer is asked
    /// again elsewhere by its deadline instead.
    pub(crate) fn end_game_open(view: &PickView<'_>) -> bool {
        if view.live {
            return false;
        }
        let Some(n) = view.chunk_count else {
            return true;
        };
        // Most of a download: fewer chunks had and asked than the content
        // holds (whole-map counts are constant time).
        let all = ChunkRange::new(0u64, MAX_CHUNK_INDEX).expect("a valid range");
        if view.have.count_in(all) + view.requested.count_in(all) < n {
            return false;
        }
        // Near the end: look for a chunk neither had nor asked, run by run.
        let mut x = ChunkIndex(0);
        loop {
            match view.have.first_empty_from(x) {
                Some(gap) if gap.0 < n => {
                    if !view.requested.contains(gap) {
                        return false;
                    }
                    match view.requested.first_empty_from(gap) {
                        Some(next) => x = next,
                        None => return true,
                    }
                }
                _ => return true,
            }
        }
    }

    /// The first maximal run of the set within `lo ..= hi` (cut at `hi`).
    pub(crate) fn first_run(&self, lo: u64, hi: u64) -> Option<ChunkRange> {
        let mut x = lo;
        'search: loop {
            if x > hi {
                return None;
            }
            x = self
                .lead
                .first_in_difference(self.lead_minus, ChunkIndex(x))?
                .0;
            if x > hi {
                return None;
            }
            if let Some(w) = self.within {
                let y = w.first_filled_from(ChunkIndex(x))?.0;
                if y != x {
                    x = y;
                    continue 'search;
                }
            }
            for e in self.not_in.iter().filter(|e| !e.is_empty()) {
                let y = e.first_empty_from(ChunkIndex(x))?.0;
                if y != x {
                    x = y;
                    continue 'search;
                }
            }
            // `x` is in the set; the run ends where any set changes its mind.
            let before = |found: Option<ChunkIndex>| found.map_or(MAX_CHUNK_INDEX, |c| c.0 - 1);
            let mut end = hi
                .min(before(self.lead.first_empty_from(ChunkIndex(x))))
                .min(before(self.lead_minus.first_filled_from(ChunkIndex(x))));
            if let Some(w) = self.within {
                end = end.min(before(w.first_empty_from(ChunkIndex(x))));
            }
            for e in self.not_in.iter().filter(|e| !e.is_empty()) {
                end = end.min(before(e.first_filled_from(ChunkIndex(x))));
            }
            return ChunkRange::new(x, end);
        }
    }

    /// The first chunk of the longest run of the set that ends at `at − 1`,
    /// at most `max` chunks long; `at` when `at − 1` is not in the set. Takes
    /// a logarithmic number of searches (galloping, then bisecting).
    pub(crate) fn extend_left(&self, at: u64, max: u64) -> u64 {
        let max = max.min(at);
        // Whether every chunk of `from ..= at − 1` is in the set.
        let full = |from: u64| {
            self.first_run(from, at - 1)
                .is_some_and(|run| run.first().0 == from && run.last().0 == at - 1)
        };
        // Gallop: `good` chunks left of `at` are known to be in the set.
        let (mut good, mut step) = (0u64, 1u64);
        loop {
            let probe = (good + step).min(max);
            if probe == good {
                return at - good;
            }
            if !full(at - probe) {
                // The boundary lies between `good` and `probe`: bisect.
                let mut bad = probe;
                while bad - good > 1 {
                    let mid = good + (bad - good) / 2;
                    if full(at - mid) {
                        good = mid;
                    } else {
                        bad = mid;
                    }
                }
                return at - good;
            }
            good = probe;
            step *= 2;
        }
    }

    /// Appends the set's runs within `lo ..= hi`, left to right, to `out`
    /// until `budget` chunks are taken; returns the chunks taken.
    pub(crate) fn take_runs(
        &self,
        lo: u64,
        hi: u64,
        budget: u64,
        out: &mut Vec<ChunkRange>,
    ) -> u64 {
        let mut taken = 0;
        let mut x = lo;
        while taken < budget && x <= hi {
            let Some(run) = self.first_run(x, hi) else {
                break;
            };
            let len = run.len().min(budget - taken);
            out.extend(ChunkRange::with_len(run.first(), len));
            taken += len;
            match run.last().0.checked_add(1) {
                Some(next) => x = next,
                None => break,
            }
        }
        taken
    }

    /// [`Candidates::take_runs`] over chunks `start .. end`, then wrapping
    /// around to `0 .. start`.
    pub(crate) fn take_wrapping(
        &self,
        start: u64,
        end: u64,
        budget: u64,
        out: &mut Vec<ChunkRange>,
    ) -> u64 {
        if end == 0 {
            return 0;
        }
        let start = if start < end { start } else { 0 };
        let mut taken = self.take_runs(start, end - 1, budget, out);
        if start > 0 && taken < budget {
            taken += self.take_runs(0, start - 1, budget - taken, out);
        }
        taken
    }
}

/// One past the last chunk worth considering: the content's chunk count
/// when known, else one past the last chunk the peer has (0 when it has
/// none). At most 2^63, one past [`MAX_CHUNK_INDEX`].
pub(crate) fn domain_end(view: &PickView<'_>) -> u64 {
    match view.chunk_count {
        Some(n) => n.min(MAX_CHUNK_INDEX + 1),
        None => last_filled(view.peer_has).map_or(0, |last| last + 1),
    }
}

/// The last filled chunk of `map`, by bisection over "is anything filled
/// from here" (63 searches at most).
fn last_filled(map: &Binmap) -> Option<u64> {
    let mut lo = map.first_filled_from(ChunkIndex(0))?.0;
    let mut hi = MAX_CHUNK_INDEX; // The answer lies in `lo ..= hi`.
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if map.first_filled_from(ChunkIndex(mid)).is_some() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo)
}

#[cfg(test)]
mod tests {
    use super::super::availability::Availability;
    use super::*;
    use crate::time::Instant;

    fn r(first: u64, last: u64) -> ChunkRange {
        ChunkRange::new(first, last).unwrap()
    }

    fn map(ranges: &[(u64, u64)]) -> Binmap {
        ranges.iter().map(|&(a, b)| r(a, b)).collect()
    }

    static NO_LATE: Binmap = Binmap::new();

    fn view<'a>(
        [have, requested, from_peer, peer_has]: [&'a Binmap; 4],
        availability: &'a Availability,
        chunk_count: Option<u64>,
    ) -> PickView<'a> {
        PickView {
            now: Instant::ZERO,
            chunk_count,
            have,
            requested,
            requested_from_peer: from_peer,
            peer_has,
            late: &NO_LATE,
            availability,
            peer_counted: true,
            playhead: None,
            live: false,
            dry: None,
            link: crate::pick::PeerLink::default(),
        }
    }

    fn runs(c: &Candidates<'_>, lo: u64, hi: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        c.take_runs(lo, hi, u64::MAX, &mut out);
        out.iter().map(|r| (r.first().0, r.last().0)).collect()
    }

    #[test]
    fn the_end_game_opens_when_every_missing_chunk_is_asked() {
        let a = Availability::new();
        let none = Binmap::new();
        let open = |have: &[(u64, u64)], requested: &[(u64, u64)], n: Option<u64>| {
            let (h, r) = (map(have), map(requested));
            Candidates::end_game_open(&view([&h, &r, &none, &none], &a, n))
        };
        assert!(!open(&[(0, 9)], &[(10, 49)], Some(100)));
        assert!(open(&[(0, 9)], &[(10, 99)], Some(100)));
        // Had and asked chunks overlap (counts reach n) yet chunk 60 is
        // neither: the walk finds it.
        assert!(!open(&[(0, 59), (61, 99)], &[(0, 59), (70, 99)], Some(100)));
        assert!(open(&[(0, 59), (61, 99)], &[(50, 60)], Some(100)));
        // Chunks past the end do not count.
        assert!(open(&[(0, 49)], &[(50, 99)], Some(100)));
        assert!(!open(&[(0, 49), (200, 300)], &[(60, 99)], Some(100)));
        // Before the size is known, a peer with nothing fresh may duplicate.
        assert!(open(&[], &[], None));
    }

    #[test]
    fn fresh_and_end_game_sets() {
        let a = Availability::new();
        let have = map(&[(0, 9)]);
        let requested = map(&[(20, 29), (40, 44)]);
        let from_peer = map(&[(40, 44)]);
        let peer_has = map(&[(5, 49), (60, 60)]);
        let picked = map(&[(33, 34)]);
        let v = view([&have, &requested, &from_peer, &peer_has], &a, Some(100));
        let fresh = Candidates::fresh(&v, &picked);
        assert_eq!(
            runs(&fresh, 0, 99),
            [(10, 19), (30, 32), (35, 39), (45, 49), (60, 60)]
        );
        assert_eq!(runs(&fresh, 12, 31), [(12, 19), (30, 31)]);
        let end_game = Candidates::end_game(&v, &picked);
        assert_eq!(runs(&end_game, 0, 99), [(20, 29)]);
        assert_eq!(domain_end(&v), 100);
        let unknown = view([&have, &requested, &from_peer, &peer_has], &a, None);
        assert_eq!(domain_end(&unknown), 61);
    }

    #[test]
    fn taking_respects_the_budget_and_wraps() {
        let a = Availability::new();
        let empty = Binmap::new();
        let peer_has = map(&[(0, 4), (10, 14)]);
        let v = view([&empty, &empty, &empty, &peer_has], &a, Some(20));
        let fresh = Candidates::fresh(&v, &empty);
        let mut out = Vec::new();
        assert_eq!(fresh.take_wrapping(12, 20, 6, &mut out), 6);
        assert_eq!(out, [r(12, 14), r(0, 2)]);
        out.clear();
        assert_eq!(fresh.take_wrapping(12, 20, 0, &mut out), 0);
        assert!(out.is_empty());
    }

    #[test]
    fn extending_left_finds_the_run_start() {
        let a = Availability::new();
        let empty = Binmap::new();
        let peer_has = map(&[(3, 1000)]);
        let v = view([&empty, &empty, &empty, &peer_has], &a, Some(2000));
        let fresh = Candidates::fresh(&v, &empty);
        assert_eq!(fresh.extend_left(500, 64), 436);
        assert_eq!(fresh.extend_left(500, 1000), 3);
        assert_eq!(fresh.extend_left(100, 97), 3);
        assert_eq!(fresh.extend_left(100, 0), 100);
        assert_eq!(fresh.extend_left(3, 10), 3);
        assert_eq!(fresh.extend_left(0, 10), 0);
        for at in 4..60 {
            assert_eq!(fresh.extend_left(at, 1000), 3, "at {at}");
        }
    }

    #[test]
    fn last_filled_bisects() {
        assert_eq!(last_filled(&Binmap::new()), None);
        assert_eq!(last_filled(&map(&[(5, 5)])), Some(5));
        assert_eq!(last_filled(&map(&[(0, 3), (77, 1 << 40)])), Some(1 << 40));
        assert_eq!(
            last_filled(&map(&[(0, MAX_CHUNK_INDEX)])),
            Some(MAX_CHUNK_INDEX)
        );
    }
}
