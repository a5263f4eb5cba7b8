//! Where a live swarm's download starts and what it keeps.
//!
//! - **Hook-in.** A viewer joining a live stream wants its newest part,
//!   not chunk 0 (RFC 7574 §6.1: "a peer may start at an arbitrary
//!   point"). Before any munro is trusted the only sign of the live edge
//!   is what peers announce, so the first pick hooks in, tentatively, at
//!   the first chunk of the newest munro the peer announced,
//!   `hook_in_behind` munros earlier (libswift hooks in at the newest
//!   munro, i.e. 0 behind; a player that wants a buffer asks for more).
//!   HAVEs cost nothing to forge, so the hook-in is confirmed only by the
//!   first munro whose signature verifies: if that munro is not where the
//!   tentative hook-in said (a peer announced a future that no signature
//!   backs), the hook-in moves to it. Until then nothing is cut, and a
//!   picker that finds nothing from the tentative floor on wraps around
//!   to what honest peers announced.
//! - **The floor.** Chunks below it are neither requested nor kept: the
//!   hook-in point, then the start of the discard window (§6.1.3, option
//!   7) as trusted munros move it. A peer that falls behind the window
//!   skips forward with it.
//! - **Announcements are cut to the live range.** HAVEs below the floor
//!   are dropped quietly (a slower peer's news is old to us); HAVEs
//!   further ahead of the live edge than a window are refused and counted
//!   (no honest peer is that far ahead), and so is memory: a peer's chunk
//!   set spans at most the window plus that margin.

use super::integrity::LiveIntegrity;
use super::swarm::Swarm;
use crate::chunk::{ChunkIndex, ChunkRange, MAX_CHUNK_INDEX};

/// How far past the newest chunk we trust (or the floor) a peer may
/// announce: 1 Mi chunks, over two hours of a 1 Mbit/s stream in 1 KiB
/// chunks. A receiver that lags (or was suspended) learns of the live
/// edge from the signed munro that rides on honest peers' HAVEs, so only
/// a peer announcing a future no stream reaches is refused. The
/// memory of what a peer announces is bounded apart from this, by the
/// allowance of a swarm of unknown size (`have_limits.rs`).
pub(crate) const LIVE_AHEAD_CHUNKS: u64 = 1 << 20;

/// The fewest chunks a live swarm's chunk logs keep (a window's worth is
/// the rule; this is for tiny windows).
const MIN_LOG_KEPT: usize = 4096;

/// What becomes of a HAVE in a live swarm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LiveHave {
    /// Record these chunks (the HAVE cut to the live range).
    Record(ChunkRange),
    /// Wholly below the floor: old news, ignored.
    Stale,
    /// Wholly beyond where any honest peer can be: refused.
    Future,
}

impl Swarm {
    /// The first chunk this live swarm requests and keeps; `None` before
    /// the hook-in, and for a static swarm.
    pub fn live_floor(&self) -> Option<ChunkIndex> {
        match self.integrity.live()? {
            LiveIntegrity::Injector(i) => i.available().map(|r| r.first()),
            LiveIntegrity::Receiver(_) => self.live_floor,
        }
    }

    /// Where a picker starts in a live swarm: the player's position, but
    /// never below the floor.
    pub fn pick_start(&self) -> Option<ChunkIndex> {
        match (self.playhead, self.live_floor()) {
            (Some(p), Some(f)) => Some(p.max(f)),
            (p, f) => p.or(f),
        }
    }

    /// The last chunk a peer may announce: the newest we know of (a
    /// trusted munro's last chunk, else the floor) plus a window.
    fn live_have_limit(&self) -> Option<u64> {
        let (known, ahead) = match self.integrity.live()? {
            // Nobody has what the source has not made.
            LiveIntegrity::Injector(i) => (i.chunks_taken().checked_sub(1)?, 0),
            LiveIntegrity::Receiver(v) => {
                let newest = v.trusted_span().map(|s| s.last().0);
                let known = newest.max(self.live_floor.map(|f| f.0))?;
                let ahead = v.window_chunks().unwrap_or(0).max(LIVE_AHEAD_CHUNKS);
                (known, ahead)
            }
        };
        Some(known.saturating_add(ahead).min(MAX_CHUNK_INDEX))
    }

    /// What to do with a peer's HAVE of `range` in a live swarm.
    pub(crate) fn live_have(&self, range: ChunkRange) -> LiveHave {
        if self.is_live_receiver() && !self.live_hooked {
            return LiveHave::Record(range);
        }
        let floor = self.live_floor().map_or(0, |f| f.0);
        if range.last().0 < floor {
            return LiveHave::Stale;
        }
        let limit = self.live_have_limit().unwrap_or(MAX_CHUNK_INDEX);
        if range.first().0 > limit {
            return LiveHave::Future;
        }
        let first = range.first().0.max(floor);
        let last = range.last().0.min(limit);
        ChunkRange::new(first, last).map_or(LiveHave::Stale, LiveHave::Record)
    }

    /// Whether this live swarm signs every chunk (RFC 7574 §6.1.1).
    pub(crate) fn live_signs_all(&self) -> bool {
        matches!(self.integrity.live(), Some(LiveIntegrity::Receiver(v)) if v.signs_all())
    }

    fn is_live_receiver(&self) -> bool {
        matches!(self.integrity.live(), Some(LiveIntegrity::Receiver(_)))
    }

    /// Whether the floor is final: a trusted munro confirmed the hook-in,
    /// or we are the source (whose floor is its window's start).
    pub(crate) fn live_hooked(&self) -> bool {
        self.live_hooked || !self.is_live_receiver()
    }

    /// A receiver without a floor yet hooks in, tentatively, where a peer
    /// whose newest announced chunk is `peer_newest` says the live edge is.
    pub(crate) fn live_hook_in(&mut self, peer_newest: ChunkIndex) {
        let Some(LiveIntegrity::Receiver(v)) = self.integrity.live() else {
            return;
        };
        if self.live_floor.is_some() {
            return;
        }
        let per = v.params().munro.chunks();
        let munro = peer_newest.0 / per;
        let at = munro
            .saturating_sub(self.hook_in_behind())
            .saturating_mul(per);
        self.live_floor = Some(ChunkIndex(at));
    }

    fn hook_in_behind(&self) -> u64 {
        self.live.as_ref().map_or(0, |l| l.hook_in_behind)
    }

    /// Under Sign All, the newest chunk trusted before `chunk` (which was
    /// just trusted): the live edge as it was.
    pub(crate) fn live_edge_before(&self, chunk: ChunkIndex) -> Option<ChunkIndex> {
        let before = chunk.0.checked_sub(1)?;
        self.have.last_filled_to(ChunkIndex(before))
    }

    /// A munro was trusted: it confirms or moves the hook-in, and the
    /// window may have moved past the floor, taking what we had and asked
    /// for below it. `edge_before` is the newest chunk under a trusted
    /// munro before this one.
    pub(crate) fn on_live_munro_trusted(
        &mut self,
        munro: ChunkRange,
        edge_before: Option<ChunkIndex>,
    ) {
        let Some(LiveIntegrity::Receiver(v)) = self.integrity.live() else {
            return;
        };
        let Some(start) = v.window_start() else {
            return;
        };
        if !self.live_hooked {
            // The tentative floor stands if the munro lies at most the
            // hook-in's distance ahead of it; else the munro decides.
            let per = munro.len();
            let behind = self.hook_in_behind().saturating_mul(per);
            let at = match self.live_floor {
                Some(f) if f <= munro.first() && munro.first().0 - f.0 <= behind => f,
                _ => ChunkIndex(munro.first().0.saturating_sub(behind)),
            };
            let at = at.max(start);
            self.live_hooked = true;
            self.stats.live_hook_in = Some(at);
            self.live_floor = Some(at);
            // What came before the hook-in is not part of our stream.
            if let Some(gone) = at.0.checked_sub(1).and_then(|l| ChunkRange::new(0u64, l)) {
                self.have.clear(gone);
                self.requested.clear(gone);
                self.doubled.clear(gone);
            }
            return;
        }
        let before = self.live_floor.map_or(0, |f| f.0);
        // A munro more than a window past the edge we knew (one riding on
        // a HAVE after we heard nothing for that long: a suspended or cut
        // off receiver): we lagged. Hook in again as a joining viewer
        // would, behind it. (Not past the floor: the floor trails the edge by a window,
        // so any munro two ahead of the edge would count, and munros from
        // several peers arrive out of order all the time.)
        let window = v.window_chunks().unwrap_or(u64::MAX);
        let jumped = edge_before.is_some_and(|e| munro.first().0 > e.0.saturating_add(window));
        let behind = self.hook_in_behind().saturating_mul(munro.len());
        // (A receiver that lags less than that creeps along the window's
        // start; its picks start past the oldest quarter of each peer's
        // window, `channel/download/live.rs`.)
        let to = match jumped {
            true => start.max(ChunkIndex(munro.first().0.saturating_sub(behind))),
            false => start,
        };
        if before >= to.0 {
            return;
        }
        self.live_floor = Some(to);
        if let Some(gone) = ChunkRange::new(before, to.0 - 1) {
            self.stats.live_chunks_skipped += gone.len() - self.have.count_in(gone);
            self.have.clear(gone);
            self.requested.clear(gone);
            self.doubled.clear(gone);
        }
    }

    /// Bounds a live swarm's chunk logs (a static swarm's are bounded by
    /// its content): twice the window's chunks, at least [`MIN_LOG_KEPT`].
    pub(crate) fn bound_live_logs(&mut self) {
        let Some(live) = self.integrity.live() else {
            return;
        };
        let window = match live {
            LiveIntegrity::Injector(i) => i.window_chunks(),
            LiveIntegrity::Receiver(v) => v.window_chunks(),
        };
        let keep = window
            .map_or(LIVE_AHEAD_CHUNKS, |w| w.saturating_mul(2))
            .try_into()
            .unwrap_or(usize::MAX)
            .max(MIN_LOG_KEPT);
        self.have_log.bound(keep);
        self.cancel_log.bound(keep);
    }
}
