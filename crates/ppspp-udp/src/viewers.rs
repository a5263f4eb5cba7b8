//! The node's viewers: the core's player model ([`Viewer`]) run against
//! the live endpoint, one per watched swarm, so a stream reports the same
//! startup delay, stalls and continuity as a simulated viewer, and
//! swift-vod hears of prebuffering and stalls.

use std::collections::BTreeMap;

use ppspp_core::chunk::{ChunkIndex, ChunkSize};
use ppspp_core::play::{PlaybackStats, PlayerConfig, PlayerState, StallSpan, Viewer};
use ppspp_core::proto::{Endpoint, SwarmHandle};
use ppspp_core::time::Instant;

/// What a watched swarm's viewer sees.
#[derive(Clone, Debug, PartialEq)]
pub struct Playback {
    /// What the player is doing.
    pub state: PlayerState,
    /// Where it plays (or waits).
    pub playhead: ChunkIndex,
    /// Startup delay, stalls, stall time, continuity so far.
    pub stats: PlaybackStats,
    /// The stalls so far, one by one (the first
    /// [`ppspp_core::play::MAX_LOGGED_STALLS`]).
    pub stalls: Vec<StallSpan>,
}

/// Viewers by swarm.
#[derive(Default)]
pub(crate) struct Viewers(BTreeMap<SwarmHandle, Viewer>);

impl Viewers {
    /// Starts (or restarts) watching `swarm` at `now`; `steer`: the
    /// player's playhead steers the pickers (else the driver sets it).
    pub fn watch(
        &mut self,
        now: Instant,
        ep: &mut Endpoint,
        swarm: SwarmHandle,
        config: PlayerConfig,
        chunk_size: ChunkSize,
        steer: bool,
    ) {
        let count = ep.progress(swarm).and_then(|p| p.1);
        let mut v = Viewer::new(config, chunk_size, count, now).steering(steer);
        v.update(now, ep, swarm);
        self.0.insert(swarm, v);
    }

    /// The viewer of `swarm` jumps to `chunk`.
    pub fn seek(&mut self, now: Instant, ep: &mut Endpoint, swarm: SwarmHandle, chunk: ChunkIndex) {
        if let Some(v) = self.0.get_mut(&swarm) {
            v.seek(now, ep, swarm, chunk);
        }
    }

    /// Moves every viewer to `now`; returns when one must be looked at
    /// again.
    pub fn update(&mut self, now: Instant, ep: &mut Endpoint) -> Option<Instant> {
        self.0
            .iter_mut()
            .filter_map(|(h, v)| v.update(now, ep, *h))
            .min()
    }

    /// What the viewer of `swarm` sees at `now`, if it is watched.
    pub fn playback(&self, now: Instant, ep: &Endpoint, swarm: SwarmHandle) -> Option<Playback> {
        let v = self.0.get(&swarm)?;
        let (stats, stalls) = v.stats_and_stalls(now, ep, swarm);
        Some(Playback {
            state: v.state(),
            playhead: v.playhead(now),
            stats,
            stalls,
        })
    }
}
