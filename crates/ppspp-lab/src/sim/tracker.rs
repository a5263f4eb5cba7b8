//! The swarm's tracker: who a joining (or re-announcing) peer is told of.
//!
//! It names every seeder in the swarm and `want` leechers at random, as a
//! BitTorrent-style tracker does. A peer is known from its arrival (arrival
//! times are planned before the run starts) until `notice` after it left:
//! the tracker hears of a departure one message later, not at once. That
//! delay is also what lets partitions of the simulation run a window apart
//! (see `sim::partition`): a departure in one window is only visible in a
//! later one, so every partition sees the tracker in the same state.
//!
//! Answers draw from the asking peer's own random stream, so they do not
//! depend on the order in which peers ask. BitTorrent peers and ppspp
//! peers are two swarms: each is told only of its own kind.

use std::time::Duration;

use ppspp_core::time::Instant;
use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;

use super::plan::PeerPlan;
use crate::scenario::Role;

/// What the tracker knows.
#[derive(Debug)]
pub struct Tracker {
    /// Seeders and leechers by arrival time (then host id).
    arrivals: Vec<(Instant, u32)>,
    roles: Vec<Role>,
    /// Each peer's swarm: whether it runs BitTorrent, and its swarm
    /// number (`PeerPlan::swarm`). Peers are named only within one.
    swarm: Vec<(bool, u32)>,
    /// When each peer stops being named (its departure plus `notice`).
    gone_at: Vec<Option<Instant>>,
    notice: Duration,
}

impl Tracker {
    /// A tracker for the peers of `plans` (host `i` is `plans[i]`), which
    /// learns of a departure `notice` after it.
    pub fn new(plans: &[PeerPlan], notice: Duration) -> Tracker {
        let mut arrivals: Vec<(Instant, u32)> = plans
            .iter()
            .enumerate()
            .filter(|(_, p)| p.role != Role::Host)
            .map(|(i, p)| (Instant::ZERO + p.arrival, i as u32))
            .collect();
        arrivals.sort_unstable();
        Tracker {
            arrivals,
            roles: plans.iter().map(|p| p.role).collect(),
            swarm: plans.iter().map(|p| (p.bittorrent, p.swarm)).collect(),
            gone_at: vec![None; plans.len()],
            notice,
        }
    }

    /// How long after a departure the tracker stops naming the peer.
    pub fn notice(&self) -> Duration {
        self.notice
    }

    /// Peer `i` left at `at`.
    pub fn depart(&mut self, i: u32, at: Instant) {
        if let Some(g) = self.gone_at.get_mut(i as usize) {
            *g = Some(at + self.notice);
        }
    }

    /// Who the tracker names to peer `i` at `now`: every seeder present
    /// and `want` leechers drawn with `rng`.
    pub fn answer(
        &self,
        i: u32,
        now: Instant,
        want: usize,
        rng: &mut Xoshiro256PlusPlus,
    ) -> Vec<u32> {
        let mut chosen = Vec::new();
        let mut pool = Vec::new();
        for &(arrived, j) in &self.arrivals {
            if arrived > now {
                break;
            }
            let gone = self.gone_at[j as usize].is_some_and(|g| g <= now);
            let other_swarm = self.swarm.get(i as usize) != self.swarm.get(j as usize);
            if j == i || gone || other_swarm {
                continue;
            }
            match self.roles[j as usize] {
                Role::Seeder => chosen.push(j),
                Role::Leecher => pool.push(j),
                Role::Host => {}
            }
        }
        for _ in 0..want.min(pool.len()) {
            let k = rng.random_range(0..pool.len());
            chosen.push(pool.swap_remove(k));
        }
        chosen
    }
}

/// Whether a leecher still downloading asks the tracker again at one of
/// its periodic announces: when it has fewer channels than the tracker
/// names (`want`), or when no chunk arrived since the last announce (its
/// neighbours may all be newcomers with nothing yet, an island PEX cannot
/// leave). `have`: the chunks it holds now; `last_have`: what it held at
/// the last announce, updated here. The simulator and the emulator both
/// follow this rule.
pub fn asks_again(channels: usize, want: usize, have: u64, last_have: &mut u64) -> bool {
    let stalled = have == *last_have;
    *last_have = have;
    channels < want || stalled
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{rng, Stream};
    use crate::sim::plan::Leave;

    fn plan(role: Role, at_ms: u64) -> PeerPlan {
        PeerPlan {
            group: 0,
            role,
            arrival: Duration::from_millis(at_ms),
            leave: Leave::Stay,
            bittorrent: false,
            swarm: 0,
        }
    }

    #[test]
    fn names_arrived_seeders_and_some_leechers() {
        let plans = vec![
            plan(Role::Seeder, 0),
            plan(Role::Leecher, 10),
            plan(Role::Leecher, 20),
            plan(Role::Host, 0),
            plan(Role::Leecher, 30),
            plan(Role::Seeder, 500),
        ];
        let t = Tracker::new(&plans, Duration::from_millis(50));
        let mut r = rng(1, Stream::Tracker, 4);
        let at = Instant::ZERO + Duration::from_millis(30);
        let mut a = t.answer(4, at, 5, &mut r);
        // The seeder first, then the leechers in some order; not itself,
        // not the host, not the seeder that has not arrived.
        assert_eq!(a[0], 0);
        a[1..].sort_unstable();
        assert_eq!(a, vec![0, 1, 2]);
        // Only `want` leechers.
        assert_eq!(t.answer(4, at, 1, &mut r).len(), 2);
    }

    #[test]
    fn peers_are_named_only_within_their_swarm() {
        let in_swarm = |role, swarm, bittorrent| PeerPlan {
            swarm,
            bittorrent,
            ..plan(role, 0)
        };
        let plans = vec![
            in_swarm(Role::Seeder, 1, true),
            in_swarm(Role::Leecher, 1, true),
            in_swarm(Role::Seeder, 2, true),
            in_swarm(Role::Leecher, 2, true),
            // The same swarm number, but ppspp: another swarm still.
            in_swarm(Role::Leecher, 1, false),
            in_swarm(Role::Leecher, 0, true),
        ];
        let t = Tracker::new(&plans, Duration::from_millis(50));
        let mut r = rng(1, Stream::Tracker, 2);
        let at = Instant::ZERO;
        assert_eq!(t.answer(1, at, 5, &mut r), vec![0]);
        assert_eq!(t.answer(3, at, 5, &mut r), vec![2]);
        assert_eq!(t.answer(0, at, 5, &mut r), vec![1]);
        assert!(t.answer(4, at, 5, &mut r).is_empty());
        assert!(t.answer(5, at, 5, &mut r).is_empty());
    }

    #[test]
    fn a_departure_is_heard_after_the_notice() {
        let plans = vec![plan(Role::Seeder, 0), plan(Role::Leecher, 0)];
        let mut t = Tracker::new(&plans, Duration::from_millis(50));
        let mut r = rng(1, Stream::Tracker, 1);
        let left = Instant::ZERO + Duration::from_secs(1);
        t.depart(0, left);
        let before = left + Duration::from_millis(49);
        assert_eq!(t.answer(1, before, 5, &mut r), vec![0]);
        let after = left + Duration::from_millis(50);
        assert!(t.answer(1, after, 5, &mut r).is_empty());
    }

    #[test]
    fn a_leecher_asks_again_when_short_of_channels_or_stalled() {
        let mut last = 0;
        // Nothing came since joining: stalled.
        assert!(asks_again(6, 6, 0, &mut last));
        // Chunks came and enough channels: no.
        assert!(!asks_again(6, 6, 40, &mut last));
        assert_eq!(last, 40);
        // Chunks came, too few channels: yes.
        assert!(asks_again(5, 6, 80, &mut last));
        // Nothing since: stalled, however many channels.
        assert!(asks_again(9, 6, 80, &mut last));
    }
}
