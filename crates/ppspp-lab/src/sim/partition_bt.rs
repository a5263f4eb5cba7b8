//! BitTorrent peers in a partition: joining (a `BtPeer` told of peers by
//! the tracker), packets and timers, re-announcing, and progress. The
//! rest of a peer's life (arrival, departure, completion, results) is the
//! same as a ppspp peer's.

use super::{Control, Partition, Shared};
use crate::bt::BtPeer;
use crate::packet::{HostId, Packet};
use crate::rng::{rng, Stream};
use crate::scenario::Role;
use crate::sim::trace::Kind;

impl Partition {
    /// Peer `i` joins its BitTorrent swarm: a seed holds the content, a
    /// leecher nothing; it connects to whom the tracker names.
    pub(super) fn join_bt(&mut self, i: u32, shared: &Shared) {
        let now = self.now;
        let scenario = &shared.scenario;
        let (group, role) = {
            let p = self.peer(i);
            (p.plan.group, p.plan.role)
        };
        let spec = scenario.peers[group].get_ref();
        let config = spec.bittorrent.unwrap_or_default().config();
        let mut bt = BtPeer::new(
            HostId(i),
            config,
            scenario.content.size.0,
            role == Role::Seeder,
            now,
            rng(shared.seed, Stream::Peer, u64::from(i)),
        );
        let want = scenario.swarm.tracker_peers;
        let peer = self.peer_mut(i);
        for j in shared.tracker.answer(i, now, want, &mut peer.tracker_rng) {
            bt.connect(now, HostId(j));
        }
        peer.bt = Some(Box::new(bt));
        peer.joined = Some(now);
        if let super::Leave::After(life) = peer.plan.leave {
            self.control(now + life, i, Control::Leave);
        }
        if role == Role::Leecher {
            self.incomplete_leechers += 1;
            self.control(now + scenario.swarm.reannounce.0, i, Control::Announce);
        }
        self.present += 1;
        self.record(Kind::Join, i, i, 0, 0);
        self.flush_bt(i);
    }

    /// A leecher still downloading asks the tracker again when it has
    /// fewer connections than the tracker names (as clients re-announce
    /// for more peers).
    pub(super) fn announce_bt(&mut self, i: u32, shared: &Shared) {
        let now = self.now;
        let swarm = &shared.scenario.swarm;
        let p = self.peer_mut(i);
        let Some(bt) = p.bt.as_mut() else {
            return;
        };
        if p.completed.is_some() {
            return;
        }
        if bt.connections() < swarm.tracker_peers {
            for j in shared
                .tracker
                .answer(i, now, swarm.tracker_peers, &mut p.tracker_rng)
            {
                bt.connect(now, HostId(j));
            }
            self.flush_bt(i);
        }
        self.control(now + swarm.reannounce.0, i, Control::Announce);
    }

    /// A packet for a BitTorrent peer.
    pub(super) fn deliver_bt(&mut self, p: Packet) {
        let i = p.dst.0;
        let now = self.now;
        let Some(bt) = self
            .peers
            .get_mut((i / self.layout.parts) as usize)
            .and_then(|x| x.bt.as_mut())
        else {
            self.to_absent += 1;
            return;
        };
        bt.on_packet(now, p);
        self.flush_bt(i);
    }

    /// Sends what peer `i`'s BitTorrent peer has to send and queues its
    /// timer.
    pub(super) fn flush_bt(&mut self, i: u32) {
        let now = self.now;
        let k = (i / self.layout.parts) as usize;
        let Some(bt) = self.peers[k].bt.as_mut() else {
            return;
        };
        while let Some(p) = bt.poll_transmit(now) {
            self.net.send(now, p);
        }
        let next = bt.poll_timeout();
        let done = bt.completed_at().is_some();
        let (have, pieces) = bt.progress();
        let peer = &mut self.peers[k];
        if let (Some(st), None) = (&self.startup, peer.started) {
            // Anywhere in the content: pieces held × the piece's share of it.
            if peer.plan.role == Role::Leecher
                && pieces > 0
                && u64::from(have) * st.content_bytes >= st.bytes * u64::from(pieces)
            {
                peer.started = Some(now);
            }
        }
        self.set_timer(i, next);
        if done {
            self.mark_completed(i);
        }
    }
}

/// A BitTorrent leecher's progress in the scenario's chunks, so that it
/// sums with ppspp peers' in the progress samples.
pub(super) fn bt_have_chunks(bt: &BtPeer, shared: &Shared) -> u64 {
    let (have, pieces) = bt.progress();
    let chunks = shared.content.as_ref().map_or(0, |c| c.chunk_count());
    if pieces == 0 {
        return 0;
    }
    chunks * u64::from(have) / u64::from(pieces)
}
