//! A live swarm's picks follow the stream (`proto/live_window.rs`): the
//! first pick hooks in where this peer says the live edge is, and what
//! the peer announced below the floor is forgotten before each pick, so
//! no picker asks for chunks the window left behind and the peer's chunk
//! set stays within the window however long the stream runs.

use super::Download;
use crate::chunk::{ChunkIndex, ChunkRange, MAX_CHUNK_INDEX};
use crate::proto::swarm::Swarm;

impl Download {
    /// Hooks in (once per swarm) and trims the peer's chunk set to the
    /// floor. Returns a chunk to ask for before the picker's choice when
    /// the peer is far ahead of us (`Swarm::live_probe`).
    pub(super) fn follow_live(&mut self, swarm: &mut Swarm) -> Option<ChunkIndex> {
        let newest = self.remote_has.last_filled_to(ChunkIndex(MAX_CHUNK_INDEX));
        if swarm.live_floor().is_none() {
            if let Some(newest) = newest {
                swarm.live_hook_in(newest);
            }
        }
        let probe = newest
            .and_then(|n| swarm.live_probe(n))
            .filter(|&c| !self.outstanding.chunks().contains(c));
        let Some(floor) = swarm.live_floor().filter(|_| swarm.live_hooked()) else {
            return probe;
        };
        if floor <= self.live_trimmed {
            return probe;
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
        probe
    }
}
