//! A viewer: a [`Player`] driven from an [`Endpoint`] — fed the chunks
//! the endpoint verifies, steering its pickers to the playhead, telling it
//! when the player waits or stalls (swift-vod's fast-peer set reacts). The
//! lab drives one per simulated viewer and the UDP node one per stream, so
//! the same code measures both.

use rand::rngs::Xoshiro256PlusPlus;

use crate::chunk::{ChunkIndex, ChunkSize};
use crate::play::{
    PlaybackStats, Player, PlayerConfig, PlayerState, SeekModel, StallLog, StallSpan,
};
use crate::proto::{Endpoint, SwarmHandle};
use crate::time::Instant;

/// A player and its cursor into the endpoint's verified chunks.
#[derive(Clone, Debug)]
pub struct Viewer {
    player: Player,
    /// Whether the player's playhead steers the pickers (else the driver
    /// sets it, as the HTTP gateway does from what its clients read).
    steer: bool,
    count_known: bool,
    /// Entries of the endpoint's verified log already handed to the player.
    seen: usize,
    /// The metrics and stall log, frozen when the peer left.
    frozen: Option<(PlaybackStats, StallLog)>,
    /// Stalls already told to the endpoint.
    stalls_told: u32,
}

impl Viewer {
    /// A viewer with `config` of content in chunks of `chunk_size` (of
    /// `chunks` chunks, when known), joining at `now`; it steers the
    /// pickers.
    pub fn new(
        config: PlayerConfig,
        chunk_size: ChunkSize,
        chunks: Option<u64>,
        now: Instant,
    ) -> Viewer {
        let mut player = Player::new(config, chunk_size, now);
        if let Some(n) = chunks {
            player.set_chunk_count(n);
        }
        Viewer {
            player,
            steer: true,
            count_known: chunks.is_some(),
            seen: 0,
            frozen: None,
            stalls_told: 0,
        }
    }

    /// The viewer seeks on its own as `model` says, drawing from `rng`
    /// (see [`Player::with_seeks`]); the pickers follow its playhead to
    /// each new position, as they follow a driver's [`Viewer::seek`].
    pub fn with_seeks(mut self, model: SeekModel, rng: Xoshiro256PlusPlus) -> Viewer {
        self.player = self.player.with_seeks(model, rng);
        self
    }

    /// Whether the playhead steers the pickers.
    pub fn steering(mut self, steer: bool) -> Viewer {
        self.steer = steer;
        self
    }

    /// What the player is doing.
    pub fn state(&self) -> PlayerState {
        self.player.state()
    }

    /// The chunk playback needs next at `now`.
    pub fn playhead(&self, now: Instant) -> ChunkIndex {
        self.player.playhead(now)
    }

    /// The viewer jumps to `chunk` at `now` (see [`Player::seek`]).
    pub fn seek(&mut self, now: Instant, ep: &mut Endpoint, swarm: SwarmHandle, chunk: ChunkIndex) {
        if let Some(have) = ep.have(swarm) {
            self.player.seek(now, chunk, have);
        }
        self.update(now, ep, swarm);
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
        if !self.count_known {
            if let Some((_, Some(n))) = ep.progress(swarm) {
                self.player.set_chunk_count(n);
                self.count_known = true;
            }
        }
        let log = ep.verified_log(swarm);
        let arrived = log.len() > self.seen;
        for chunk in log.since(self.seen) {
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
        if self.steer {
            ep.set_playhead(swarm, Some(self.player.playhead(now)));
        }
        ep.set_player_waiting(swarm, self.player.state() == PlayerState::Prebuffering);
        self.player.poll_timeout()
    }

    /// The metrics at `now`, the peer's endpoint still running: a viewer
    /// whose download completed is played out to the end (it keeps
    /// watching without the swarm).
    pub fn stats(&self, now: Instant, ep: &Endpoint, swarm: SwarmHandle) -> PlaybackStats {
        if let Some((s, _)) = &self.frozen {
            return *s;
        }
        self.settled(now, ep, swarm)
            .map_or_else(PlaybackStats::default, |(s, _)| s)
    }

    /// As [`Viewer::stats`], with the stalls one by one (a driver's
    /// report of a viewer: the lab's emulator writes them to `stalls.csv`).
    pub fn stats_and_stalls(
        &self,
        now: Instant,
        ep: &Endpoint,
        swarm: SwarmHandle,
    ) -> (PlaybackStats, Vec<StallSpan>) {
        if let Some((s, log)) = &self.frozen {
            return (*s, log.spans().to_vec());
        }
        self.settled(now, ep, swarm)
            .map_or_else(Default::default, |(s, log)| (s, log.spans().to_vec()))
    }

    /// The metrics and the stall log at `now` of a copy of the player
    /// moved there (and played out, the download complete); `None` when
    /// the endpoint has no such swarm.
    fn settled(
        &self,
        now: Instant,
        ep: &Endpoint,
        swarm: SwarmHandle,
    ) -> Option<(PlaybackStats, StallLog)> {
        let have = ep.have(swarm)?;
        let mut player = self.player.clone();
        player.advance(now, have);
        if ep.is_complete(swarm) {
            player.play_out(now, have);
            if player.state() == PlayerState::Ended {
                // Stats at the end of playback: everything due.
                let stats = player.stats(Instant::MAX, have);
                return Some((stats, player.stall_log().clone()));
            }
        }
        Some((player.stats(now, have), player.stall_log().clone()))
    }

    /// The peer leaves at `now`: the metrics are frozen as
    /// [`Viewer::stats`] gives them then, with the stalls behind them.
    pub fn leave(&mut self, now: Instant, ep: &Endpoint, swarm: SwarmHandle) {
        let settled = self.settled(now, ep, swarm);
        self.frozen = Some(settled.unwrap_or_default());
    }

    /// The frozen metrics, once the peer left.
    pub fn frozen(&self) -> Option<PlaybackStats> {
        self.frozen.as_ref().map(|(s, _)| *s)
    }

    /// The frozen stall log, once the peer left.
    pub fn frozen_stall_log(&self) -> Option<&StallLog> {
        self.frozen.as_ref().map(|(_, log)| log)
    }
}
