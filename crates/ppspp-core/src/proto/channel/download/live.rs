//! A live swarm's picks follow the stream (`proto/live_window.rs`): the
//! first pick hooks in where this peer says the live edge is, and what
//! the peer announced below the floor is forgotten before each pick, so
//! no picker asks for chunks the window left behind and the peer's chunk
//! set stays within the window however long the stream runs.

use super::Download;
use crate::chunk::{ChunkIndex, ChunkRange, MAX_CHUNK_INDEX};
use crate::proto::swarm::Swarm;

impl Download {
    /// The peer's discard window, as its handshake said.
    pub fn handle_peer_window(&mut self, window: Option<u64>) {
        self.peer_window = window;
    }

    /// Where picks from this peer start at the earliest in a live swarm:
    /// past the oldest quarter of what its window keeps. A receiver that
    /// lags behind a peer with a small window would otherwise ask it for
    /// the chunks about to leave that window, which are gone by the time
    /// the request is served: each times out, the request window shrinks,
    /// and the receiver falls further behind (seen with a source keeping
    /// 4 munros and a receiver at 5/8 of the stream's rate: it stopped
    /// receiving after 550 chunks).
    ///
    /// Chunk c leaves a window of w when the peer's newest reaches c + w,
    /// so the chunks below `newest + 1 + w/4 - w` leave within a quarter
    /// window; while the stream is younger than that, none does, and picks
    /// may start anywhere.
    pub(super) fn live_pick_floor(&self) -> Option<ChunkIndex> {
        let w = self.peer_window?;
        let newest = self
            .remote_has
            .last_filled_to(ChunkIndex(MAX_CHUNK_INDEX))?;
        Some(ChunkIndex((newest.0 + 1 + w / 4).saturating_sub(w)))
    }

    /// Hooks in (once per swarm) and trims the peer's chunk set to the
    /// floor.
    pub(super) fn follow_live(&mut self, swarm: &mut Swarm) {
        let newest = self.remote_has.last_filled_to(ChunkIndex(MAX_CHUNK_INDEX));
        if swarm.live_floor().is_none() {
            if let Some(newest) = newest {
                swarm.live_hook_in(newest);
            }
        }
        // Below the floor, and below what the peer's own window keeps: a
        // libswift peer announces every chunk since 0 whatever its window,
        // and answers a request outside it with another chunk's bytes
        // (`docs/libswift-live.md`).
        let floor = swarm.live_floor().filter(|_| swarm.live_hooked());
        let peer_first = self
            .peer_window
            .zip(newest)
            .map(|(w, n)| ChunkIndex(n.0.saturating_sub(w.saturating_sub(1))));
        let Some(floor) = floor.max(peer_first) else {
            return;
        };
        if floor <= self.live_trimmed {
            return;
        }
        if let Some(gone) = floor
            .0
            .checked_sub(1)
            .and_then(|l| ChunkRange::new(0u64, l))
        {
            for run in self.remote_has.filled_runs_in(gone).collect::<Vec<_>>() {
                swarm.availability.remove(run);
            }
            self.remote_has.clear(gone);
        }
        self.live_trimmed = floor;
    }
}
