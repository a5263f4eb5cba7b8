//! What drivers read of the endpoint (swarm progress, counters), and
//! what a player tells it (where playback is, whether it waits).

use std::net::SocketAddr;

use super::Endpoint;
use crate::binmap::Binmap;
use crate::chunk::ChunkIndex;
use crate::pick::availability::Availability;
use crate::proto::event::{EndpointStats, SwarmStats};
use crate::proto::swarm::Swarm;
use crate::proto::{ChunkLog, SwarmHandle};
use crate::time::Instant;

impl Endpoint {
    /// The handle of the `index`-th swarm added, if there is one.
    pub fn swarm_handle(&self, index: u32) -> Option<SwarmHandle> {
        self.swarm(SwarmHandle(index)).map(|_| SwarmHandle(index))
    }

    /// Every swarm's handle, in the order they were added.
    pub fn swarm_handles(&self) -> impl Iterator<Item = SwarmHandle> + use<> {
        self.swarms.handles()
    }

    /// Counters of `swarm`.
    pub fn swarm_stats(&self, swarm: SwarmHandle) -> Option<SwarmStats> {
        self.swarm(swarm).map(Swarm::stats)
    }

    /// Chunks verified and the chunk count (once known) of `swarm`.
    pub fn progress(&self, swarm: SwarmHandle) -> Option<(u64, Option<u64>)> {
        self.swarm(swarm).map(|s| (s.have.count(), s.chunk_count()))
    }

    /// How many chunks of `swarm` the endpoint keeps per-chunk state for
    /// (availability counts): none until the content's height is proven
    /// (see [`Swarm::counted_chunk_count`]).
    pub fn counted_chunks(&self, swarm: SwarmHandle) -> Option<u64> {
        self.swarm(swarm).map(|s| s.availability.chunk_count())
    }

    /// Whether every chunk of `swarm` is verified and stored.
    pub fn is_complete(&self, swarm: SwarmHandle) -> bool {
        self.swarm(swarm).is_some_and(Swarm::is_complete)
    }

    /// The chunks of `swarm` verified so far.
    pub fn have(&self, swarm: SwarmHandle) -> Option<&Binmap> {
        self.swarm(swarm).map(|s| &s.have)
    }

    /// The chunks of `swarm` requested from some peer and not yet received.
    pub fn requested(&self, swarm: SwarmHandle) -> Option<&Binmap> {
        self.swarm(swarm).map(|s| &s.requested)
    }

    /// How many connected peers of `swarm` have each chunk, as the picker
    /// sees it.
    pub fn availability(&self, swarm: SwarmHandle) -> Option<&Availability> {
        self.swarm(swarm).map(|s| &s.availability)
    }

    /// The chunks of `swarm` in the order they verified since it was added
    /// (chunks it started with are not listed). A driver keeps its own
    /// cursor into it: a player learns this way which chunks came when. A
    /// live swarm's log forgets its oldest entries ([`ChunkLog::since`]
    /// resumes a cursor that fell behind).
    pub fn verified_log(&self, swarm: SwarmHandle) -> &ChunkLog {
        static NONE: ChunkLog = ChunkLog::new();
        self.swarm(swarm).map_or(&NONE, |s| &s.have_log)
    }

    /// The swarm's player stalled at `now`: a picker with a fast-peer set
    /// widens it (seed paper 000 eq. 2's x adapts to stalls).
    pub fn note_stall(&mut self, swarm: SwarmHandle, now: Instant) {
        if let Some(s) = self.swarm_mut(swarm) {
            s.fast.on_stall(now);
        }
    }

    /// Whether the swarm's player waits for data: then every peer may be
    /// asked for urgent data, not only the fast ones, and requests carry no
    /// deadline (nothing plays before the whole prebuffer is in).
    /// `play::Viewer` sets it while the player prebuffers (not while it
    /// stalls: in E1, asking everyone during stalls too doubled the
    /// stalls).
    ///
    /// A change wakes the swarm's channels, and those whose last pick found
    /// nothing pick again at once: a picker may ask a prebuffering player's
    /// peers for nothing beyond the prebuffer (swift-vod does), and they
    /// must not idle out a pick pause once playback starts.
    pub fn set_player_waiting(&mut self, swarm: SwarmHandle, waiting: bool) {
        match self.swarm_mut(swarm) {
            Some(s) if s.player_waiting != waiting => s.player_waiting = waiting,
            _ => return,
        }
        if let Some(s) = self.swarms.get(swarm) {
            for id in &s.channels {
                if let Some(ch) = self.channels.get_mut(id) {
                    ch.handle_pick_news();
                }
            }
        }
        self.wake_swarm(swarm, |_| true);
    }

    /// The swarm's fast-peer set: the peers urgent data is asked of, if
    /// the picker keeps one and any peer has been measured.
    pub fn fast_peers(&self, swarm: SwarmHandle) -> Vec<SocketAddr> {
        let Some(s) = self.swarm(swarm) else {
            return Vec::new();
        };
        s.channels
            .iter()
            .filter_map(|id| self.channels.get(id))
            .filter(|c| c.fast() == Some(true))
            .map(|c| c.peer())
            .collect()
    }

    /// Sets where playback of `swarm` needs chunks next; streaming pickers
    /// request from there ([`crate::pick::PickView::playhead`]). `None`:
    /// nothing plays.
    pub fn set_playhead(&mut self, swarm: SwarmHandle, playhead: Option<ChunkIndex>) {
        if let Some(s) = self.swarm_mut(swarm) {
            s.playhead = playhead;
        }
    }

    /// Whether chunk `chunk` of `swarm` is verified and stored.
    pub fn has_chunk(&self, swarm: SwarmHandle, chunk: ChunkIndex) -> bool {
        self.swarm(swarm).is_some_and(|s| s.have.contains(chunk))
    }

    /// Counters of the endpoint.
    pub fn stats(&self) -> &EndpointStats {
        &self.stats
    }

    /// Heap bytes held by what peers announced they have (their chunk
    /// sets), over all channels: bounded by the content once its size is
    /// known (see `channel/download/have_limits.rs`).
    pub fn announced_bytes(&self) -> usize {
        self.channels
            .values()
            .map(|c| c.remote_has().heap_bytes())
            .sum()
    }

    /// Open channels (all states).
    pub fn channel_count(&self) -> usize {
        self.channels.len()
    }
}
