//! `std-vod`: the standard priority-based VoD picker of seed paper 000's
//! comparison (§III-C, Fig. 4, and §IV-A).
//!
//! The content is cut into three priority sets at the playback position:
//! - *high*: the window right after the playhead, taken in order — it is
//!   what playback needs first;
//! - *mid*: the window after it, taken rarest-first;
//! - *low*: everything else, rarest-first, so the download still completes
//!   and rare chunks spread.
//!
//! A pick fills its budget from the high set, then the mid set, then the
//! low one. There is no peer selection: every peer with room for a request
//! is asked (the paper: "forward the requests to random connected peers").
//! When nothing is fresh at the peer, the end game goes in order from the
//! playhead, so the most urgent duplicates go out first.
//!
//! Window sizes. The default high set is 10 s of video, the paper's
//! setting in its comparison with BitTorrent (§IV-B: "the high-priority
//! window set to 10 second"); the mid set's size is not given — chosen:
//! four times the high set (40 s). Both are media time, turned into chunks
//! at the stream's bitrate ([`MediaRate`]), and both can be set
//! ([`VodWindows`]): the paper's VoD comparison (§IV-A) does not give them.

use std::time::Duration;

use rand::Rng;

use super::candidates::{domain_end, Candidates};
use super::rarest::{clear, RarestFirst};
use super::window::WindowRarest;
use super::{MediaRate, PickView, Picker, VodWindows};
use crate::binmap::Binmap;
use crate::chunk::ChunkRange;

/// The high-priority set's media time (seed paper 000, §IV-B).
pub const HIGH_WINDOW: Duration = Duration::from_secs(10);

/// The mid-priority set's media time (chosen: four high sets).
pub const MID_WINDOW: Duration = Duration::from_secs(40);

/// Priority sets at the playhead (see the module documentation).
#[derive(Debug)]
pub struct StdVod {
    /// High-set and mid-set sizes, in chunks (at least one each).
    high: u64,
    mid: u64,
    window: WindowRarest,
    low: RarestFirst,
    /// Chunks chosen earlier in the current pick.
    picked: Binmap,
}

impl StdVod {
    /// Windows of [`HIGH_WINDOW`] and [`MID_WINDOW`] at `rate`.
    pub fn new(rate: MediaRate) -> Self {
        Self::sized(rate, VodWindows::default())
    }

    /// Windows of `windows`' media time at `rate`.
    pub fn sized(rate: MediaRate, windows: VodWindows) -> Self {
        Self::with_windows(rate.chunks_for(windows.high), rate.chunks_for(windows.mid))
    }

    /// Windows of `high` and `mid` chunks (at least one each).
    pub fn with_windows(high: u64, mid: u64) -> Self {
        StdVod {
            high: high.max(1),
            mid: mid.max(1),
            window: WindowRarest::default(),
            low: RarestFirst::new(),
            picked: Binmap::new(),
        }
    }

    /// The high-set and mid-set sizes, in chunks.
    pub fn windows(&self) -> (u64, u64) {
        (self.high, self.mid)
    }
}

/// How a pick walks the priority sets (see [`StdVod::pick_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Before anything else, high-set chunks whose request went late at
    /// another peer ([`PickView::late`]).
    pub late_first: bool,
    /// At most this many chunks from the high set first.
    pub high_first: u64,
    /// How many chunks at the front of the high set are taken in order;
    /// the rest of the high set is taken rarest-first (still before the
    /// mid set). `u64::MAX`: the whole high set in order.
    pub high_in_order: u64,
    /// Whether a pick that found high-set chunks goes on to the mid and
    /// low sets with the rest of its budget.
    pub fill: bool,
    /// Whether the mid and low sets (and the end game) may be asked at
    /// all; `false` keeps the pick to the high set, found or not.
    pub beyond_high: bool,
    /// After the mid and low sets, fill what is left from the high set.
    pub high_last: bool,
    /// When nothing is fresh, duplicate requests in order from the
    /// playhead.
    pub end_game: bool,
}

impl Plan {
    /// std-vod's own: high, mid, low, then the end game.
    pub const STANDARD: Plan = Plan {
        late_first: false,
        high_first: u64::MAX,
        high_in_order: u64::MAX,
        fill: true,
        beyond_high: true,
        high_last: false,
        end_game: true,
    };
}

impl StdVod {
    /// The high set at `view`'s playhead, if any content is known.
    pub fn high_set(&self, view: &PickView<'_>) -> Option<ChunkRange> {
        let end = domain_end(view);
        if end == 0 {
            return None;
        }
        let playhead = view.playhead.map_or(0, |p| p.0).min(end - 1);
        window(playhead, self.high, end)
    }

    /// A pick that walks the sets as `plan` says.
    pub fn pick_with(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
        plan: Plan,
    ) {
        let end = domain_end(view);
        if max_chunks == 0 || end == 0 {
            return;
        }
        let playhead = view.playhead.map_or(0, |p| p.0).min(end - 1);
        let high = window(playhead, self.high, end);
        let mid = high.and_then(|h| window(h.last().0 + 1, self.mid, end));
        let none = Binmap::new();
        let fresh = Candidates::fresh(view, &none);
        let first = out.len();
        let mut budget = max_chunks;
        if let Some(h) = high.filter(|_| plan.late_first && !view.late.is_empty()) {
            for run in view.late.filled_runs_in(h) {
                if budget == 0 {
                    break;
                }
                budget -= fresh.take_runs(run.first().0, run.last().0, budget, out);
            }
        }
        if let Some(h) = high.filter(|_| plan.high_first > 0 && budget > 0) {
            let cap = budget.min(plan.high_first);
            let (ordered, rest) = split_high(h, plan.high_in_order);
            let mut took =
                ordered.map_or(0, |o| fresh.take_runs(o.first().0, o.last().0, cap, out));
            if let Some(r) = rest.filter(|_| took < cap) {
                self.mark_picked(&out[first..]);
                took += self
                    .window
                    .take(view, r, cap - took, &mut self.picked, rng, out);
            }
            budget -= took;
        }
        if !plan.beyond_high || (!plan.fill && out.len() > first) {
            clear(&mut self.picked);
            return;
        }
        self.mark_picked(&out[first..]);
        if let Some(m) = mid.filter(|_| budget > 0) {
            budget -= self
                .window
                .take(view, m, budget, &mut self.picked, rng, out);
        }
        if budget > 0 {
            budget -= self
                .low
                .pick_fresh(view, budget, rng, out, Some(&self.picked));
        }
        if let Some(h) = high.filter(|_| plan.high_last && budget > 0) {
            budget -= Candidates::fresh(view, &self.picked).take_runs(
                h.first().0,
                h.last().0,
                budget,
                out,
            );
        }
        if plan.end_game && budget == max_chunks && Candidates::end_game_open(view) {
            Candidates::end_game(view, &none).take_wrapping(playhead, end, max_chunks, out);
        }
        clear(&mut self.picked);
    }
}

impl Picker for StdVod {
    fn name(&self) -> &'static str {
        "std-vod"
    }

    fn pick(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    ) {
        self.pick_with(view, max_chunks, rng, out, Plan::STANDARD);
    }
}

impl StdVod {
    /// `picked` holds exactly `ranges`.
    fn mark_picked(&mut self, ranges: &[ChunkRange]) {
        clear(&mut self.picked);
        for &range in ranges {
            self.picked.set(range);
        }
    }
}

/// The high set `h` cut after its first `in_order` chunks: the part taken
/// in order and the part taken rarest-first, either possibly empty.
fn split_high(h: ChunkRange, in_order: u64) -> (Option<ChunkRange>, Option<ChunkRange>) {
    if in_order == 0 {
        return (None, Some(h));
    }
    let cut = h.first().0.saturating_add(in_order - 1);
    if cut >= h.last().0 {
        return (Some(h), None);
    }
    (
        ChunkRange::new(h.first().0, cut),
        ChunkRange::new(cut + 1, h.last().0),
    )
}

/// The `len` chunks from `first`, cut at `end`; `None` when empty.
fn window(first: u64, len: u64, end: u64) -> Option<ChunkRange> {
    let last = first.saturating_add(len - 1).min(end.checked_sub(1)?);
    ChunkRange::new(first, last)
}

#[cfg(test)]
#[path = "std_vod_tests.rs"]
mod tests;
