//! The network model, sans-IO like the protocol core: packets go in with
//! [`Network::send`], come out with [`Network::poll_delivery`], and time
//! moves only through [`Network::handle_timeout`].
//!
//! A host hangs off the network by an access link in each direction. Hosts
//! may sit behind a site (an access router) whose shared uplink and
//! downlink every packet leaving or entering the site crosses; a site may
//! sit inside a larger one (an access router behind an ISP's aggregation
//! router), up to [`MAX_SITE_DEPTH`] levels. Between the edges, a fixed
//! core delay set per pair of host groups (a matrix) or per pair of hosts.
//! A packet from A to B climbs A's sites up to the smallest one holding
//! both (or to the core), then descends B's:
//! `A.up → [site uplinks] → core delay → [site downlinks] → B.down`.

mod link;
mod loss;

pub use link::{Link, LinkConfig, LinkStats, Offer, QueueLimit, QueueSample, WaitSample};
pub use loss::{Loss, LossModel};

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::time::Duration;

use ppspp_core::time::{duration_micros, Instant};

use crate::packet::{HostId, Packet};
use crate::rng::{rng, Stream};

/// A link of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LinkId(pub u32);

/// A site: hosts behind one access router with a shared uplink/downlink.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SiteId(pub u32);

/// Where a host is attached.
#[derive(Clone, Copy, Debug)]
struct Attachment {
    up: LinkId,
    down: LinkId,
    site: Option<SiteId>,
    group: usize,
}

#[derive(Clone, Copy, Debug)]
struct Site {
    up: LinkId,
    down: LinkId,
    /// The site this one sits in, if any.
    parent: Option<SiteId>,
}

/// How many sites deep a host may sit.
pub const MAX_SITE_DEPTH: usize = 4;

/// The links a packet crosses, and after which of them the core delay
/// applies.
#[derive(Clone, Copy, Debug)]
struct Path {
    links: [LinkId; 2 + 2 * MAX_SITE_DEPTH],
    len: u8,
    core_after: u8,
}

/// A packet between two links, due at the next one (or at its host).
struct InFlight {
    next: u8,
    id: PacketId,
    packet: Packet,
}

/// A packet's identity, also its place among events due at the same
/// instant: the sending host in the high bits, that host's count of sends
/// in the low ones. It depends on nothing but the sender's own history, so
/// the order of simultaneous events is the same however the hosts are
/// split among partitions (see [`Partitioning`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PacketId(pub u64);

/// Bits of a [`PacketId`] that count a host's sends.
const SEND_BITS: u32 = 40;

/// When a packet in flight is due: (time, packet id, its slot). The heap
/// holds these small keys and the packets wait in a slab, so that sifting
/// moves 24 bytes, not whole packets.
type Due = Reverse<(Instant, PacketId, u32)>;

/// Which hosts' links this network moves packets on, when the simulation
/// runs as several partitions (one network each): partition `part` of
/// `parts` owns the hosts whose id is `part` modulo `parts`. A packet for
/// a host of another partition leaves through the outbox once it has
/// crossed the core, where the delay is at least the lookahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partitioning {
    /// This network's partition.
    pub part: u32,
    /// How many partitions there are.
    pub parts: u32,
}

impl Partitioning {
    /// Everything in one partition.
    pub const WHOLE: Partitioning = Partitioning { part: 0, parts: 1 };

    /// The partition that owns `host`.
    pub fn owner(self, host: HostId) -> u32 {
        host.0 % self.parts
    }

    /// Whether this partition owns `host`.
    pub fn owns(self, host: HostId) -> bool {
        self.owner(host) == self.part
    }
}

/// A packet handed from one partition's network to another's: due at
/// `at` on the next link of its path.
pub struct Handoff {
    at: Instant,
    flight: InFlight,
}

impl Handoff {
    /// The host it goes to (whose partition takes it).
    pub fn dst(&self) -> HostId {
        self.flight.packet.dst
    }
}

/// Counters of the whole network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NetStats {
    /// Packets handed to [`Network::send`].
    pub sent: u64,
    /// Packets delivered to their host.
    pub delivered: u64,
    /// Packets dropped by a full queue.
    pub queue_drops: u64,
    /// Packets lost at random.
    pub lost: u64,
}

/// Hosts, links and the packets on them.
pub struct Network {
    seed: u64,
    links: Vec<Link>,
    hosts: Vec<Attachment>,
    sites: Vec<Site>,
    /// One-way core delay between host groups, `[from][to]`.
    group_delay: Vec<Vec<Duration>>,
    pair_delay: BTreeMap<(HostId, HostId), Duration>,
    in_flight: BinaryHeap<Due>,
    /// Packets in flight by slot; free slots are listed in `free`.
    slots: Vec<Option<InFlight>>,
    free: Vec<u32>,
    /// Sends so far by each host (the low bits of its packet ids).
    sends: Vec<u64>,
    ready: VecDeque<Packet>,
    stats: NetStats,
    partitioning: Partitioning,
    /// Packets bound for other partitions, due there at or after the
    /// lookahead.
    outbox: Vec<Handoff>,
    /// The host whose access link each link is (`None` for site links).
    link_host: Vec<Option<HostId>>,
}

impl Network {
    /// An empty network whose links draw randomness from `seed`.
    pub fn new(seed: u64) -> Network {
        Network {
            seed,
            links: Vec::new(),
            hosts: Vec::new(),
            sites: Vec::new(),
            group_delay: Vec::new(),
            pair_delay: BTreeMap::new(),
            in_flight: BinaryHeap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            sends: Vec::new(),
            ready: VecDeque::new(),
            stats: NetStats::default(),
            partitioning: Partitioning::WHOLE,
            outbox: Vec::new(),
            link_host: Vec::new(),
        }
    }

    /// Makes this network one partition's: it moves packets only on its
    /// own hosts' links and hands the others on (see [`Partitioning`]).
    /// Only for networks without sites, whose paths are `A.up → core →
    /// B.down`.
    pub fn set_partitioning(&mut self, p: Partitioning) {
        debug_assert!(self.sites.is_empty() || p.parts == 1);
        self.partitioning = p;
    }

    /// A lower bound on the time from a packet leaving a host to its
    /// arrival at another host's downlink: the smallest uplink delay plus
    /// the smallest core delay. Partitions may run this far apart.
    pub fn lookahead(&self) -> Duration {
        let up = self
            .hosts
            .iter()
            .map(|h| self.links[h.up.0 as usize].config().delay)
            .min()
            .unwrap_or(Duration::ZERO);
        // A host outside the matrix has no core delay to anyone.
        let groups = self.group_delay.len();
        let square = self.group_delay.iter().all(|r| r.len() == groups);
        let covered = square && self.hosts.iter().all(|h| h.group < groups);
        let core = if covered {
            self.group_delay
                .iter()
                .flatten()
                .chain(self.pair_delay.values())
                .min()
                .copied()
                .unwrap_or(Duration::ZERO)
        } else {
            Duration::ZERO
        };
        up + core
    }

    /// Takes the packets bound for other partitions.
    pub fn take_outbox(&mut self) -> Vec<Handoff> {
        std::mem::take(&mut self.outbox)
    }

    /// Takes a packet from another partition.
    pub fn inject(&mut self, h: Handoff) {
        debug_assert!(self.partitioning.owns(h.flight.packet.dst));
        self.schedule(h.at, h.flight);
    }

    /// Takes over from `other` (another partition's network over the same
    /// topology) the links of the hosts it owns, and adds its counters.
    pub fn absorb(&mut self, other: &mut Network) {
        let p = other.partitioning;
        for (i, host) in self.link_host.iter().enumerate() {
            if host.is_some_and(|h| p.owns(h)) {
                std::mem::swap(&mut self.links[i], &mut other.links[i]);
            }
        }
        self.stats.sent += other.stats.sent;
        self.stats.delivered += other.stats.delivered;
        self.stats.queue_drops += other.stats.queue_drops;
        self.stats.lost += other.stats.lost;
    }

    /// Adds a link (one direction).
    pub fn add_link(&mut self, config: LinkConfig) -> LinkId {
        let id = LinkId(self.links.len() as u32);
        let r = rng(self.seed, Stream::Link, u64::from(id.0));
        self.links.push(Link::new(config, r));
        self.link_host.push(None);
        id
    }

    /// Adds a site whose hosts share `up` and `down` to the rest.
    pub fn add_site(&mut self, up: LinkConfig, down: LinkConfig) -> SiteId {
        let up = self.add_link(up);
        let down = self.add_link(down);
        self.sites.push(Site {
            up,
            down,
            parent: None,
        });
        SiteId(self.sites.len() as u32 - 1)
    }

    /// Puts `site` inside `parent`. Refused (false) for unknown sites, or
    /// when it would make a cycle or nest deeper than [`MAX_SITE_DEPTH`].
    pub fn set_site_parent(&mut self, site: SiteId, parent: SiteId) -> bool {
        let n = self.sites.len() as u32;
        if site.0 >= n || parent.0 >= n {
            return false;
        }
        let old = self.sites[site.0 as usize].parent.replace(parent);
        let ok = self.ancestry(Some(site)).1.is_some()
            && self
                .sites
                .iter()
                .enumerate()
                .all(|(i, _)| self.ancestry(Some(SiteId(i as u32))).1.is_some());
        if !ok {
            self.sites[site.0 as usize].parent = old;
        }
        ok
    }

    /// `site` and the sites around it, innermost first, and how many; the
    /// count is `None` for a chain longer than [`MAX_SITE_DEPTH`] (or a
    /// cycle).
    fn ancestry(&self, site: Option<SiteId>) -> ([Option<SiteId>; MAX_SITE_DEPTH], Option<usize>) {
        let mut chain = [None; MAX_SITE_DEPTH];
        let mut at = site;
        for (i, slot) in chain.iter_mut().enumerate() {
            let Some(s) = at else {
                return (chain, Some(i));
            };
            *slot = Some(s);
            at = self.sites[s.0 as usize].parent;
        }
        (chain, at.is_none().then_some(MAX_SITE_DEPTH))
    }

    /// Adds a host with its access links, in delay group `group`, behind
    /// `site` if given.
    pub fn add_host(
        &mut self,
        up: LinkConfig,
        down: LinkConfig,
        site: Option<SiteId>,
        group: usize,
    ) -> HostId {
        let up = self.add_link(up);
        let down = self.add_link(down);
        let host = HostId(self.hosts.len() as u32);
        self.link_host[up.0 as usize] = Some(host);
        self.link_host[down.0 as usize] = Some(host);
        self.hosts.push(Attachment {
            up,
            down,
            site,
            group,
        });
        self.sends.push(0);
        host
    }

    /// Sets the one-way core delay between groups: `matrix[from][to]`.
    pub fn set_group_delays(&mut self, matrix: Vec<Vec<Duration>>) {
        self.group_delay = matrix;
    }

    /// Sets the one-way core delay from `a` to `b` (overrides the groups').
    pub fn set_pair_delay(&mut self, a: HostId, b: HostId, delay: Duration) {
        self.pair_delay.insert((a, b), delay);
    }

    /// Number of hosts.
    pub fn host_count(&self) -> usize {
        self.hosts.len()
    }

    /// A host's uplink and downlink.
    pub fn access_links(&self, host: HostId) -> Option<(LinkId, LinkId)> {
        self.hosts.get(host.0 as usize).map(|h| (h.up, h.down))
    }

    /// A site's uplink and downlink.
    pub fn site_links(&self, site: SiteId) -> Option<(LinkId, LinkId)> {
        self.sites.get(site.0 as usize).map(|s| (s.up, s.down))
    }

    /// A link, to read its counters and samples or to ask for them.
    pub fn link(&self, id: LinkId) -> &Link {
        &self.links[id.0 as usize]
    }

    /// A link, mutable (to record samples or trace a flow).
    pub fn link_mut(&mut self, id: LinkId) -> &mut Link {
        &mut self.links[id.0 as usize]
    }

    /// Number of links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// The counters.
    pub fn stats(&self) -> &NetStats {
        &self.stats
    }

    /// The one-way core delay from `a` to `b`.
    pub fn core_delay(&self, a: HostId, b: HostId) -> Duration {
        if let Some(d) = self.pair_delay.get(&(a, b)) {
            return *d;
        }
        let (ga, gb) = (
            self.hosts[a.0 as usize].group,
            self.hosts[b.0 as usize].group,
        );
        self.group_delay
            .get(ga)
            .and_then(|row| row.get(gb))
            .copied()
            .unwrap_or(Duration::ZERO)
    }

    fn path(&self, src: HostId, dst: HostId) -> Path {
        let (a, b) = (self.hosts[src.0 as usize], self.hosts[dst.0 as usize]);
        let (up, n_up) = self.ancestry(a.site);
        let (down, n_down) = self.ancestry(b.site);
        let (n_up, n_down) = (n_up.unwrap_or(0), n_down.unwrap_or(0));
        // Climb A's sites until one also holds B; descend B's below it.
        let shared = |s: Option<SiteId>| down[..n_down].contains(&s);
        let climb = up[..n_up].iter().position(|s| shared(*s)).unwrap_or(n_up);
        let meet = up.get(climb).copied().flatten();
        let descend = down[..n_down]
            .iter()
            .position(|s| meet.is_some() && *s == meet)
            .unwrap_or(n_down);
        let mut links = [a.up; 2 + 2 * MAX_SITE_DEPTH];
        let mut len = 1;
        for s in up[..climb].iter().flatten() {
            links[len] = self.sites[s.0 as usize].up;
            len += 1;
        }
        let core_after = len as u8;
        for s in down[..descend].iter().rev().flatten() {
            links[len] = self.sites[s.0 as usize].down;
            len += 1;
        }
        links[len] = b.down;
        len += 1;
        Path {
            links,
            len: len as u8,
            core_after,
        }
    }

    /// A host sends `packet` at `now`. Unknown hosts are ignored.
    pub fn send(&mut self, now: Instant, packet: Packet) {
        let n = self.hosts.len() as u32;
        if packet.src.0 >= n || packet.dst.0 >= n {
            return;
        }
        self.stats.sent += 1;
        let count = &mut self.sends[packet.src.0 as usize];
        *count += 1;
        let id =
            PacketId((u64::from(packet.src.0) << SEND_BITS) | (*count & ((1 << SEND_BITS) - 1)));
        self.advance(now, 0, id, packet);
    }

    /// Offers `packet` to link `next` of its path at `now` (or delivers it
    /// when the path is done).
    fn advance(&mut self, now: Instant, next: u8, id: PacketId, packet: Packet) {
        let path = self.path(packet.src, packet.dst);
        if next >= path.len {
            self.stats.delivered += 1;
            self.ready.push_back(packet);
            return;
        }
        let link = &mut self.links[path.links[next as usize].0 as usize];
        match link.offer(now, packet.size, packet.flow) {
            Offer::Forward(mut at) => {
                if next + 1 == path.core_after {
                    let d = self.core_delay(packet.src, packet.dst);
                    at = Instant::from_micros(at.as_micros() + duration_micros(d));
                }
                let flight = InFlight {
                    next: next + 1,
                    id,
                    packet,
                };
                if next + 1 >= path.core_after && !self.partitioning.owns(flight.packet.dst) {
                    // Past the core: the rest of the path is another
                    // partition's.
                    self.outbox.push(Handoff { at, flight });
                } else {
                    self.schedule(at, flight);
                }
            }
            Offer::QueueDrop => self.stats.queue_drops += 1,
            Offer::Lost => self.stats.lost += 1,
        }
    }

    fn schedule(&mut self, at: Instant, flight: InFlight) {
        let id = flight.id;
        let f = Some(flight);
        let slot = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = f;
                i
            }
            None => {
                self.slots.push(f);
                self.slots.len() as u32 - 1
            }
        };
        self.in_flight.push(Reverse((at, id, slot)));
    }

    /// When something next happens inside the network.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.in_flight.peek().map(|r| r.0 .0)
    }

    /// Moves every packet due by `now` on to its next link or its host;
    /// returns how many moves that made.
    pub fn handle_timeout(&mut self, now: Instant) -> u64 {
        let mut moves = 0;
        while self.in_flight.peek().is_some_and(|r| r.0 .0 <= now) {
            let Some(Reverse((at, _, slot))) = self.in_flight.pop() else {
                break;
            };
            let Some(f) = self.slots[slot as usize].take() else {
                continue;
            };
            self.free.push(slot);
            moves += 1;
            self.advance(at, f.next, f.id, f.packet);
        }
        moves
    }

    /// The next packet that reached its host.
    pub fn poll_delivery(&mut self) -> Option<Packet> {
        self.ready.pop_front()
    }

    /// Packets still inside the network.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

#[cfg(test)]
#[path = "network_tests.rs"]
mod tests;
