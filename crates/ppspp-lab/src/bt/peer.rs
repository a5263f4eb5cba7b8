//! A BitTorrent peer of the lab: its connections, the choking rounds, the
//! requests it keeps out and the uploads it serves, driven sans-IO like
//! every lab agent (packets and time in, packets out). The messages'
//! meaning is in `peer_messages.rs`.

use std::collections::{BTreeMap, VecDeque};

use ppspp_core::time::Instant;
use rand::rngs::Xoshiro256PlusPlus;

use super::choker::{Candidate, Choker};
use super::config::{BtConfig, Disposition};
use super::connection::Connection;
use super::picker::Picker;
use super::timers::{TimerIndex, Touched};
use super::transport::{earliest, Link, Transport};
use super::wire::Message;
use crate::packet::{conn_id, Body, HostId, Packet, UtpType};

/// A connection's key: its id and transport.
pub type ConnKey = (u64, Transport);

/// What a BitTorrent peer counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BtStats {
    /// Piece bytes received and kept (duplicates not counted).
    pub bytes_down: u64,
    /// ... of which over TCP.
    pub bytes_down_tcp: u64,
    /// ... of which over uTP.
    pub bytes_down_utp: u64,
    /// Piece bytes written to peers.
    pub bytes_up: u64,
    /// ... of which over TCP.
    pub bytes_up_tcp: u64,
    /// ... of which over uTP.
    pub bytes_up_utp: u64,
    /// Piece bytes received from each host.
    pub down_from: BTreeMap<u32, u64>,
    /// Connections opened by us.
    pub connects: u64,
    /// ... that did not open within the connect timeout.
    pub connect_failures: u64,
    /// Connections accepted.
    pub accepts: u64,
    /// Connections closed because another to the same peer won.
    pub duplicates_closed: u64,
    /// Blocks that arrived twice (end game, late answers).
    pub duplicate_blocks: u64,
    /// Packets for no connection we know.
    pub stray_packets: u64,
}

/// A BitTorrent peer.
pub struct BtPeer {
    pub(super) host: HostId,
    pub(super) config: BtConfig,
    pub(super) picker: Picker,
    choker: Choker<ConnKey>,
    pub(super) conns: BTreeMap<ConnKey, Connection>,
    /// Connections something was done to: they may have something to
    /// send, and their timers may have moved (`timers.rs`).
    pub(super) dirty: Touched,
    /// Every connection's next deadline (its transport's timers, and the
    /// connect timeout while it opens), as of the last refresh.
    timers: TimerIndex,
    opened: u32,
    /// Peers to connect to, in the order heard of, when a half-open slot
    /// frees.
    to_connect: VecDeque<HostId>,
    pub(super) rng: Xoshiro256PlusPlus,
    next_round: Instant,
    pub(super) stats: BtStats,
    pub(super) completed_at: Option<Instant>,
}

impl BtPeer {
    /// A peer on `host` for `total` bytes of content, holding all of it
    /// (`seed`) or none, from `now`.
    pub fn new(
        host: HostId,
        config: BtConfig,
        total: u64,
        seed: bool,
        now: Instant,
        rng: Xoshiro256PlusPlus,
    ) -> BtPeer {
        BtPeer {
            host,
            picker: Picker::new(total, config.piece_len, config.block_len, seed),
            choker: Choker::new(config.slots, config.optimistic_every),
            next_round: now + config.choke_interval,
            config,
            conns: BTreeMap::new(),
            dirty: Touched::default(),
            timers: TimerIndex::default(),
            opened: 0,
            to_connect: VecDeque::new(),
            rng,
            stats: BtStats::default(),
            completed_at: seed.then_some(now),
        }
    }

    /// The counters.
    pub fn stats(&self) -> &BtStats {
        &self.stats
    }

    /// Pieces held and in the content.
    pub fn progress(&self) -> (u32, u32) {
        (self.picker.have_count(), self.picker.pieces())
    }

    /// When it came to hold every piece (at once for a seed).
    pub fn completed_at(&self) -> Option<Instant> {
        self.completed_at
    }

    /// Connections, open or opening.
    pub fn connections(&self) -> usize {
        self.conns.values().filter(|c| !c.closing).count()
    }

    /// Whether some connection, open or opening, goes to `remote`.
    fn connected_to(&self, remote: HostId) -> bool {
        self.conns
            .values()
            .any(|c| c.remote == remote && !c.closing)
    }

    /// Outgoing connections not open yet.
    fn half_open(&self) -> usize {
        let open = |c: &Connection| c.initiator && !c.closing && !c.link.is_open();
        self.conns.values().filter(|c| open(c)).count()
    }

    /// Queues a connection to `remote` (heard of from the tracker); it is
    /// opened when a half-open slot is free.
    pub fn connect(&mut self, now: Instant, remote: HostId) {
        if remote != self.host && !self.to_connect.contains(&remote) {
            self.to_connect.push_back(remote);
        }
        self.open_pending(now);
    }

    /// Opens queued connections while fewer than `max_half_open` are
    /// opening and fewer than `max_peers` exist.
    pub(super) fn open_pending(&mut self, now: Instant) {
        // Called after every packet: the counts below scan the connections,
        // so not while nobody waits to be connected to.
        if self.to_connect.is_empty() {
            return;
        }
        while self.half_open() < self.config.max_half_open
            && self.connections() < self.config.max_peers
        {
            let Some(remote) = self.to_connect.pop_front() else {
                return;
            };
            if !self.connected_to(remote) {
                self.open(now, remote);
            }
        }
    }

    /// Opens connections to `remote` as the disposition says: uTP and TCP
    /// at once when it opens both (the TCP one is dropped if uTP also
    /// succeeds, `peer_messages.rs`).
    fn open(&mut self, now: Instant, remote: HostId) {
        let d = self.config.disposition;
        if d.has(Disposition::OUT_UTP) {
            self.opened += 1;
            let id = conn_id(self.host, self.opened);
            let target = self.config.utp_target;
            let link = Link::utp(self.host, remote, id, true, now, target);
            self.add(now, (id, Transport::Utp), remote, link, true);
            self.stats.connects += 1;
        }
        if d.has(Disposition::OUT_TCP) {
            self.opened += 1;
            let id = conn_id(self.host, self.opened);
            let link = Link::tcp(self.host, remote, id, true, now, self.config.tcp);
            self.add(now, (id, Transport::Tcp), remote, link, true);
            self.stats.connects += 1;
        }
    }

    fn add(&mut self, now: Instant, key: ConnKey, remote: HostId, link: Link, initiator: bool) {
        let mut c = Connection::new(remote, link, initiator, now, self.picker.pieces());
        if initiator {
            // BEP 3: the initiator sends its handshake first; it waits in
            // the stream until the transport is open.
            c.send(&Message::Handshake { peer: self.host.0 });
            c.sent_handshake = true;
        }
        self.conns.insert(key, c);
        self.dirty.insert(key);
    }

    /// Closes every connection (the peer leaves).
    pub fn close_all(&mut self) {
        let keys: Vec<ConnKey> = self.conns.keys().copied().collect();
        for k in keys {
            self.close(k);
        }
    }

    pub(super) fn close(&mut self, k: ConnKey) {
        let Some(c) = self.conns.get_mut(&k) else {
            return;
        };
        let picker = &mut self.picker;
        let mut unask = Vec::new();
        let mut gone = None;
        c.close(&mut |b| unask.push(*b), &mut |p| gone = Some(p.to_vec()));
        for b in &unask {
            picker.unask(b);
        }
        if let Some(p) = gone {
            picker.peer_gone(&p);
        }
        self.dirty.insert(k);
    }

    /// A packet for this host arrived.
    pub fn on_packet(&mut self, now: Instant, p: Packet) {
        let key = match &p.body {
            Body::Tcp(seg) => (seg.conn, Transport::Tcp),
            Body::Utp(u) => (u.conn, Transport::Utp),
            _ => return,
        };
        if !self.conns.contains_key(&key) && !self.accept(now, key, &p) {
            self.stats.stray_packets += 1;
            return;
        }
        if let Some(c) = self.conns.get_mut(&key) {
            c.link.on_packet(now, p);
        }
        self.dirty.insert(key);
        self.pump(now, key);
        self.open_pending(now);
    }

    /// A connection opening towards us: taken if the disposition accepts
    /// its transport and there is room.
    fn accept(&mut self, now: Instant, key: ConnKey, p: &Packet) -> bool {
        let d = self.config.disposition;
        let (opening, allowed) = match &p.body {
            Body::Tcp(seg) => (seg.syn, d.has(Disposition::IN_TCP)),
            Body::Utp(u) => (u.kind == UtpType::Syn, d.has(Disposition::IN_UTP)),
            _ => (false, false),
        };
        if !opening || !allowed || self.connections() >= self.config.max_peers {
            return false;
        }
        let link = match key.1 {
            Transport::Tcp => Link::tcp(self.host, p.src, key.0, false, now, self.config.tcp),
            Transport::Utp => {
                let target = self.config.utp_target;
                Link::utp(self.host, p.src, key.0, false, now, target)
            }
        };
        self.add(now, key, p.src, link, false);
        self.stats.accepts += 1;
        true
    }

    /// Timers: the choking round, connect timeouts, and the transports'.
    pub fn on_timeout(&mut self, now: Instant) {
        if now >= self.next_round {
            self.choke_round();
            self.next_round = now + self.config.choke_interval;
        }
        // Only connections with a deadline by now can have failed or have
        // a transport timer due; they are taken in key order, as a scan of
        // all of them would.
        self.refresh_timers();
        let maybe = self.timers.due(now);
        let timeout = self.config.connect_timeout;
        let failed: Vec<ConnKey> = maybe
            .iter()
            .filter(|k| {
                self.conns
                    .get(k)
                    .is_some_and(|c| !c.link.is_open() && now >= c.started + timeout)
            })
            .copied()
            .collect();
        for k in failed {
            if let Some(c) = self.conns.remove(&k) {
                if c.initiator {
                    self.stats.connect_failures += 1;
                }
            }
            self.dirty.remove(&k);
        }
        let due: Vec<ConnKey> = maybe
            .iter()
            .filter(|k| {
                self.conns
                    .get(k)
                    .is_some_and(|c| c.link.poll_timeout().is_some_and(|t| t <= now))
            })
            .copied()
            .collect();
        for k in due {
            if let Some(c) = self.conns.get_mut(&k) {
                c.link.on_timeout(now);
            }
            self.dirty.insert(k);
            self.pump(now, k);
        }
        self.open_pending(now);
    }

    /// The next packet to send.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        while let Some(&k) = self.dirty.first() {
            let packet = self
                .conns
                .get_mut(&k)
                .and_then(|c| c.link.poll_transmit(now));
            if packet.is_some() {
                return packet;
            }
            self.dirty.remove(&k);
            // A closed connection with nothing left to move is forgotten.
            if self
                .conns
                .get(&k)
                .is_some_and(|c| c.closing && c.link.is_done())
            {
                self.conns.remove(&k);
            }
        }
        None
    }

    /// When it next wants [`BtPeer::on_timeout`].
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.refresh_timers();
        earliest(Some(self.next_round), self.timers.earliest())
    }

    /// Re-reads the deadlines of the connections touched since the last
    /// refresh.
    fn refresh_timers(&mut self) {
        let (conns, timeout) = (&self.conns, self.config.connect_timeout);
        self.timers.refresh(&mut self.dirty, |k| {
            let c = conns.get(k)?;
            let opening = (!c.link.is_open()).then_some(c.started + timeout);
            earliest(c.link.poll_timeout(), opening)
        });
    }

    /// One choking round: unchoke the winners, choke the rest, and start
    /// the next rate window.
    fn choke_round(&mut self) {
        let seed = self.picker.is_complete();
        let cands: Vec<Candidate<ConnKey>> = self
            .conns
            .iter()
            .filter(|(_, c)| c.is_ready())
            .map(|(k, c)| Candidate {
                key: *k,
                interested: c.peer_interested,
                // A seed ranks by what it uploads to each (mainline 4.x),
                // a leecher by what each uploads to it (tit-for-tat).
                rate: if seed { c.up.recent() } else { c.down.recent() },
            })
            .collect();
        let unchoke = self.choker.round(&cands, &mut self.rng);
        for (k, c) in self.conns.iter_mut() {
            if c.is_ready() {
                let open = unchoke.contains(k);
                if open && c.am_choking {
                    c.am_choking = false;
                    c.send(&Message::Unchoke);
                    self.dirty.insert(*k);
                } else if !open && !c.am_choking {
                    // BEP 3: a choked peer's pending requests are dropped.
                    c.am_choking = true;
                    c.requests.clear();
                    c.send(&Message::Choke);
                    self.dirty.insert(*k);
                }
            }
            c.down.roll();
            c.up.roll();
        }
        let keys: Vec<ConnKey> = self.dirty.to_send().copied().collect();
        for k in keys {
            self.serve(k);
        }
    }
}

#[cfg(test)]
#[path = "peer_tests.rs"]
mod tests;
