//! A live viewer: a [`LivePlayer`] driven from a receiving endpoint, as
//! `ppspp_core::play::Viewer` drives the on-demand player: it is handed
//! the chunks the core verified, learns the hook-in the core chose, and
//! steers the picker to its playhead (the engine requests from the larger
//! of the playhead and the live floor, `live_window.rs`).
//!
//! The player keeps its own buffer of what it was handed, as a real player
//! does with what `ppspp stream` serves it as chunks verify: when the core
//! moves its floor and drops chunks from its own copy, the media already
//! handed over stays playable.

use ppspp_core::play::StallSpan;
use ppspp_core::proto::{Endpoint, SwarmHandle};
use ppspp_core::time::Instant;
use ppspp_core::{Binmap, ChunkRange};

use super::player::{LivePlayback, LivePlayer, LivePlayerConfig, LiveState};

/// How many chunks the playhead passes before the buffer behind it is
/// dropped.
const PRUNE_EVERY: u64 = 4096;

/// A live player and its cursor into the endpoint's verified chunks.
#[derive(Clone, Debug)]
pub struct LiveViewer {
    player: LivePlayer,
    /// Entries of the verified log already seen (absolute positions).
    seen: usize,
    /// The chunks handed to the player and not yet played past.
    buffer: Binmap,
    /// Chunks below this were dropped from `buffer`.
    pruned: u64,
    /// What it experienced, frozen when the peer left (or the run ended).
    frozen: Option<(LivePlayback, Vec<StallSpan>)>,
}

impl LiveViewer {
    /// A viewer joining at `now`.
    pub fn new(config: LivePlayerConfig, now: Instant) -> LiveViewer {
        LiveViewer {
            player: LivePlayer::new(config, now),
            seen: 0,
            buffer: Binmap::new(),
            pruned: 0,
            frozen: None,
        }
    }

    /// What the player is doing.
    pub fn state(&self) -> LiveState {
        self.player.state()
    }

    /// After any input to `ep`: moves the player to `now` when chunks
    /// arrived while it waits or its deadline came, and points the picker
    /// at the playhead. Returns when the player must be looked at again.
    pub fn update(
        &mut self,
        now: Instant,
        ep: &mut Endpoint,
        swarm: SwarmHandle,
    ) -> Option<Instant> {
        let log = ep.verified_log(swarm);
        let arrived = log.len() > self.seen;
        for chunk in log.since(self.seen) {
            self.buffer.set_chunk(chunk);
            self.player.on_verified(chunk.0, now);
        }
        self.seen = log.len();
        let joining = self.player.state() == LiveState::Joining;
        // The hook-in is final once a signed munro confirmed it (the
        // core's `live_hook_in`); before that nothing is worth a look.
        let hook_in = if joining && arrived {
            ep.swarm_stats(swarm).and_then(|s| s.live_hook_in)
        } else {
            None
        };
        let due = self.player.poll_timeout().is_some_and(|t| t <= now);
        let waiting = self.player.state() != LiveState::Playing;
        if due || (arrived && waiting) {
            self.player.advance(now, &self.buffer, hook_in);
        }
        if let Some(p) = self.player.playhead(now) {
            ep.set_playhead(swarm, Some(p));
            // What was played past is dropped now and then, so the buffer
            // stays the size of the lag, however long the stream.
            if p.0 >= self.pruned + PRUNE_EVERY {
                if let Some(r) = ChunkRange::new(self.pruned, p.0 - 1) {
                    self.buffer.clear(r);
                }
                self.pruned = p.0;
            }
        }
        ep.set_player_waiting(
            swarm,
            matches!(
                self.player.state(),
                LiveState::Prebuffering | LiveState::Stalled
            ),
        );
        self.player.poll_timeout()
    }

    /// Whether the stream ended and the viewer played it to its end.
    pub fn ended(&self) -> bool {
        self.player.state() == LiveState::Ended
    }

    /// The peer leaves (or the run ends) at `now`: what it experienced is
    /// frozen then.
    pub fn leave(&mut self, now: Instant, ep: &Endpoint, swarm: SwarmHandle) {
        if self.frozen.is_some() {
            return;
        }
        for chunk in ep.verified_log(swarm).since(self.seen) {
            self.buffer.set_chunk(chunk);
            self.player.on_verified(chunk.0, now);
        }
        self.player.advance(now, &self.buffer, None);
        let log = self.player.stall_log().to_vec();
        self.frozen = Some((self.player.playback(now), log));
    }

    /// The frozen figures, once the peer left.
    pub fn frozen(&self) -> Option<&LivePlayback> {
        self.frozen.as_ref().map(|(p, _)| p)
    }

    /// The frozen stalls, once the peer left.
    pub fn frozen_stalls(&self) -> &[StallSpan] {
        self.frozen.as_ref().map_or(&[], |(_, s)| s)
    }
}
