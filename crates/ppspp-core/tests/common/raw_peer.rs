//! A scripted peer speaking to one seeder endpoint over a 1 ms path, the
//! way libswift does: it handshakes, sends what the test tells it, and ACKs
//! every DATA at once (or, for a chunk it has, answers with a HAVE).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use ppspp_core::merkle::MerkleTree;
use ppspp_core::proto::{Endpoint, EndpointConfig};
use ppspp_core::time::Instant;
use ppspp_core::wire::{
    decode_datagram, ChannelId, DatagramWriter, DelaySample, HandshakeOptions, Message, SwarmParams,
};
use ppspp_core::{ChunkRange, ChunkSize};

use super::{addr, seeder_endpoint};

const CLIENT: u32 = 0x5157_1f7e;

/// A scripted peer speaking to one seeder endpoint over a 1 ms path: it
/// handshakes, sends what the test tells it, and ACKs every DATA at once
/// the way libswift does (delay = its clock − the DATA's timestamp).
pub struct RawPeer {
    pub seeder: Endpoint,
    params: SwarmParams,
    pub now: Instant,
    remote: ChannelId,
    /// Times each chunk arrived.
    pub got: BTreeMap<u64, u32>,
    /// Every DATA timestamp seen, with the instant it was sent.
    pub stamps: Vec<(Instant, u64)>,
    /// CHOKE and UNCHOKE messages seen, in order (true: CHOKE).
    pub chokes: Vec<bool>,
    inbox: Vec<Vec<u8>>,
    /// When each DATA arrived (ACKed or not).
    pub arrivals: Vec<Instant>,
    /// DATA arriving before this instant is lost: no ACK, not counted.
    pub lose_until: Instant,
    /// Answer DATA for a chunk already had with a HAVE, not an ACK, as
    /// libswift does.
    pub have_for_duplicates: bool,
}

impl RawPeer {
    pub fn connect(config: EndpointConfig, tree: &Arc<MerkleTree>, bytes: &[u8]) -> RawPeer {
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
            arrivals: Vec::new(),
            lose_until: Instant::ZERO,
            have_for_duplicates: false,
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

    /// Sends `msgs` in one datagram on the open channel.
    pub fn say(&mut self, msgs: &[Message<'_>]) {
        self.send(self.remote, msgs);
    }

    pub fn request(&mut self, ranges: &[(u64, u64)]) {
        let msgs: Vec<Message<'_>> = ranges
            .iter()
            .map(|&(a, b)| Message::Request(ChunkRange::new(a, b).unwrap().into()))
            .collect();
        self.send(self.remote, &msgs);
    }

    /// Runs the exchange in 1 ms steps for `d` of virtual time.
    pub fn run(&mut self, d: Duration) {
        let end = self.now + d;
        let mut buf = vec![0u8; 65536];
        while self.now < end {
            if self
                .seeder
                .poll_timeout(self.now)
                .is_some_and(|t| t <= self.now)
            {
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
                    if self.now <= self.lose_until {
                        continue;
                    }
                    self.arrivals.push(self.now);
                    let range = spec.to_chunks(ChunkSize::DEFAULT).unwrap();
                    let copies = self.got.entry(range.first().0).or_default();
                    *copies += 1;
                    if *copies > 1 && self.have_for_duplicates {
                        acks.push(Message::Have(spec));
                        continue;
                    }
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
