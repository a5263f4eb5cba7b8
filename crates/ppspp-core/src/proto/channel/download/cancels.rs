//! CANCEL: requests we no longer want answered (RFC 7574 §3.8) — those
//! that timed out here and went to other peers, and chunks we asked this
//! peer for that arrived from others.

use super::super::Scope;
use super::Download;
use crate::chunk::ChunkRange;
use crate::proto::swarm::Swarm;
use crate::wire::{ChunkSpec, DatagramWriter, Message};

impl Download {
    /// Chunks we asked this peer for that arrived from others: CANCEL them.
    /// Only chunks in the swarm's cancel-log can be such (see
    /// `Swarm::cancel_log`), so a channel looks at a few, not at every
    /// chunk that verifies.
    pub fn poll_cancels(&mut self, swarm: &Swarm, sc: &Scope<'_>, w: &mut DatagramWriter<'_>) {
        // Requests that timed out here went to other peers.
        while let Some(&range) = self.expired.last() {
            let specs: Vec<ChunkSpec> = sc.specs_for(swarm, range).collect();
            if w.remaining() < specs.len() * sc.spec_len() {
                return;
            }
            for spec in specs {
                let _ = w.push(&Message::Cancel(spec));
            }
            self.expired.pop();
        }
        if self.outstanding.count() == 0 {
            self.cancel_cursor = swarm.cancel_log.len();
            return;
        }
        self.cancel_cursor = swarm.cancel_log.resume(self.cancel_cursor);
        while let Some(chunk) = swarm.cancel_log.get(self.cancel_cursor) {
            if self.outstanding.chunks().contains(chunk) {
                let Some(range) = ChunkRange::single(chunk) else {
                    break;
                };
                let specs: Vec<ChunkSpec> = sc.specs_for(swarm, range).collect();
                if w.remaining() < specs.len() * sc.spec_len() {
                    return;
                }
                for spec in specs {
                    let _ = w.push(&Message::Cancel(spec));
                }
                self.outstanding.remove(range);
            }
            self.cancel_cursor += 1;
        }
    }
}
