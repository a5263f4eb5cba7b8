//! What the peer has (HAVE, ACK, RFC 7574 §3.2, §8.7): its chunk set,
//! counted in the swarm's availability — once for a peer with every chunk
//! — and what a new chunk it has means for our pick pause.

use super::super::Scope;
use super::have_limits::refuse_have;
use super::Download;
use crate::binmap::Binmap;
use crate::chunk::ChunkRange;
use crate::proto::event::CloseReason;
use crate::proto::live_window::LiveHave;
use crate::proto::swarm::Swarm;
use crate::time::Instant;

impl Download {
    /// The peer has the chunks of `range` (HAVE, or implied by ACK). Fails
    /// with the reason to close when the peer announced too much that
    /// cannot be (see `have_limits.rs`).
    pub fn handle_have(
        &mut self,
        swarm: &mut Swarm,
        sc: &mut Scope<'_>,
        range: ChunkRange,
    ) -> Result<(), CloseReason> {
        if self.remote_complete {
            return Ok(());
        }
        let range = match swarm.live.is_some() {
            false => range,
            true => match swarm.live_have(range) {
                LiveHave::Record(r) => r,
                LiveHave::Stale => return Ok(()),
                LiveHave::Future => return refuse_have(swarm, sc.peer),
            },
        };
        if !self.may_record_has(swarm, range) {
            return refuse_have(swarm, sc.peer);
        }
        // Trace level, for following chunks hop by hop (`bench/live_hops.py`).
        tracing::trace!(first = range.first().0, last = range.last().0, from = %sc.peer.addr, "have received");
        // Most HAVEs name one chunk: one descent tells new from known and
        // records it.
        let single = range.len() == 1;
        if single {
            if !self.remote_has.insert_chunk(range.first()) {
                return Ok(());
            }
            swarm.availability.add(range);
        } else if self.remote_has.is_filled(range) {
            return Ok(());
        } else if !self.remote_has.is_empty_range(range) {
            let mut fresh = Binmap::new();
            fresh.set(range);
            let runs: Vec<ChunkRange> = fresh.difference_runs(&self.remote_has).collect();
            runs.into_iter().for_each(|r| swarm.availability.add(r));
            self.remote_has.set(range);
        } else {
            swarm.availability.add(range);
            self.remote_has.set(range);
        }
        // Only a chunk we lack can make a pick find something. A chunk not
        // taken (neither had nor requested) is lacking; a taken one is
        // lacking when requested, which the small `requested` set tells.
        let lacking = if single {
            let c = range.first();
            let counted = c.0 < swarm.availability.chunk_count();
            if counted && swarm.availability.is_taken(c) {
                swarm.requested.contains(c)
            } else {
                !swarm.have.contains(c)
            }
        } else {
            !swarm.have.is_filled(range)
        };
        if lacking {
            self.pick_idle_until = Instant::ZERO;
            self.dry.wet(range);
        }
        self.check_remote_complete(swarm);
        Ok(())
    }

    /// The swarm's chunk count is `n` now (learned, or changed): the peer's
    /// chunks are counted again in the fresh availability, and what it
    /// announced past the end is dropped — its chunk set is now bounded by
    /// the content (`have_limits.rs`).
    pub fn handle_recount(&mut self, swarm: &mut Swarm, n: u64) {
        self.remote_complete = false;
        if let Some(all) = ChunkRange::with_len(0u64, n) {
            let runs: Vec<ChunkRange> = self.remote_has.filled_runs_in(all).collect();
            self.remote_has = Binmap::new();
            for r in runs {
                self.remote_has.set(r);
                swarm.availability.add(r);
            }
        }
        self.check_remote_complete(swarm);
    }

    /// A peer with every chunk counts once in the availability, not per chunk.
    fn check_remote_complete(&mut self, swarm: &mut Swarm) {
        let Some(all) = swarm
            .chunk_count()
            .and_then(|n| ChunkRange::with_len(0u64, n))
        else {
            return;
        };
        // The count is kept by the binmap: the full check runs only when
        // it can succeed.
        if !self.remote_complete
            && self.remote_has.count() >= all.len()
            && self.remote_has.is_filled(all)
        {
            for r in self.remote_has.filled_runs() {
                swarm.availability.remove(r);
            }
            swarm.availability.add_complete_peer();
            self.remote_complete = true;
        }
    }

    /// Takes the peer out of the availability counts (on close).
    pub fn forget_availability(&self, swarm: &mut Swarm) {
        if self.remote_complete {
            swarm.availability.remove_complete_peer();
        } else {
            for r in self.remote_has.filled_runs() {
                swarm.availability.remove(r);
            }
        }
    }
}
