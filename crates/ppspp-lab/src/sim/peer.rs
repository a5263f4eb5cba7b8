//! A simulated peer: one host, one protocol-core endpoint (the same
//! `Endpoint` the UDP driver runs), one swarm.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use ppspp_core::proto::SwarmHandle;
use ppspp_core::proto::{DropCounts, Endpoint, SwarmStats};
use ppspp_core::time::Instant;
use ppspp_core::wire::MessageTally;
use rand::rngs::Xoshiro256PlusPlus;

use super::plan::PeerPlan;
use crate::bt::{BtPeer, BtStats};
use crate::live::source::LiveSource;
use crate::live::viewer::LiveViewer;
use crate::packet::HostId;
use crate::rng::{rng, Stream};
use ppspp_core::play::Viewer;

/// The port every simulated peer listens on.
pub const PORT: u16 = 6778;

/// The address of host `h`: 10.x.y.z, never ending in .0.
pub fn addr_of(h: HostId) -> SocketAddr {
    let n = h.0 + 1;
    let ip = Ipv4Addr::new(10, (n >> 16) as u8, (n >> 8) as u8, n as u8);
    SocketAddr::V4(SocketAddrV4::new(ip, PORT))
}

/// The host behind an address, if it is one of ours.
pub fn host_of(a: SocketAddr) -> Option<HostId> {
    let SocketAddr::V4(v4) = a else { return None };
    let o = v4.ip().octets();
    if o[0] != 10 || v4.port() != PORT {
        return None;
    }
    let n = (u32::from(o[1]) << 16) | (u32::from(o[2]) << 8) | u32::from(o[3]);
    n.checked_sub(1).map(HostId)
}

/// A peer's life in the simulation.
pub struct Peer {
    /// What the scenario planned.
    pub plan: PeerPlan,
    /// Its host.
    pub host: HostId,
    /// The running core, while the peer is in the swarm.
    pub endpoint: Option<Box<Endpoint>>,
    /// Its swarm in the endpoint.
    pub swarm: Option<SwarmHandle>,
    /// When its endpoint asked to be woken (the queued timer, if any).
    pub timer: Option<Instant>,
    /// When it joined.
    pub joined: Option<Instant>,
    /// When it left.
    pub left: Option<Instant>,
    /// When its download completed.
    pub completed: Option<Instant>,
    /// When it first held `record.startup_bytes` (see [`super::Startup`]).
    pub started: Option<Instant>,
    /// Its swarm's counters, taken when it left (or at the end).
    pub stats: Option<SwarmStats>,
    /// The messages its endpoint sent, by type, taken with `stats`.
    pub sent: MessageTally,
    /// The datagrams it dropped, by why (taken as it leaves).
    pub dropped: DropCounts,
    /// Its own random stream for the tracker's answers.
    pub tracker_rng: Xoshiro256PlusPlus,
    /// The instant its timer last fired, and how often it fired then (to
    /// break a livelock).
    pub fired_at: Instant,
    /// See `fired_at`.
    pub fired: u32,
    /// Chunks it had when it last considered asking the tracker again.
    pub announced_have: u64,
    /// Its player, when the scenario gives its group one.
    pub viewer: Option<Viewer>,
    /// Its live player, when it watches a live stream.
    pub live_viewer: Option<LiveViewer>,
    /// Its camera, when it is a live stream's source.
    pub live_source: Option<LiveSource>,
    /// Its BitTorrent peer, while it is in a BitTorrent swarm.
    pub bt: Option<Box<BtPeer>>,
    /// Its BitTorrent counters, taken when it left (or at the end).
    pub bt_stats: Option<BtStats>,
}

impl Peer {
    /// A peer not yet arrived, of the experiment `seed`.
    pub fn new(plan: PeerPlan, host: HostId, seed: u64) -> Peer {
        Peer {
            plan,
            host,
            endpoint: None,
            swarm: None,
            timer: None,
            joined: None,
            left: None,
            completed: None,
            started: None,
            stats: None,
            sent: MessageTally::default(),
            dropped: DropCounts::default(),
            tracker_rng: rng(seed, Stream::Tracker, u64::from(host.0)),
            fired_at: Instant::ZERO,
            fired: 0,
            announced_have: 0,
            viewer: None,
            live_viewer: None,
            live_source: None,
            bt: None,
            bt_stats: None,
        }
    }

    /// Whether it is in the swarm now.
    pub fn present(&self) -> bool {
        self.endpoint.is_some() || self.bt.is_some()
    }

    /// Takes the swarm's counters and freezes the viewer's metrics (for
    /// results), as the peer leaves at `now`.
    pub fn snapshot(&mut self, now: Instant) {
        if let Some(bt) = &self.bt {
            self.bt_stats = Some(bt.stats().clone());
        }
        if let (Some(ep), Some(s)) = (&self.endpoint, self.swarm) {
            self.stats = ep.swarm_stats(s);
            self.sent = ep.stats().messages_sent;
            self.dropped = ep.stats().dropped.clone();
            if let Some(v) = self.viewer.as_mut() {
                v.leave(now, ep, s);
            }
            if let Some(v) = self.live_viewer.as_mut() {
                v.leave(now, ep, s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip() {
        for h in [0, 1, 255, 256, 65_535, 70_000, 1 << 23] {
            assert_eq!(host_of(addr_of(HostId(h))), Some(HostId(h)));
        }
        assert_eq!(host_of("10.0.0.0:6778".parse().unwrap()), None);
        assert_eq!(host_of("192.168.0.1:6778".parse().unwrap()), None);
        assert_eq!(host_of("10.0.0.1:80".parse().unwrap()), None);
    }
}
