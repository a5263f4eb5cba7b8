//! Closing channels and swarms: a closed channel's peer leaves the
//! availability counts, its requests become pickable again, and a peer
//! that sent bad data is banned from the swarm.

use super::Endpoint;
use crate::chunk::ChunkRange;
use crate::proto::channel::State;
use crate::proto::event::{CloseReason, Event};
use crate::proto::SwarmHandle;
use crate::time::Instant;
use crate::wire::ChannelId;

impl Endpoint {
    /// Closes every channel of `swarm`, telling the peers, and stops taking
    /// new ones; the swarm's state stays readable.
    pub fn close_swarm(&mut self, swarm: SwarmHandle) {
        let Some(s) = self.swarm_mut(swarm) else {
            return;
        };
        s.closing = true;
        let ids: Vec<ChannelId> = s.channels.iter().copied().collect();
        for id in ids {
            if let Some(ch) = self.channels.get_mut(&id) {
                ch.close(CloseReason::Local, ch.state() != State::Initiating);
            }
            self.wake(id);
        }
    }

    /// Removes closed channels: their peers leave the availability counts
    /// and their requests become pickable again.
    pub(super) fn reap(&mut self) {
        if self.closing.is_empty() {
            return;
        }
        let done: Vec<ChannelId> = self
            .closing
            .iter()
            .filter(|id| self.channels.get(id).is_none_or(|c| !c.close_notify()))
            .copied()
            .collect();
        for id in done {
            self.closing.remove(&id);
            let Some(mut ch) = self.channels.remove(&id) else {
                continue;
            };
            self.schedule.forget(id, ch.filed());
            self.by_remote.remove(&(ch.peer(), ch.remote()));
            let outstanding = ch.clear_outstanding();
            let runs: Vec<ChunkRange> = outstanding.filled_runs().collect();
            if let Some(swarm) = self.swarms.get_mut(ch.swarm()) {
                swarm.channels.remove(&id);
                if ch.state() == State::Established {
                    swarm.peers.remove(&ch.peer());
                }
                if ch.awaits_haves() {
                    // A swarm whose chunks never change (a seeder's) never
                    // drains the list: keep it to live channels.
                    swarm.have_waiters.retain(|w| *w != id);
                }
                ch.forget_availability(swarm);
            }
            self.release(ch.swarm(), id, &runs);
            if ch.choking_remote() || ch.requested_at().is_some() {
                if let Some(swarm) = self.swarms.get_mut(ch.swarm()) {
                    // A slot may have come free: look again soon.
                    swarm.next_rechoke = Instant::ZERO;
                }
            }
            let reason = ch.take_close_reason().unwrap_or(CloseReason::Local);
            if reason == CloseReason::BadData {
                if let Some(swarm) = self.swarms.get_mut(ch.swarm()) {
                    swarm.banned.insert(ch.peer());
                }
            }
            super::trace::closed(ch.swarm(), id, ch.peer(), &reason);
            self.events.push_back(Event::Closed {
                swarm: ch.swarm(),
                peer: ch.peer(),
                reason,
            });
        }
    }
}
