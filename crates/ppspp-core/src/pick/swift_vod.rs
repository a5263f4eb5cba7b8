//! `swift-vod`: Libswift's download algorithm (seed paper 000 §III-C):
//! std-vod's three priority sets, with urgent data asked only of fast
//! peers.
//!
//! - **Fast peers** (§III-A, eq. 1–2): the swarm ranks its peers by
//!   expected bandwidth and keeps the fewest whose sum reaches x times the
//!   bitrate (see [`super::fast_peers`]); [`PickView::link`] says whether
//!   this peer is one. While no peer has been measured, every peer counts
//!   as fast.
//! - **A fast peer** is asked for the high set, in order, at most
//!   `min(W_ledbat/2, H/F)` chunks per pick (eq. 3: W the request window
//!   to the peer, H the high set's size, F the number of fast peers) and
//!   nothing else, so its queue stays short and urgent data comes on time;
//!   only when the high set has nothing for it, the mid and low sets
//!   rarest-first, then the end game.
//! - **Any other peer** is asked first for high-set chunks whose request
//!   went late at another peer (the paper's "forward the same request to a
//!   different peer"; the fast peers may be the ones that are late), then
//!   for the mid and low sets, and for other high-set chunks only when it
//!   has nothing else we need (so a chunk that only a slow peer has still
//!   comes), and never for end-game duplicates.
//! - **While the player prebuffers**, every peer is asked for eq. 3's
//!   share of the high set (which then is the prebuffer) and for nothing
//!   else, even when it has nothing fresh there: the paper fetches "the
//!   initial buffer aggressively" (§IV-A). Asking such a peer for the mid
//!   and low sets spent its upload on chunks not needed for minutes while
//!   the newcomers of a flash crowd waited for theirs (E1, 5 seeds,
//!   startup mean / p95 before and after: 128 viewers 7.5 / 10.6 s and
//!   6.9 / 9.5 s; 208 viewers 8.1 / 10.8 s and 7.4 / 9.5 s). The whole
//!   window instead of eq. 3's share let a slow peer hold much of the
//!   prebuffer (96 viewers: p95 11.2 s against 9.4 s).
//! - **Deadlines** (§III-C): a high-set request is due a safety margin
//!   before the chunk plays, the margin growing with the peer's loss
//!   ratio; a late request is given to another peer and cancelled at this
//!   one (the channel does that, see `Outstanding::pass_deadlines`). The
//!   playhead is taken to play now — a stalled player needs it at once —
//!   and each later chunk one chunk-time after the previous. While the
//!   player prebuffers, the channel sets no deadlines: nothing plays
//!   before the whole prebuffer is in.

use std::time::Duration;

use rand::Rng;

use super::std_vod::{Plan, StdVod};
use super::{MediaRate, PickView, Picker, VodWindows};
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::play::timing::Timing;
use crate::time::Instant;

/// The safety margin of a high-set deadline on a loss-free link (chosen).
pub const SAFETY_MARGIN: Duration = Duration::from_secs(1);

/// How much the loss ratio widens the margin: `margin = SAFETY_MARGIN ·
/// (1 + LOSS_WEIGHT · L_r)` (chosen: 10 % loss doubles it).
pub const LOSS_WEIGHT: f64 = 10.0;

/// std-vod with fast peers, request sizing and deadlines (see the module
/// documentation).
#[derive(Debug)]
pub struct SwiftVod {
    sets: StdVod,
    rate: MediaRate,
    timing: Timing,
}

impl SwiftVod {
    /// std-vod's default windows at `rate`.
    pub fn new(rate: MediaRate) -> Self {
        Self::sized(rate, VodWindows::default())
    }

    /// Windows of `windows`' media time at `rate`.
    pub fn sized(rate: MediaRate, windows: VodWindows) -> Self {
        SwiftVod {
            sets: StdVod::sized(rate, windows),
            rate,
            timing: Timing::new(rate.chunk_size, rate.bitrate),
        }
    }

    /// Windows of `high` and `mid` chunks, deadlines at `rate`.
    pub fn with_windows(rate: MediaRate, high: u64, mid: u64) -> Self {
        SwiftVod {
            sets: StdVod::with_windows(high, mid),
            rate,
            timing: Timing::new(rate.chunk_size, rate.bitrate),
        }
    }

    /// The high-set and mid-set sizes, in chunks.
    pub fn windows(&self) -> (u64, u64) {
        self.sets.windows()
    }

    /// Eq. 3's request size for the high set, in chunks (at least one).
    pub fn urgent_request_size(&self, view: &PickView<'_>) -> u64 {
        let (h, _) = self.windows();
        let f = view.link.fast_count.max(1);
        (view.link.window / 2).min(h.div_ceil(f)).max(1)
    }

    /// How a pick walks the priority sets for this peer now (see the
    /// module documentation): the prebuffer from everyone, else by whether
    /// the peer is fast.
    pub fn plan(&self, view: &PickView<'_>) -> Plan {
        if view.link.prebuffering {
            Plan {
                late_first: false,
                high_first: self.urgent_request_size(view),
                high_in_order: u64::MAX,
                fill: false,
                beyond_high: false,
                high_last: false,
                end_game: false,
            }
        } else if view.link.fast.unwrap_or(true) {
            Plan {
                late_first: false,
                high_first: self.urgent_request_size(view),
                high_in_order: u64::MAX,
                fill: false,
                beyond_high: true,
                high_last: false,
                end_game: true,
            }
        } else {
            Plan {
                late_first: true,
                high_first: 0,
                high_in_order: u64::MAX,
                fill: true,
                beyond_high: true,
                high_last: true,
                end_game: false,
            }
        }
    }

    /// A pick that walks the priority sets as `plan` says.
    pub fn pick_planned(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
        plan: Plan,
    ) {
        self.sets.pick_with(view, max_chunks, rng, out, plan);
    }
}

impl Picker for SwiftVod {
    fn name(&self) -> &'static str {
        "swift-vod"
    }

    fn pick(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    ) {
        let plan = self.plan(view);
        self.pick_planned(view, max_chunks, rng, out, plan);
    }

    fn fast_peer_rate(&self) -> Option<MediaRate> {
        Some(self.rate)
    }

    fn deadline(&self, view: &PickView<'_>, range: ChunkRange) -> Option<Instant> {
        let playhead = view.playhead?;
        let high = self.sets.high_set(view)?;
        if range.first() > high.last() || range.last() < high.first() {
            return None;
        }
        Some(urgent_deadline(self.timing, view, playhead, range))
    }
}

/// When an urgent request for `range` is due: a safety margin (wider
/// with the peer's loss ratio) before its first chunk plays, the playhead
/// taken to play now, but no sooner than the peer normally answers
/// (seed paper 000 §III-C).
pub(super) fn urgent_deadline(
    timing: Timing,
    view: &PickView<'_>,
    playhead: ChunkIndex,
    range: ChunkRange,
) -> Instant {
    let ahead = range.first().0.saturating_sub(playhead.0);
    let plays_at = view.now + Duration::from_micros(timing.span_us(ahead));
    let margin = SAFETY_MARGIN.mul_f64(1.0 + LOSS_WEIGHT * view.link.loss.max(0.0));
    let due = Instant::from_micros(
        plays_at
            .as_micros()
            .saturating_sub(margin.as_micros() as u64),
    );
    due.max(view.now + view.link.answer_time)
}

#[cfg(test)]
#[path = "swift_vod_tests.rs"]
mod tests;
