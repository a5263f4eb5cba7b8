//! Writing datagrams: refusals first, then the due channels in turn, as
//! the upload scheduling policy shares them out (`proto/turns`).

use super::{Endpoint, Transmit};
use crate::time::Instant;

impl Endpoint {
    /// The next datagram: a refusal, else one from the next due channel
    /// that has something to send.
    pub(super) fn next_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        if let Some(t) = self.next_refusal(buf) {
            return Some(t);
        }
        let mut cursor = self.cursor;
        // The channel whose turn it is goes on first, if the policy says
        // its turn goes on.
        let mut again = self.turns.keeps_turn() && self.schedule.is_due(self.cursor);
        let (id, peer, len, handle) = loop {
            let id = if std::mem::take(&mut again) {
                cursor
            } else {
                self.schedule.next_due(cursor)?
            };
            cursor = id;
            let (mut ctx, channels, swarms, schedule) = self.parts(now);
            let Some(ch) = channels.get_mut(&id) else {
                schedule.forget(id, None);
                continue;
            };
            let Some(swarm) = swarms.get_mut(ch.swarm()) else {
                schedule.forget(id, ch.filed_mut().take());
                continue;
            };
            let span = super::trace::channel_span(ch.swarm(), id, ch.peer()).entered();
            let (sent, out) = ch.poll_transmit(swarm, &mut ctx, buf);
            if let Some(len) = sent {
                tracing::trace!(len, "datagram written");
            }
            drop(span);
            let (peer, handle) = (ch.peer(), ch.swarm());
            let (up, down) = (out.upload_blocked, out.download_blocked);
            self.stats.channel_polls += 1;
            self.limits.hold(id, up, down);
            match sent {
                Some(len) => {
                    if self.channels.get(&id).is_some_and(|c| c.is_closing()) {
                        self.closing.insert(id);
                    }
                    break (id, peer, len, handle);
                }
                None => self.settle(now, id),
            }
        };
        let channels = &self.channels;
        let queued = || channels.get(&id).map_or(0, |c| c.queued_chunks());
        self.turns.on_sent(id, self.cursor, &queued);
        self.cursor = id;
        // Requests picked while writing may have moved bookkeeping.
        self.check_progress(now, handle);
        Some(Transmit {
            destination: peer,
            len,
        })
    }
}
