//! A simulated viewer: a leecher's player (the core's [`Player`], the same
//! model the HTTP gateway reports with), fed the chunks its endpoint
//! verifies, and steering the endpoint's pickers to its playhead.

use ppspp_core::chunk::ChunkSize;
use ppspp_core::play::{Bitrate, PlaybackStats, Player, PlayerConfig, PlayerState};
use ppspp_core::proto::{Endpoint, SwarmHandle};
use ppspp_core::time::Instant;

use crate::scenario::PlayerSpec;

/// A peer's player and its cursor into the endpoint's verified chunks.
#[derive(Clone, Debug)]
pub struct Viewer {
    player: Player,
    /// Entries of the endpoint's verified log already handed to the player.
    seen: usize,
    /// The metrics, frozen when the peer left.
    frozen: Option<PlaybackStats>,
    /// Stalls already told to the endpoint.
    stalls_told: u32,
}

impl Viewer {
    /// A viewer of `chunks` chunks of `chunk_size` joining at `now`.
    pub fn new(spec: &PlayerSpec, chunk_size: ChunkSize, chunks: u64, now: Instant) -> Viewer {
        let config = PlayerConfig {
            bitrate: Bitrate(spec.bitrate.0),
            prebuffer: spec.prebuffer.0,
            rebuffer: spec.rebuffer.0,
        };
        let mut player = Player::new(config, chunk_size, now);
        player.set_chunk_count(chunks);
        Viewer {
            player,
            seen: 0,
            frozen: None,
            stalls_told: 0,
        }
    }

    /// After any input to `ep`: hands the player the chunks verified since
    /// the last call, moves it to `now`, and sets the swarm's playhead.
    /// Returns when the player must be looked at again.
    pub fn update(
        &mut self,
        now: Instant,
        ep: &mut Endpoint,
        swarm: SwarmHandle,
    ) -> Option<Instant> {
        let log = ep.verified_log(swarm);
        let arrived = log.len() > self.seen;
        for &chunk in &log[self.seen.min(log.len())..] {
            self.player.on_verified(now, chunk);
        }
        self.seen = log.len();
        // While playing, arrivals only push the next gap later: the player
        // needs a look at its deadline, which finds that out then.
        let due = self.player.poll_timeout().is_some_and(|t| t <= now);
        let waiting = self.player.state() != PlayerState::Playing;
        if due || (arrived && waiting) {
            if let Some(have) = ep.have(swarm) {
                self.player.advance(now, have);
            }
        }
        if self.player.stall_count() > self.stalls_told {
            self.stalls_told = self.player.stall_count();
            ep.note_stall(swarm, now);
        }
        ep.set_playhead(swarm, Some(self.player.playhead(now)));
        ep.set_player_waiting(swarm, self.player.state() == PlayerState::Prebuffering);
        self.player.poll_timeout()
    }

    /// The metrics at `now`, the peer's endpoint still running: a viewer
    /// whose download completed is played out to the end (it keeps
    /// watching without the swarm).
    pub fn stats(&self, now: Instant, ep: &Endpoint, swarm: SwarmHandle) -> PlaybackStats {
        if let Some(s) = self.frozen {
            return s;
        }
        let Some(have) = ep.have(swarm) else {
            return PlaybackStats::default();
        };
        let mut player = self.player.clone();
        player.advance(now, have);
        if ep.is_complete(swarm) {
            player.play_out(now, have);
            if player.state() == PlayerState::Ended {
                // Stats at the end of playback: everything due.
                return player.stats(Instant::MAX, have);
            }
        }
        player.stats(now, have)
    }

    /// The peer leaves at `now`: the metrics are frozen as
    /// [`Viewer::stats`] gives them then.
    pub fn leave(&mut self, now: Instant, ep: &Endpoint, swarm: SwarmHandle) {
        self.frozen = Some(self.stats(now, ep, swarm));
    }

    /// The frozen metrics, once the peer left.
    pub fn frozen(&self) -> Option<PlaybackStats> {
        self.frozen
    }
}
