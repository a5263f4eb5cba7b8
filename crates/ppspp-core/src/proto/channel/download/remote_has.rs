//! What the peer has (HAVE, ACK, RFC 7574 §3.2, §8.7): its chunk set,
//! counted in the swarm's availability — once for a peer with every chunk
//! — and what a new chunk it has means for our pick pause.

use crate::binmap::Binmap;
use crate::chunk::ChunkRange;
use crate::proto::channel::Channel;
use crate::proto::swarm::Swarm;
use crate::time::Instant;

impl Channel {
    /// The peer has the chunks of `range` (HAVE, or implied by ACK).
    pub(crate) fn on_remote_has(&mut self, swarm: &mut Swarm, range: ChunkRange) {
        if self.down.remote_complete {
            return;
        }
        if !self.may_record_has(swarm, range) {
            self.refuse_have(swarm);
            return;
        }
        // Most HAVEs name one chunk: one descent tells new from known and
        // records it.
        let single = range.len() == 1;
        if single {
            if !self.down.remote_has.insert_chunk(range.first()) {
                return;
            }
            swarm.availability.add(range);
        } else if self.down.remote_has.is_filled(range) {
            return;
        } else if !self.down.remote_has.is_empty_range(range) {
            let mut fresh = Binmap::new();
            fresh.set(range);
            let runs: Vec<ChunkRange> = fresh.difference_runs(&self.down.remote_has).collect();
            runs.into_iter().for_each(|r| swarm.availability.add(r));
            self.down.remote_has.set(range);
        } else {
            swarm.availability.add(range);
            self.down.remote_has.set(range);
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
            self.down.pick_idle_until = Instant::ZERO;
            self.down.dry.wet(range);
        }
        self.check_remote_complete(swarm);
    }

    /// The swarm's chunk count is `n` now (learned, or changed): the peer's
    /// chunks are counted again in the fresh availability, and what it
    /// announced past the end is dropped — its chunk set is now bounded by
    /// the content (`have_limits.rs`).
    pub(crate) fn recount_remote_has(&mut self, swarm: &mut Swarm, n: u64) {
        self.down.remote_complete = false;
        if let Some(all) = ChunkRange::with_len(0u64, n) {
            let runs: Vec<ChunkRange> = self.down.remote_has.filled_runs_in(all).collect();
            self.down.remote_has = Binmap::new();
            for r in runs {
                self.down.remote_has.set(r);
                swarm.availability.add(r);
            }
        }
        self.check_remote_complete(swarm);
    }

    /// A peer with every chunk counts once in the availability, not per chunk.
    pub(crate) fn check_remote_complete(&mut self, swarm: &mut Swarm) {
        let Some(all) = swarm
            .chunk_count()
            .and_then(|n| ChunkRange::with_len(0u64, n))
        else {
            return;
        };
        // The count is kept by the binmap: the full check runs only when
        // it can succeed.
        if !self.down.remote_complete
            && self.down.remote_has.count() >= all.len()
            && self.down.remote_has.is_filled(all)
        {
            for r in self.down.remote_has.filled_runs() {
                swarm.availability.remove(r);
            }
            swarm.availability.add_complete_peer();
            self.down.remote_complete = true;
        }
    }

    /// Takes the peer out of the availability counts (on close).
    pub(crate) fn forget_availability(&self, swarm: &mut Swarm) {
        if self.down.remote_complete {
            swarm.availability.remove_complete_peer();
        } else {
            for r in self.down.remote_has.filled_runs() {
                swarm.availability.remove(r);
            }
        }
    }
}
