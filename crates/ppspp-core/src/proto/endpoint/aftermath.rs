//! What the endpoint does once a channel has handled an input or written
//! a datagram: chunks it gave up on become pickable again, news of
//! verified chunks reaches the channels that wait for it, a learned size
//! recounts the peers' chunks, PEX addresses are vetted and dialled.

use super::Endpoint;
use crate::binmap::Binmap;
use crate::chunk::ChunkRange;
use crate::pick::availability::Availability;
use crate::proto::address::check_learned_address;
use crate::proto::channel::{Outcome, State};
use crate::proto::event::Event;
use crate::proto::SwarmHandle;
use crate::time::Instant;
use crate::wire::ChannelId;

impl Endpoint {
    /// What the endpoint does once a channel has handled an input, with
    /// what the channel left for it (`out`).
    pub(super) fn after_channel(
        &mut self,
        now: Instant,
        handle: SwarmHandle,
        channel: ChannelId,
        out: Outcome,
    ) {
        let Outcome {
            released,
            mut found,
            size_learned,
            ..
        } = out;
        self.release(handle, channel, &released);
        if let Some(swarm) = self.swarms.get_mut(handle) {
            let channels = self
                .channels
                .iter_mut()
                .filter(|(_, c)| c.swarm() == handle);
            crate::proto::fast::update(now, swarm, channels);
        }
        // A count learned, or a tentative one whose height a chunk has
        // just proven: per-chunk state follows the counted size.
        let resized = self
            .swarm(handle)
            .is_some_and(|s| s.availability.chunk_count() != s.counted_chunk_count().unwrap_or(0));
        if size_learned || resized {
            self.recount_availability(handle);
        }
        // A peer may tell us our own address (libswift's PEX can name the
        // peer it answers), or addresses that are no peer's: a broadcast
        // address, or hosts on a private network it is not on.
        found.retain(|a| !self.own_addresses.contains(a));
        let source = self.channels.get(&channel).map(|c| c.peer());
        let before = found.len();
        found.retain(|a| source.is_some_and(|s| check_learned_address(*a, s).is_ok()));
        self.stats.pex_addresses_refused += (before - found.len()) as u64;
        for addr in &found {
            self.events.push_back(Event::PeerAddress {
                swarm: handle,
                addr: *addr,
            });
            let room = self
                .swarm(handle)
                .is_some_and(|s| s.channels.len() < self.config.pex_connect_limit);
            if self.config.pex_auto_connect && room {
                self.connect(now, handle, *addr);
            }
        }
        self.notice_news(now, handle);
        self.check_progress(now, handle);
    }

    /// Chunks verified since the last look: channels that had sent every
    /// HAVE now have news (their HAVE timer starts), and channels that may
    /// have a newly logged chunk outstanding must CANCEL it.
    pub(super) fn notice_news(&mut self, now: Instant, handle: SwarmHandle) {
        let Some(swarm) = self.swarms.get_mut(handle) else {
            return;
        };
        let log = swarm.have_log.len();
        if log > swarm.have_log_seen {
            swarm.have_log_seen = log;
            for id in swarm.have_waiters.drain(..) {
                let Some(ch) = self.channels.get_mut(&id) else {
                    continue;
                };
                ch.set_awaits_haves(false);
                if !self.schedule.is_due(id) {
                    let next = ch.next_deadline(&self.config, now, log);
                    self.schedule.settle(id, ch.filed_mut(), next);
                }
            }
        }
        if swarm.cancel_log.len() > swarm.cancel_log_seen {
            swarm.cancel_log_seen = swarm.cancel_log.len();
            self.wake_swarm(handle, |c| c.outstanding().count() > 0);
        }
    }

    /// Channel `id` had nothing (more) to send: file it under its next
    /// timer, and have it woken when new chunks verify if it has no HAVE
    /// pending.
    pub(super) fn settle(&mut self, now: Instant, id: ChannelId) {
        let Some(ch) = self.channels.get_mut(&id) else {
            self.schedule.forget(id, None);
            return;
        };
        let Some(swarm) = self.swarms.get_mut(ch.swarm()) else {
            self.schedule.forget(id, ch.filed_mut().take());
            return;
        };
        let log = swarm.have_log.len();
        let mut next = ch.next_deadline(&self.config, now, log);
        let stale = next.is_some_and(|t| t <= now) && !ch.is_closing();
        if stale && self.timers_run.ran(now, id) {
            // Its timer ran at `now` and it has nothing to send: asking for
            // `now` again would have the driver spin (`timers.rs`).
            self.stats.stale_deadlines += 1;
            super::trace::stale(id);
            next = Some(now + super::timers::STALE_RETRY);
        }
        self.schedule.settle(id, ch.filed_mut(), next);
        if ch.is_closing() {
            self.closing.insert(id);
        }
        if !ch.awaits_haves()
            && ch.state() == State::Established
            && !ch.is_closing()
            && !ch.haves_pending(log)
        {
            ch.set_awaits_haves(true);
            swarm.have_waiters.push(id);
        }
    }

    /// Chunks a channel stopped waiting for: unless another channel of the
    /// swarm still has them requested, they become pickable again.
    pub(super) fn release(
        &mut self,
        handle: SwarmHandle,
        except: ChannelId,
        ranges: &[ChunkRange],
    ) {
        if ranges.is_empty() {
            return;
        }
        let Some(swarm) = self.swarms.get_mut(handle) else {
            return;
        };
        let mut still = Binmap::new();
        for id in swarm.channels.iter().filter(|id| **id != except) {
            if let Some(ch) = self.channels.get(id) {
                for &r in ranges {
                    for run in ch.outstanding().chunks().filled_runs_in(r) {
                        still.set(run);
                    }
                }
            }
        }
        for &r in ranges {
            swarm.requested.clear(r);
            for run in still.filled_runs_in(r) {
                swarm.requested.set(run);
            }
            swarm.retake(r);
        }
        // The chunks are pickable again: every channel may ask for them.
        self.wake_swarm(handle, |c| c.state() == State::Established);
    }

    /// Once the chunk count is known or changes, count every peer's chunks
    /// again (a closing channel too: the reaper takes its chunks out), and
    /// drop the peers whose size claims what verified shows false.
    pub(super) fn recount_availability(&mut self, handle: SwarmHandle) {
        let Some(swarm) = self.swarms.get_mut(handle) else {
            return;
        };
        let Some(n) = swarm.counted_chunk_count() else {
            return;
        };
        swarm.availability = Availability::new();
        swarm.availability.set_chunk_count(n);
        if let Some(all) = ChunkRange::with_len(0u64, n) {
            swarm.retake(all);
        }
        for id in swarm.channels.clone() {
            if let Some(ch) = self.channels.get_mut(&id) {
                let refuted = ch.claimed().is_some_and(|c| {
                    let tree = swarm.integrity.partial();
                    tree.is_some_and(|t| t.refutes(c))
                });
                if !ch.is_closing() && refuted {
                    // Its peaks made the root but claimed a size that what
                    // verified since shows false (`PartialTree::refutes`);
                    // closing bans it, and its requests go elsewhere.
                    ch.handle_refuted(swarm);
                }
                ch.handle_recount(swarm, n);
            }
        }
    }
}
