//! A tiny deterministic network for protocol tests: endpoints exchange
//! datagrams with a fixed one-way delay in virtual time. (The lab's
//! simulator models real links; this only moves bytes.)

#![allow(dead_code)]

pub mod live;
pub mod raw_peer;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use std::sync::{Arc, Mutex};

use ppspp_core::proto::{Endpoint, Event};
use ppspp_core::storage::{MemoryStorage, Storage};
use ppspp_core::time::Instant;
use ppspp_core::ChunkIndex;

/// A datagram on the wire.
pub struct InFlight {
    pub from: SocketAddr,
    pub to: SocketAddr,
    pub bytes: Vec<u8>,
}

/// Decides whether a datagram is delivered.
pub type Filter = Box<dyn FnMut(&InFlight) -> bool>;

/// Endpoints by address, and the datagrams between them.
pub struct Net {
    pub now: Instant,
    pub delay: Duration,
    pub nodes: BTreeMap<SocketAddr, Endpoint>,
    /// Deliveries ordered by (time, sequence).
    pub wire: BTreeMap<(Instant, u64), InFlight>,
    seq: u64,
    pub events: Vec<(SocketAddr, Event)>,
    /// Called on every datagram before delivery; returning false drops it.
    pub filter: Option<Filter>,
    pub delivered: u64,
    /// Rounds of timers at one instant with nothing delivered after which
    /// the run fails as a livelock.
    pub max_idle_turns: u32,
    /// The most such rounds seen at any instant.
    pub most_idle_turns: u32,
}

pub fn addr(i: u16) -> SocketAddr {
    SocketAddr::from(([10, 0, (i >> 8) as u8, i as u8], 6778))
}

impl Net {
    pub fn new(delay: Duration) -> Net {
        Net {
            now: Instant::from_micros(1_000_000),
            delay,
            nodes: BTreeMap::new(),
            wire: BTreeMap::new(),
            seq: 0,
            events: Vec::new(),
            filter: None,
            delivered: 0,
            max_idle_turns: 10_000,
            most_idle_turns: 0,
        }
    }

    pub fn add(&mut self, at: SocketAddr, ep: Endpoint) {
        self.nodes.insert(at, ep);
    }

    pub fn node(&mut self, at: SocketAddr) -> &mut Endpoint {
        self.nodes.get_mut(&at).expect("node")
    }

    /// Inject a raw datagram.
    pub fn inject(&mut self, from: SocketAddr, to: SocketAddr, bytes: Vec<u8>) {
        self.seq += 1;
        self.wire
            .insert((self.now, self.seq), InFlight { from, to, bytes });
    }

    fn flush(&mut self) {
        let mut buf = vec![0u8; 65536];
        let addrs: Vec<SocketAddr> = self.nodes.keys().copied().collect();
        for a in addrs {
            let now = self.now;
            let ep = self.nodes.get_mut(&a).unwrap();
            while let Some(t) = ep.poll_transmit(now, &mut buf) {
                self.seq += 1;
                let f = InFlight {
                    from: a,
                    to: t.destination,
                    bytes: buf[..t.len].to_vec(),
                };
                self.wire.insert((now + self.delay, self.seq), f);
            }
            while let Some(e) = ep.poll_event() {
                self.events.push((a, e));
            }
        }
    }

    /// Runs until `until` (virtual), or until `done` says so.
    pub fn run_until(&mut self, until: Instant, mut done: impl FnMut(&Net) -> bool) {
        self.flush();
        let mut idle_turns = 0u32;
        loop {
            if done(self) {
                return;
            }
            let next_wire = self.wire.keys().next().map(|k| k.0);
            let next_timer = self
                .nodes
                .values()
                .filter_map(|e| e.poll_timeout(self.now))
                .min();
            let next = match (next_wire, next_timer) {
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => return,
            };
            if next > until {
                self.now = until;
                return;
            }
            // An endpoint that keeps asking to be woken now without doing
            // anything would spin forever: fail loudly instead.
            if next <= self.now && next_wire.is_none_or(|w| w > self.now) {
                idle_turns += 1;
                self.most_idle_turns = self.most_idle_turns.max(idle_turns);
                assert!(
                    idle_turns < self.max_idle_turns,
                    "livelock: timers due at {next:?} keep firing at {:?}",
                    self.now
                );
            } else {
                idle_turns = 0;
            }
            self.now = self.now.max(next);
            while let Some(entry) = self.wire.first_entry() {
                if entry.key().0 > self.now {
                    break;
                }
                let f = entry.remove();
                let keep = self.filter.as_mut().is_none_or(|keep| keep(&f));
                if keep {
                    if let Some(ep) = self.nodes.get_mut(&f.to) {
                        self.delivered += 1;
                        ep.handle_datagram(self.now, f.from, &f.bytes);
                    }
                }
            }
            let now = self.now;
            for ep in self.nodes.values_mut() {
                if ep.poll_timeout(now).is_some_and(|t| t <= now) {
                    ep.handle_timeout(now);
                }
            }
            self.flush();
        }
    }

    pub fn run_for(&mut self, d: Duration, done: impl FnMut(&Net) -> bool) {
        let until = self.now + d;
        self.run_until(until, done);
    }
}

/// A memory store the test can read back after the endpoint owns it.
#[derive(Clone, Debug)]
pub struct Shared(pub Arc<Mutex<MemoryStorage>>);

impl Storage for Shared {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().read_chunk(chunk, out)
    }
    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> std::io::Result<()> {
        self.0.lock().unwrap().write_chunk(chunk, data)
    }
    fn set_content_len(&mut self, len: u64) -> std::io::Result<()> {
        self.0.lock().unwrap().set_content_len(len)
    }
}

/// `len` bytes of test content (byte `i` is `i % modulus`, so that chunks
/// differ) and its SHA-1 tree in chunks of `cs`.
pub fn content(
    len: usize,
    modulus: usize,
    cs: ppspp_core::ChunkSize,
) -> (Vec<u8>, std::sync::Arc<ppspp_core::merkle::MerkleTree>) {
    let bytes: Vec<u8> = (0..len).map(|i| (i % modulus) as u8).collect();
    let tree =
        ppspp_core::merkle::MerkleTree::from_bytes(&bytes, cs, ppspp_core::HashFunction::Sha1)
            .expect("test content hashes");
    (bytes, std::sync::Arc::new(tree))
}

/// An endpoint seeding `bytes`, whose tree is `tree`, picking with `picker`.
pub fn seeder_endpoint(
    config: ppspp_core::proto::EndpointConfig,
    seed: u64,
    tree: &std::sync::Arc<ppspp_core::merkle::MerkleTree>,
    bytes: &[u8],
) -> Endpoint {
    let cs = tree.chunk_size();
    let mut ep = Endpoint::new(config, seed);
    ep.add_swarm(
        Instant::ZERO,
        ppspp_core::proto::SwarmSetup::seed(
            tree.clone(),
            Box::new(MemoryStorage::with_content(cs, bytes.to_vec())),
            ppspp_core::pick::by_name("sequential").unwrap(),
        ),
    );
    ep
}

/// An endpoint downloading the content of `tree` (known in advance, as the
/// lab's peers know it) into memory with `picker`; returns it and its swarm.
pub fn leecher_endpoint(
    config: ppspp_core::proto::EndpointConfig,
    seed: u64,
    tree: &std::sync::Arc<ppspp_core::merkle::MerkleTree>,
    picker: &str,
) -> (Endpoint, ppspp_core::proto::SwarmHandle) {
    let picker = ppspp_core::pick::by_name(picker).unwrap();
    leecher_with_picker(config, seed, tree, picker)
}

/// [`leecher_endpoint`] with a picker of the test's own.
pub fn leecher_with_picker(
    config: ppspp_core::proto::EndpointConfig,
    seed: u64,
    tree: &std::sync::Arc<ppspp_core::merkle::MerkleTree>,
    picker: Box<dyn ppspp_core::pick::Picker>,
) -> (Endpoint, ppspp_core::proto::SwarmHandle) {
    let mut ep = Endpoint::new(config, seed);
    let h = ep
        .add_swarm(
            Instant::ZERO,
            ppspp_core::proto::SwarmSetup::download_with_tree(
                tree.clone(),
                ppspp_core::Binmap::new(),
                Box::new(MemoryStorage::empty(tree.chunk_size())),
                picker,
            ),
        )
        .unwrap();
    (ep, h)
}

/// A datagram to `dst` carrying `msgs`, with the default parameters.
pub fn datagram(
    dst: ppspp_core::wire::ChannelId,
    msgs: &[ppspp_core::wire::Message<'_>],
) -> Vec<u8> {
    use ppspp_core::wire::{DatagramWriter, SwarmParams};
    let mut buf = vec![0u8; 1500];
    let mut w = DatagramWriter::new(&mut buf, dst, SwarmParams::default()).expect("room");
    for m in msgs {
        w.push(m).expect("room");
    }
    let n = w.finish();
    buf.truncate(n);
    buf
}

/// A datagram to channel 0 opening a channel from `source` in the swarm
/// whose id is `swarm_id`, with the fewest options we accept (version and
/// swarm id).
pub fn minimal_handshake(swarm_id: &[u8], source: u32) -> Vec<u8> {
    use ppspp_core::wire::{ChannelId, HandshakeOptions, Message};
    let options = HandshakeOptions {
        version: Some(1),
        swarm_id: Some(swarm_id),
        ..HandshakeOptions::default()
    };
    datagram(
        ChannelId::ZERO,
        &[Message::Handshake {
            source: ChannelId(source),
            options,
        }],
    )
}
