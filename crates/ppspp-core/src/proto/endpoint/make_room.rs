//! Making room for a newcomer in a full live swarm: instead of refusing
//! it, close the channel to the neighbour that gave us the least.
//!
//! **Why.** A live flash crowd joins within seconds. Every newcomer asks
//! the tracker for peers and connects to those present, so the first to
//! arrive fill each other's places (`max_peers_per_swarm`), the source's
//! too. Everyone after them is refused by the early peers and connects
//! to other late joiners: an island far from the source, where a chunk
//! reaches a viewer only through long chains (issue 24). On `live-500`'s
//! links with 100 viewers (seed 1, before this rule), the 25 first
//! viewers kept a continuity of 0.84 and the 50 last 0.35; the last got
//! nothing from the source and uploaded half as much. Asking the tracker
//! for more peers only moved the island: at 16 (the swarm's places) the
//! 75 last viewers got no byte at all.
//!
//! A full swarm therefore lets a proven newcomer in by closing the channel
//! from whose peer it received the fewest payload bytes — the neighbour
//! it would miss least — among those older than [`MAKE_ROOM_MIN_AGE`], at
//! most once every [`MAKE_ROOM_EVERY`]. The closed neighbour hears a
//! closing HANDSHAKE (RFC 7574 §8.4) and still has its other channels;
//! over a flash crowd the neighbour sets mix across arrival times. Mixing
//! a mesh by replacing its least useful partners is what mesh-pull live
//! systems do (CoolStreaming/DONet's partner refinement, Zhang et al.,
//! INFOCOM 2005; BitTorrent clients drop idle connections when full).
//!
//! The source receives from nobody, so every neighbour ties at zero and
//! the tie goes to the lowest channel id, which is random (§12.1): the
//! source turns its neighbours over at random, which is what it should
//! do with a crowd it cannot serve whole.
//!
//! **Hostile peers.** Only a newcomer that proved its address (the third
//! datagram of its handshake, `admission.rs`) can take a place, so a
//! spoofed flood closes nothing; one place a [`MAKE_ROOM_EVERY`] bounds
//! what a flood of real peers can turn over; and a peer that gives us
//! nothing is the first to go, so an attacker's own channels make room
//! before an honest neighbour's.
//!
//! **Only live swarms.** On-demand swarms keep refusing when full: E1's
//! figures and trace pins are made that way, and whether it pays there is
//! not measured yet.
//!
//! Continuity over every viewer (one that never started counts 0),
//! `live-500`'s links for 60 s (`--set live.duration=60s --set
//! duration=75s --set peers.viewers.count=N`), seeds 1-4, refusing →
//! making room (age 5 s, every 2 s):
//!
//! | viewers | refuse | make room |
//! |---|---|---|
//! | 40 | 0.989 | 0.995 |
//! | 100 | 0.719 | 0.988 |
//! | 200 | 0.558 (seeds 1-2) | 0.988 |
//!
//! `live-small` (20 viewers, 12 places) hardly fills up: 0.994 either way.
//!
//! **The constants, scanned** on the same runs (40 / 100 viewers; one
//! changed at a time from 5 s and 2 s):
//!
//! | | 40 | 100 |
//! |---|---|---|
//! | min age 2 s | 0.994 | 0.986 |
//! | **min age 5 s** | 0.995 | 0.988 |
//! | min age 10 s | 0.990 | 0.677 |
//! | every 0.5 s | 0.996 | 0.989 |
//! | **every 2 s** | 0.995 | 0.988 |
//! | every 5 s | 0.994 | 0.847 |
//!
//! A minimum age as long as the crowd's arrival (10 s here) lets nobody
//! in while it arrives; a place every 5 s is too few for it. Between
//! 0.5 s and 2 s nothing separates at 40 and 100 viewers (nor at 200:
//! 0.988 both); at 500 viewers (seed 1) every 2 s gives 0.958 and every
//! 0.5 s 0.831 — turning the mesh over faster than it settles costs.
//! The slower rate also bounds what a flood of real peers turns over.

use std::time::Duration;

use super::Endpoint;
use crate::proto::channel::State;
use crate::proto::event::CloseReason;
use crate::proto::SwarmHandle;
use crate::time::Instant;
use crate::wire::ChannelId;

/// A neighbour younger than this is never closed to make room: it has
/// not had time to show what it gives (one hook-in and a prebuffer).
pub const MAKE_ROOM_MIN_AGE: Duration = Duration::from_secs(5);

/// At most one place is made per swarm in this time.
pub const MAKE_ROOM_EVERY: Duration = Duration::from_secs(2);

impl Endpoint {
    /// The channel that would be closed to make room in `handle` at `now`,
    /// if the swarm may make room (see the module documentation).
    pub(super) fn room_victim(&self, handle: SwarmHandle, now: Instant) -> Option<ChannelId> {
        if !self.config.make_room_live {
            return None;
        }
        let swarm = self.swarm(handle)?;
        swarm.live.as_ref()?;
        if swarm
            .made_room_at
            .is_some_and(|t| now.saturating_since(t) < MAKE_ROOM_EVERY)
        {
            return None;
        }
        swarm
            .channels
            .iter()
            .filter_map(|id| self.channels.get(id).map(|c| (*id, c)))
            .filter(|(_, c)| c.state() == State::Established && !c.is_closing())
            .filter(|(_, c)| now.saturating_since(c.created()) >= MAKE_ROOM_MIN_AGE)
            .map(|(id, c)| {
                let given = swarm
                    .stats
                    .peers
                    .get(&c.peer())
                    .map_or(0, |s| s.payload_bytes_received);
                (given, id)
            })
            .min()
            .map(|(_, id)| id)
    }

    /// Closes [`Endpoint::room_victim`]'s channel; returns whether it did.
    pub(super) fn make_room(&mut self, handle: SwarmHandle, now: Instant) -> bool {
        let Some(id) = self.room_victim(handle, now) else {
            return false;
        };
        let Some(ch) = self.channels.get_mut(&id) else {
            return false;
        };
        ch.close(CloseReason::Local, true);
        self.wake(id);
        self.stats.made_room += 1;
        if let Some(s) = self.swarm_mut(handle) {
            s.made_room_at = Some(now);
        }
        true
    }
}
