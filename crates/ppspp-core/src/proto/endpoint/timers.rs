//! What keeps `poll_timeout` from asking a driver to call again at the same
//! instant forever (issue 22; the lab used to guard against it after
//! 10,000 firings at one instant).
//!
//! A channel is polled for a datagram whenever it is due, and settles
//! under its next deadline when it has nothing to send. A deadline at or
//! before `now` is then work for its timer (`Channel::on_timeout`), which
//! the next `handle_timeout` runs. Once the timer has run at `now` and the
//! channel, polled again, still has nothing to send, a deadline at `now`
//! can only be stale: nothing at this instant will change it. Such a
//! channel is looked at again [`STALE_RETRY`] later, and counted
//! (`EndpointStats::stale_deadlines`). So each round at one instant
//! without input runs at least one channel timer for the first time at
//! that instant, or `poll_timeout` moves past it.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::time::Instant;
use crate::wire::ChannelId;

/// How much later a stale deadline is looked at again. Chosen: short
/// against every protocol timer (the shortest, a request timeout, is at
/// least 500 ms), long against a busy loop.
pub(crate) const STALE_RETRY: Duration = Duration::from_millis(10);

/// The channels whose timers ran at one instant.
#[derive(Default)]
pub(crate) struct TimersRun {
    at: Instant,
    ids: BTreeSet<ChannelId>,
}

impl TimersRun {
    /// Channel `id`'s timer ran at `now`.
    pub fn note(&mut self, now: Instant, id: ChannelId) {
        if self.at != now {
            self.at = now;
            self.ids.clear();
        }
        self.ids.insert(id);
    }

    /// Whether channel `id`'s timer ran at `now`.
    pub fn ran(&self, now: Instant, id: ChannelId) -> bool {
        self.at == now && self.ids.contains(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_only_the_current_instant() {
        let mut t = TimersRun::default();
        let (a, b) = (Instant::from_micros(5), Instant::from_micros(6));
        t.note(a, ChannelId(1));
        assert!(t.ran(a, ChannelId(1)));
        assert!(!t.ran(a, ChannelId(2)));
        assert!(!t.ran(b, ChannelId(1)));
        t.note(b, ChannelId(2));
        assert!(!t.ran(a, ChannelId(1)), "a new instant forgets the old");
        assert!(t.ran(b, ChannelId(2)));
    }
}

#[cfg(test)]
mod guard_tests {
    use super::super::Endpoint;
    use super::STALE_RETRY;
    use crate::chunk::ChunkSize;
    use crate::hash::HashFunction;
    use crate::merkle::MerkleTree;
    use crate::pick::Sequential;
    use crate::proto::{EndpointConfig, SwarmSetup};
    use crate::storage::MemoryStorage;
    use crate::time::Instant;
    use crate::wire::{ChannelId, DatagramWriter, HandshakeOptions, Message, SwarmParams};
    use std::sync::Arc;

    /// A channel whose deadline stays at `now` after its timer ran there
    /// and it had nothing to send is filed a little later, and counted:
    /// `poll_timeout` moves past `now`.
    #[test]
    fn a_stale_deadline_is_filed_later_and_counted() {
        let cs = ChunkSize::new(1024).unwrap();
        let data = vec![7u8; 4096];
        let tree = Arc::new(MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap());
        let mut ep = Endpoint::new(EndpointConfig::default(), 1);
        let storage = Box::new(MemoryStorage::with_content(cs, data));
        ep.add_swarm(
            Instant::ZERO,
            SwarmSetup::seed(tree.clone(), storage, Box::new(Sequential)),
        )
        .unwrap();
        let root = tree.root();
        let options = HandshakeOptions {
            version: Some(1),
            swarm_id: Some(root.as_bytes()),
            ..HandshakeOptions::default()
        };
        let mut buf = vec![0u8; 1500];
        let mut w = DatagramWriter::new(&mut buf, ChannelId::ZERO, SwarmParams::default()).unwrap();
        w.push(&Message::Handshake {
            source: ChannelId(77),
            options,
        })
        .unwrap();
        let n = w.finish();
        let now = Instant::from_micros(1_000_000);
        let from = "10.0.0.9:6778".parse().unwrap();
        ep.handle_datagram(now, from, &buf[..n]);
        // Its answer is due (a deadline at `now`), and its timer has run at
        // `now`: a deadline at `now` again is stale.
        let id = *ep.channels.keys().next().unwrap();
        ep.timers_run.note(now, id);
        ep.settle(now, id);
        assert_eq!(ep.stats.stale_deadlines, 1);
        assert_eq!(ep.channels[&id].filed(), Some(now + STALE_RETRY));
        while ep.poll_event().is_some() {}
        assert_eq!(ep.poll_timeout(now), Some(now + STALE_RETRY));
        // Without its timer having run, the same deadline is work to do.
        let later = now + STALE_RETRY;
        ep.settle(later, id);
        assert_eq!(ep.stats.stale_deadlines, 1);
        assert_eq!(ep.poll_timeout(later), Some(later));
    }
}
