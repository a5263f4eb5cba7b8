//! `live`: the picker for live streams (RFC 7574 §6.1).
//!
//! A live viewer needs two things of its requests: the chunks its player
//! plays next, on time, and the newest chunks, early, so that it has
//! something its neighbours lack and the stream spreads through the swarm
//! instead of through the source alone. So a pick takes:
//! - **the urgent set** — the chunks from the playhead on, `urgent` of
//!   them, in order; first those whose request went late at another peer
//!   (see [`Picker::deadline`]), then the rest;
//! - **then the newest chunks first**, a segment of [`SEGMENT`] chunks at a
//!   time from the newest the peer has down to the urgent set, each
//!   segment's fresh chunks in order from an entry point of the viewer's
//!   own, wrapping around (so a request is a few long ranges); a segment
//!   partly asked of another peer is left to that peer.
//!
//! Each viewer enters a segment at its own pseudo-random offset
//! ([`LivePicker::entry`]). Entering every segment at its first chunk, as
//! the walk did before, made every neighbour of the source ask it for the
//! same heads: the source's uplink, shared by its unchoked neighbours,
//! carries well under the stream's rate to each, so each got a munro's
//! first chunks, and the newer munro came before the tail. Tails went out late, from few holders, and a
//! viewer two or three hops away skipped them. `live-500`'s links, seed 1,
//! 100 viewers: chunks 26-31 of one munro reached 20 viewers, 5.5 s after
//! they were made at the earliest, while its chunks 0-22 reached all 100.
//! With entries spread, the source's copies spread over the whole munro
//! and the viewers trade the parts they got. Mean continuity over seeds
//! 1-4, `live-500`'s links for 60 s (`--set live.duration=60s --set
//! duration=75s --set peers.viewers.count=N`), heads first → spread
//! entries (seeds listed where the mean hides a swing):
//!
//! | viewers | heads first | spread entries |
//! |---|---|---|
//! | 20 (`live-small`) | 0.998 | 0.992 (0.989, 0.999, 0.993, 0.987) |
//! | 40 | 0.928 (0.975, 0.767, 0.988, 0.981) | 0.989 (0.996, 0.981, 0.992, 0.987) |
//! | 100 | 0.584 (0.468, 0.793, 0.517, 0.558) | 0.726 (0.512, 0.822, 0.867, 0.702) |
//! | 200, seeds 1-2 | 0.385 (0.445, 0.325) | 0.558 (0.710, 0.406) |
//!
//! `live-small` loses a little: one viewer in seeds 1 and 4 played 0.80 of
//! its time. Past 40 viewers the swarm still falls behind; see issue 24's
//! notes.
//!
//! Newest first is the "latest useful chunk" policy of epidemic live
//! streaming (Bonald et al., SIGMETRICS 2008), which spreads a chunk fast
//! once it exists. The VoD
//! pickers' rarest-first has no counts to go by in a live stream — the
//! availability is sized by a content length that a live stream lacks —
//! and so picked at random within its window: in `live-small` (seed 1,
//! std-vod with a 0.5 s high set) a fresh munro waited a median 0.67 s
//! (p90 2.6 s) for anyone to ask for it, while viewers asked the source
//! for chunks 2.3 s old in median that their neighbours held.
//!
//! There is no end game: a live stream never ends, and while a viewer is
//! at the live edge every chunk a peer has is typically asked of another
//! already, so duplicating requests there spends upload on copies (see
//! `Candidates::end_game_open`). A chunk late at one
//! peer is asked again elsewhere through its deadline.

use std::time::Duration;

use rand::Rng;

use super::candidates::{domain_end, Candidates};
use super::swift_vod::urgent_deadline;
use super::{MediaRate, PickView, Picker};
use crate::binmap::Binmap;
use crate::chunk::ChunkRange;
use crate::mix::{splitmix64, GOLDEN_GAMMA};
use crate::play::timing::Timing;
use crate::time::Instant;

/// The urgent set's media time by default. Chosen by a scan of
/// continuity (mean over viewers, then over seeds) with 8 upload slots,
/// made before segments were left to one peer (`left_to_another`):
///
/// | urgent | `live-small`, seeds 1-4 | `live-500` links, 20 viewers, seeds 1-4 | 40 viewers, seeds 1-2 |
/// |---|---|---|---|
/// | 0.3 s | 0.893 | 0.957 | 0.593 |
/// | 0.5 s | 0.951 | 0.922 | 0.599 |
/// | 0.75 s | 0.933 | 0.930 | 0.706 |
/// | 1 s | 0.920 | 0.742 | 0.491 |
///
/// Single seeds swing by 0.2 either way, so the scan separates only the
/// longest window (worse) from the rest; 0.75 s is best on the sum.
pub const URGENT: Duration = Duration::from_millis(750);

/// One chunk in this many asked (past the urgent set) is the oldest fresh
/// chunk the peer has, not the newest: a hole.
///
/// Newest first alone leaves holes. A viewer asks a peer at the live edge
/// for about one chunk per chunk it gets back, always the newest, so a
/// chunk that reached only the few viewers the source sent it to is asked
/// of them by nobody until it turns urgent, and then by the whole swarm
/// at once. Traced in `live-500` with 200 viewers, seed 2
/// (`RUST_LOG=ppspp_core::proto::channel=trace`): chunks 14,470-14,473
/// reached 3 viewers within 0.8 s of being made, 63 neighbours heard of
/// them, and nobody asked until 3.8 s after; 111 viewers stalled on them.
/// Mixing in-order picks into a greedy (here newest-first) policy is what
/// Zhao, Lui and Chiu found best for data-driven streaming ("Exploring the
/// optimal chunk selection policy for data-driven P2P streaming systems",
/// IEEE P2P 2009).
///
/// Scan, `live-500` with 200 viewers for 180 s (`--set
/// live.duration=180s --set duration=195s --set peers.viewers.count=200`),
/// continuity / lag p50 / lag p95 / stalls per viewer / delivery p50:
///
/// | share | seeds | continuity | lag p50 s | lag p95 s | stalls | delivery p50 s |
/// |---|---|---|---|---|---|---|
/// | none | 1, 2, 3 | 0.9945, 0.9809, 0.9929 | 4.98 | 7.67 | 2.92 | 2.06 |
/// | 1 in 2 | 2 | 0.9800 | 4.63 | 7.34 | 2.92 | 1.74 |
/// | 1 in 4 | 1, 2, 3 | 0.9952, 0.9974, 0.9983 | 4.08 | 7.00 | 0.64 | 1.62 |
///
/// 1 in 4 is better on every figure and every seed; 1 in 2 asks old
/// chunks too often for the newest to spread. On `live-small` (seeds 1-3)
/// 1 in 4 against none: continuity 0.9962 against 0.9967 (0.9995, 1.0000,
/// 0.9891 against 0.9949, 0.9995, 0.9958), lag p95 5.98 against 6.90 s,
/// delivery p50 0.89 against 1.01 s.
pub const OLDEST_SHARE: u64 = 4;

/// The chunks of one step of the newest-first walk: a munro of RFC 7574
/// §6.1.2's default 32 chunks, the unit a live source announces.
pub const SEGMENT: u64 = 32;

/// Urgent chunks in order, then the newest first (see the module
/// documentation).
#[derive(Clone, Copy, Debug)]
pub struct LivePicker {
    /// The urgent set's size in chunks (at least one).
    urgent: u64,
    timing: Timing,
    /// What the entry points into segments derive from: drawn from the
    /// driver's randomness at the first pick, so that it differs from
    /// viewer to viewer and stays put from pick to pick.
    salt: Option<u64>,
    /// Whether segments are entered at the viewer's own offset (always,
    /// except in tests of the walk's order).
    spread_entries: bool,
    /// One chunk in this many goes oldest first ([`OLDEST_SHARE`]; 0:
    /// none).
    oldest_share: u64,
    /// Picks made, to give a budget of one chunk to the oldest every
    /// `oldest_share`-th pick.
    picks: u64,
}

impl LivePicker {
    /// An urgent set of [`URGENT`] at `rate`.
    pub fn new(rate: MediaRate) -> Self {
        Self::sized(rate, URGENT)
    }

    /// An urgent set of `urgent` media time at `rate`.
    pub fn sized(rate: MediaRate, urgent: Duration) -> Self {
        LivePicker {
            urgent: rate.chunks_for(urgent).max(1),
            timing: Timing::new(rate.chunk_size, rate.bitrate),
            salt: None,
            spread_entries: true,
            oldest_share: OLDEST_SHARE,
            picks: 0,
        }
    }

    /// The same picker entering every segment at its first chunk, so that
    /// tests can name the walk's ranges.
    #[cfg(test)]
    pub(crate) fn entering_at_heads(self) -> Self {
        LivePicker {
            spread_entries: false,
            ..self
        }
    }

    /// The same picker without the oldest-first share, so that tests can
    /// name the walk's ranges.
    #[cfg(test)]
    pub(crate) fn newest_only(self) -> Self {
        LivePicker {
            oldest_share: 0,
            ..self
        }
    }

    /// The same picker sending one chunk in `share` oldest first.
    #[cfg(test)]
    pub(crate) fn with_oldest_share(self, share: u64) -> Self {
        LivePicker {
            oldest_share: share,
            ..self
        }
    }

    /// Where the newest-first walk enters the segment of chunks `lo ..=
    /// hi` (one [`SEGMENT`] or the part of it past the floor or up to the
    /// newest chunk): this viewer's offset into the whole segment if that
    /// lies in `lo ..= hi`, else the same offset folded into it. The walk
    /// takes `entry ..= hi`, then `lo .. entry`.
    pub(crate) fn entry(&self, salt: u64, lo: u64, hi: u64) -> u64 {
        if !self.spread_entries || hi <= lo {
            return lo;
        }
        let segment = hi / SEGMENT;
        // Neighbouring segments get unrelated offsets.
        let offset = splitmix64(salt ^ segment.wrapping_mul(GOLDEN_GAMMA)) % SEGMENT;
        let whole = segment * SEGMENT + offset;
        if (lo..=hi).contains(&whole) {
            whole
        } else {
            lo + offset % (hi - lo + 1)
        }
    }

    /// The urgent set's size in chunks.
    pub fn urgent_chunks(&self) -> u64 {
        self.urgent
    }

    /// The urgent set at `view`'s playhead, cut at the peer's newest chunk;
    /// while the player waits for data, everything up to that chunk.
    fn urgent_set(&self, view: &PickView<'_>) -> Option<ChunkRange> {
        let end = domain_end(view);
        let first = view.playhead?.0;
        let len = if view.link.prebuffering {
            u64::MAX
        } else {
            self.urgent
        };
        let last = first.saturating_add(len - 1).min(end.checked_sub(1)?);
        ChunkRange::new(first, last)
    }
}

impl Picker for LivePicker {
    fn name(&self) -> &'static str {
        "live"
    }

    fn pick(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    ) {
        let end = domain_end(view);
        if max_chunks == 0 || end == 0 {
            return;
        }
        let none = Binmap::new();
        let fresh = Candidates::fresh(view, &none);
        let mut budget = max_chunks;
        let urgent = self.urgent_set(view);
        if let Some(u) = urgent {
            let first = out.len();
            for run in view.late.filled_runs_in(u) {
                if budget == 0 {
                    return;
                }
                budget -= fresh.take_runs(run.first().0, run.last().0, budget, out);
            }
            // The walk in order skips the late chunks just taken.
            let mut late_taken = Binmap::new();
            for &r in &out[first..] {
                late_taken.set(r);
            }
            budget -= Candidates::fresh(view, &late_taken).take_runs(
                u.first().0,
                u.last().0,
                budget,
                out,
            );
        }
        // Below the playhead nothing is wanted: the player passed it.
        let floor = match (urgent, view.playhead) {
            (Some(u), _) => u.last().0 + 1,
            (None, Some(p)) => p.0,
            (None, None) => 0,
        };
        let salt = *self.salt.get_or_insert_with(|| rng.next_u64());
        // Every OLDEST_SHARE-th chunk asked goes to the oldest fresh chunk
        // past the urgent set: a hole the newest-first walk would leave
        // until it turns urgent.
        let mut old_taken = Binmap::new();
        if self.oldest_share > 0 && budget > 0 && end > floor {
            self.picks = self.picks.wrapping_add(1);
            let share = self.oldest_share;
            let k = budget / share + u64::from(budget < share && self.picks.is_multiple_of(share));
            if k > 0 {
                let first = out.len();
                budget -= fresh.take_runs(floor, end - 1, k, out);
                for &r in &out[first..] {
                    old_taken.set(r);
                }
            }
        }
        let fresh = Candidates::fresh(view, &old_taken);
        let mut hi = end - 1;
        while budget > 0 && hi >= floor {
            let lo = (hi - hi % SEGMENT).max(floor);
            if !left_to_another(view, lo, hi) {
                let entry = self.entry(salt, lo, hi);
                budget -= fresh.take_runs(entry, hi, budget, out);
                if entry > lo && budget > 0 {
                    budget -= fresh.take_runs(lo, entry - 1, budget, out);
                }
            }
            match lo.checked_sub(1) {
                Some(next) => hi = next,
                None => break,
            }
        }
    }

    /// An urgent request is due a safety margin before its chunk plays
    /// (the playhead taken to play now), but no sooner than the peer
    /// normally answers; swift-vod's rule (seed paper 000 §III-C).
    fn deadline(&self, view: &PickView<'_>, range: ChunkRange) -> Option<Instant> {
        let playhead = view.playhead?;
        let urgent = self.urgent_set(view)?;
        if range.first() > urgent.last() || range.last() < urgent.first() {
            return None;
        }
        Some(urgent_deadline(self.timing, view, playhead, range))
    }
}

/// Whether the segment `lo ..= hi`, past the urgent set, is left to the
/// peer asked for part of it already: a segment is asked of one peer at a
/// time (the rest of it from the same peer), unless it turns urgent.
/// Splitting the newest munro among every peer that had it cost
/// continuity; over `live-small` (seeds 1-4), `live-500`'s links with 20
/// viewers (seeds 1-3) and 40 (seeds 1-2), mean continuity went from 0.933
/// / 0.909 / 0.706 to 0.992 / 0.936 / 0.750 with this rule. Single seeds
/// move either way; the hash bytes per DATA hardly changed (16.2 % of all
/// bytes sent against 15.7 %), so that is not why.
///
/// Its cost is time: a viewer that heard a peer has a chunk of a segment
/// left to another waits for that one. In `live-500` with 200 viewers
/// (20 s, seed 1, `bench/live_hops.py`) the wait from the HAVE to the
/// REQUEST is 28 ms in median but 0.46 s at p90, the largest tail of a
/// hop. Without the rule, over 180 s and seeds 1-3 (`--set
/// live.duration=180s --set duration=195s --set
/// peers.viewers.count=200`), delivery p50 fell from 2.06 to 1.62 s and
/// lag p50 from 4.98 to 4.40 s, but continuity fell from 0.9894 to 0.9845
/// (stalls per viewer 2.9 to 4.7) and lag p95 hardly moved (7.67 to
/// 7.57 s), so the rule stays.
fn left_to_another(view: &PickView<'_>, lo: u64, hi: u64) -> bool {
    let Some(segment) = ChunkRange::new(lo, hi) else {
        return false;
    };
    !view.requested.is_empty_range(segment) && view.requested_from_peer.is_empty_range(segment)
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
