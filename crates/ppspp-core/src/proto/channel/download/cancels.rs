//! CANCEL: requests we no longer want answered (RFC 7574 §3.8) — those
//! that timed out here and went to other peers, and chunks we asked this
//! peer for that arrived from others.

use crate::chunk::ChunkRange;
use crate::proto::channel::Channel;
use crate::proto::swarm::Swarm;
use crate::wire::{ChunkSpec, DatagramWriter, Message};

impl Channel {
    /// Chunks we asked this peer for that arrived from others: CANCEL them.
    /// Only chunks in the swarm's cancel-log can be such (see
    /// `Swarm::cancel_log`), so a channel looks at a few, not at every
    /// chunk that verifies.
    pub(in crate::proto::channel) fn push_cancels(
        &mut self,
        swarm: &Swarm,
        w: &mut DatagramWriter<'_>,
    ) {
        // Requests that timed out here went to other peers.
        while let Some(&range) = self.down.expired.last() {
            let specs: Vec<ChunkSpec> = self.specs_for(swarm, range).collect();
            if w.remaining() < specs.len() * (1 + self.hs.params().addressing.spec_len()) {
                return;
            }
            for spec in specs {
                let _ = w.push(&Message::Cancel(spec));
            }
            self.down.expired.pop();
        }
        if self.down.outstanding.count() == 0 {
            self.down.cancel_cursor = swarm.cancel_log.len();
            return;
        }
        while let Some(&chunk) = swarm.cancel_log.get(self.down.cancel_cursor) {
            if self.down.outstanding.chunks().contains(chunk) {
                let Some(range) = ChunkRange::single(chunk) else {
                    break;
                };
                let specs: Vec<ChunkSpec> = self.specs_for(swarm, range).collect();
                if w.remaining() < specs.len() * (1 + self.hs.params().addressing.spec_len()) {
                    return;
                }
                for spec in specs {
                    let _ = w.push(&Message::Cancel(spec));
                }
                self.down.outstanding.remove(range);
            }
            self.down.cancel_cursor += 1;
        }
    }
}
