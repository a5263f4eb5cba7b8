//! Agents: driver-side companions of a swarm that run inside the node's
//! task, on the node's clock, with the endpoint in hand — a live camera
//! that injects chunks as they are made, a player model that steers the
//! picker. The lab's live source and viewer run here in an emulation
//! exactly as the simulator runs them beside its endpoints, so their logic
//! is not written twice.
//!
//! An agent is code the program hands in, not protocol logic: the node only
//! calls it after each input and when the deadline it asked for comes.

use ppspp_core::proto::{Endpoint, SwarmHandle};
use ppspp_core::time::Instant;

/// Something that runs beside one swarm inside a node
/// ([`crate::NodeHandle::attach`]).
pub trait SwarmAgent: Send + 'static {
    /// Acts at `now`, after the node handed the endpoint its datagrams and
    /// timers and before it sends: returns when it must run again (it also
    /// runs after any later input).
    fn update(&mut self, now: Instant, ep: &mut Endpoint, swarm: SwarmHandle) -> Option<Instant>;

    /// It is detached, or the node shuts down, at `now`: its last look.
    fn leave(&mut self, now: Instant, ep: &mut Endpoint, swarm: SwarmHandle);
}

/// The node's agents, in the order they were attached.
#[derive(Default)]
pub(crate) struct Agents(Vec<(SwarmHandle, Box<dyn SwarmAgent>)>);

impl Agents {
    /// Adds `agent` to `swarm` and runs it once at `now`.
    pub fn attach(
        &mut self,
        now: Instant,
        ep: &mut Endpoint,
        swarm: SwarmHandle,
        mut agent: Box<dyn SwarmAgent>,
    ) {
        agent.update(now, ep, swarm);
        self.0.push((swarm, agent));
    }

    /// Runs every agent at `now`; returns the earliest deadline they ask
    /// for.
    pub fn update(&mut self, now: Instant, ep: &mut Endpoint) -> Option<Instant> {
        self.0
            .iter_mut()
            .filter_map(|(h, a)| a.update(now, ep, *h))
            .min()
    }

    /// Detaches the agents of `swarm` at `now` (each has its last look);
    /// how many there were.
    pub fn detach(&mut self, now: Instant, ep: &mut Endpoint, swarm: SwarmHandle) -> usize {
        let mut gone = 0;
        self.0.retain_mut(|(h, a)| {
            if *h != swarm {
                return true;
            }
            a.leave(now, ep, swarm);
            gone += 1;
            false
        });
        gone
    }

    /// Detaches every agent at `now`.
    pub fn detach_all(&mut self, now: Instant, ep: &mut Endpoint) {
        for (h, mut a) in self.0.drain(..) {
            a.leave(now, ep, h);
        }
    }
}
