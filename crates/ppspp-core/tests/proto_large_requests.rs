//! Requests as libswift makes them (wire notes, interop profile): tens of
//! thousands of chunks in one REQUEST, the same REQUEST twice, and never a
//! second try on the channel. A seeder serves all of it; a request it
//! cannot queue voids the peer's requests with CHOKE and UNCHOKE (RFC 7574
//! §3.9) instead of vanishing in part; and DATA timestamps are wall-clock
//! µs since the Unix epoch.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::{addr, content, seeder_endpoint};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::proto::{Endpoint, EndpointConfig};
use ppspp_core::time::Instant;
use ppspp_core::wire::{
    decode_datagram, ChannelId, DatagramWriter, DelaySample, HandshakeOptions, Message, SwarmParams,
};
use ppspp_core::{ChunkRange, ChunkSize};

const CLIENT: u32 = 0x5157_1f7e;

/// A scripted peer speaking to one seeder endpoint over a 1 ms path: it
/// handshakes, sends what the test tells it, and ACKs every DATA at once
/// the way libswift does (delay = its clock − the DATA's timestamp).
struct RawPeer {
    seeder: Endpoint,
    params: SwarmParams,
    now: Instant,
    remote: ChannelId,
    /// Times each chunk arrived.
    got: BTreeMap<u64, u32>,
    /// Every DATA timestamp seen, with the instant it was sent.
    stamps: Vec<(Instant, u64)>,
    /// CHOKE and UNCHOKE messages seen, in order (true: CHOKE).
    chokes: Vec<bool>,
    inbox: Vec<Vec<u8>>,
}

impl RawPeer {
    fn connect(config: EndpointConfig, tree: &Arc<MerkleTree>, bytes: &[u8]) -> RawPeer {
        let seeder = seeder_endpoint(config, 5, tree, bytes);
        let params = SwarmParams {
            chunk_size: Some(tree.chunk_size().bytes()),
            ..SwarmParams::default()
        };
        let mut peer = RawPeer {
            seeder,
            params,
            now: Instant::from_micros(1_000_000),
            remote: ChannelId::ZERO,
            got: BTreeMap::new(),
            stamps: Vec::new(),
            chokes: Vec::new(),
            inbox: Vec::new(),
        };
        let root = tree.root();
        let options = HandshakeOptions {
            version: Some(1),
            min_version: Some(1),
            swarm_id: Some(root.as_bytes()),
            ..HandshakeOptions::default()
        };
        peer.send(
            ChannelId::ZERO,
            &[Message::Handshake {
                source: ChannelId(CLIENT),
                options,
            }],
        );
        peer.run(Duration::from_millis(5));
        assert_ne!(peer.remote, ChannelId::ZERO, "the seeder answered");
        peer
    }

    fn send(&mut self, dst: ChannelId, msgs: &[Message<'_>]) {
        let mut buf = vec![0u8; 1500];
        let mut w = DatagramWriter::new(&mut buf, dst, self.params).unwrap();
        for m in msgs {
            w.push(m).unwrap();
        }
        let n = w.finish();
        self.seeder.handle_datagram(self.now, addr(9), &buf[..n]);
    }

    fn request(&mut self, ranges: &[(u64, u64)]) {
        let msgs: Vec<Message<'_>> = ranges
            .iter()
            .map(|&(a, b)| Message::Request(ChunkRange::new(a, b).unwrap().into()))
            .collect();
        self.send(self.remote, &msgs);
    }

    /// Runs the exchange in 1 ms steps for `d` of virtual time.
    fn run(&mut self, d: Duration) {
        let end = self.now + d;
        let mut buf = vec![0u8; 65536];
        while self.now < end {
            if self.seeder.poll_timeout().is_some_and(|t| t <= self.now) {
                self.seeder.handle_timeout(self.now);
            }
            while let Some(t) = self.seeder.poll_transmit(self.now, &mut buf) {
                assert_eq!(t.destination, addr(9));
                self.inbox.push(buf[..t.len].to_vec());
            }
            self.now += Duration::from_millis(1);
            for d in std::mem::take(&mut self.inbox) {
                self.receive(&d);
            }
        }
    }

    fn receive(&mut self, datagram: &[u8]) {
        let (_, msgs) = decode_datagram(datagram, self.params).unwrap();
        let mut acks = Vec::new();
        for m in msgs {
            match m.unwrap() {
                Message::Handshake { source, .. } => self.remote = source,
                Message::Data {
                    spec, timestamp, ..
                } => {
                    let range = spec.to_chunks(ChunkSize::DEFAULT).unwrap();
                    *self.got.entry(range.first().0).or_default() += 1;
                    let sent_at = Instant::from_micros(self.now.as_micros() - 1000);
                    self.stamps.push((sent_at, timestamp.0));
                    acks.push(Message::Ack {
                        spec,
                        delay: DelaySample(1000),
                    });
                }
                Message::Choke => self.chokes.push(true),
                Message::Unchoke => self.chokes.push(false),
                _ => {}
            }
        }
        if !acks.is_empty() {
            self.send(self.remote, &acks);
        }
    }
}

#[test]
fn one_request_for_every_chunk_is_served_whole() {
    // More chunks than the old per-peer queue bound (8192) let through.
    let n = 10_000u64;
    let (bytes, tree) = content(n as usize * 1024, 251, ChunkSize::DEFAULT);
    let mut peer = RawPeer::connect(EndpointConfig::default(), &tree, &bytes);
    peer.request(&[(0, n - 1)]);
    peer.run(Duration::from_secs(30));
    assert_eq!(peer.got.len() as u64, n, "every chunk came, asked once");
    assert!(peer.got.values().all(|&c| c == 1), "no chunk came twice");
    assert!(peer.chokes.is_empty());
}

#[test]
fn a_request_made_twice_is_served_once() {
    let (bytes, tree) = content(300 * 1024, 251, ChunkSize::DEFAULT);
    let mut peer = RawPeer::connect(EndpointConfig::default(), &tree, &bytes);
    // libswift may repeat a REQUEST while the first is still queued.
    peer.request(&[(0, 299), (0, 299), (100, 199)]);
    peer.run(Duration::from_secs(5));
    assert_eq!(peer.got.len(), 300);
    assert!(peer.got.values().all(|&c| c == 1), "{:?}", peer.got);
}

#[test]
fn requests_beyond_the_queue_are_voided_then_asked_again() {
    let (bytes, tree) = content(64 * 1024, 251, ChunkSize::DEFAULT);
    let config = EndpointConfig {
        max_upload_queue_ranges: 4,
        ..EndpointConfig::default()
    };
    let mut peer = RawPeer::connect(config, &tree, &bytes);
    // Six separate ranges where four fit: the request is not cut silently.
    peer.request(&[(0, 0), (2, 2), (4, 4), (6, 6), (8, 8), (10, 10)]);
    peer.run(Duration::from_millis(500));
    assert_eq!(peer.chokes, [true, false], "CHOKE then UNCHOKE");
    // Whatever came before the CHOKE was queued; nothing after it.
    assert!(peer.got.keys().all(|&c| c <= 6), "{:?}", peer.got);
    // Asked again, as RFC 7574 §3.9 says a peer does after UNCHOKE, in a
    // form that fits, all of it comes.
    peer.request(&[(0, 63)]);
    peer.run(Duration::from_secs(2));
    assert_eq!(peer.got.len(), 64);
}

#[test]
fn data_timestamps_are_wall_clock_micros_since_the_unix_epoch() {
    let (bytes, tree) = content(20 * 1024, 251, ChunkSize::DEFAULT);
    // 2026-11-25T00:00:00Z in µs: the driver's epoch on the wall clock.
    let offset = 1_795_564_800_000_000u64;
    let config = EndpointConfig {
        wall_clock_offset: offset,
        ..EndpointConfig::default()
    };
    let mut peer = RawPeer::connect(config, &tree, &bytes);
    peer.request(&[(0, 19)]);
    peer.run(Duration::from_secs(1));
    assert_eq!(peer.got.len(), 20);
    for &(sent_at, stamp) in &peer.stamps {
        assert_eq!(stamp, sent_at.as_micros() + offset);
    }
}
