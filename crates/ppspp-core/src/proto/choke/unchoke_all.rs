//! Unchoke all: every peer is served, whatever the upload slots; our
//! upload is shared by the congestion controllers and the upload
//! scheduling alone.

use super::{set_choke, Choke};
use crate::proto::channel::Channel;
use crate::time::Instant;

/// Never chokes.
pub(crate) struct UnchokeAll;

impl Choke for UnchokeAll {
    fn rechoke(
        &mut self,
        now: Instant,
        _slots: usize,
        channels: &mut dyn Iterator<Item = &mut Channel>,
    ) {
        // Only a peer choked under another policy or limit has anything to
        // change.
        for ch in channels {
            set_choke(ch, false, now);
        }
    }

    fn periodic(&self, _slots: usize) -> bool {
        false
    }
}
