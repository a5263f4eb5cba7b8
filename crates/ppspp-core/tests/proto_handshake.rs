//! The handshake and channel lifecycle (RFC 7574 §3.1, §8.4, §8.15, §13.2.1).

mod common;

use std::time::Duration;

use common::{addr, Net};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{CloseReason, Endpoint, EndpointConfig, Event, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::wire::{
    decode_datagram, ChannelId, ChunkSizeOption, DatagramWriter, HandshakeOptions, Message,
    SwarmParams,
};
use ppspp_core::{ChunkRange, ChunkSize, HashFunction};
use std::sync::Arc;

fn seeder_endpoint(config: EndpointConfig) -> (Endpoint, Arc<MerkleTree>) {
    let data: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
    let cs = ChunkSize::DEFAULT;
    let tree = Arc::new(MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap());
    let mut ep = Endpoint::new(config, 11);
    let store = MemoryStorage::with_content(cs, data);
    ep.add_swarm(
        Instant::ZERO,
        SwarmSetup::seed(
            tree.clone(),
            Box::new(store),
            pick::by_name("sequential").unwrap(),
        ),
    )
    .unwrap();
    (ep, tree)
}

fn handshake_datagram(root: &[u8], source: u32, extra: &[Message<'_>]) -> Vec<u8> {
    let options = HandshakeOptions {
        version: Some(1),
        min_version: Some(1),
        swarm_id: Some(root),
        ..HandshakeOptions::default()
    };
    let mut buf = vec![0u8; 1500];
    let mut w = DatagramWriter::new(&mut buf, ChannelId::ZERO, SwarmParams::default()).unwrap();
    w.push(&Message::Handshake {
        source: ChannelId(source),
        options,
    })
    .unwrap();
    for m in extra {
        w.push(m).unwrap();
    }
    let n = w.finish();
    buf.truncate(n);
    buf
}

/// Everything the endpoint sends right now.
fn drain(ep: &mut Endpoint, now: Instant) -> Vec<(std::net::SocketAddr, Vec<u8>)> {
    let mut buf = vec![0u8; 65536];
    let mut out = Vec::new();
    while let Some(t) = ep.poll_transmit(now, &mut buf) {
        out.push((t.destination, buf[..t.len].to_vec()));
    }
    out
}

#[test]
fn no_amplification_before_the_initiator_proves_its_address() {
    let (mut ep, tree) = seeder_endpoint(EndpointConfig::default());
    let spoofed = addr(66);
    let now = Instant::from_micros(1_000_000);
    // A handshake that also asks for data, from an address that never answers.
    let req = Message::Request(ChunkRange::new(0u64, 40u64).unwrap().into());
    let first = handshake_datagram(tree.root().as_bytes(), 7, &[req]);
    ep.handle_datagram(now, spoofed, &first);
    let mut sent = 0usize;
    for t in 0..50u64 {
        let at = now + Duration::from_millis(100 * t);
        ep.handle_timeout(at);
        for (to, d) in drain(&mut ep, at) {
            assert_eq!(to, spoofed);
            // No DATA before the third datagram.
            let (_, msgs) = decode_datagram(&d, SwarmParams::default()).unwrap();
            assert!(msgs.flatten().all(|m| !matches!(m, Message::Data { .. })));
            sent += d.len();
        }
    }
    assert!(sent > 0, "the handshake was answered");
    assert!(
        sent <= first.len(),
        "sent {sent} bytes for {} received",
        first.len()
    );
}

#[test]
fn unknown_swarms_and_versions_are_refused() {
    let (mut ep, tree) = seeder_endpoint(EndpointConfig::default());
    let now = Instant::from_micros(1_000_000);
    ep.handle_datagram(now, addr(5), &handshake_datagram(&[9u8; 20], 42, &[]));
    let out = drain(&mut ep, now);
    assert_eq!(out.len(), 1);
    let (dst, mut msgs) = decode_datagram(&out[0].1, SwarmParams::default()).unwrap();
    assert_eq!(dst, ChannelId(42));
    assert!(matches!(
        msgs.next(),
        Some(Ok(Message::Handshake {
            source: ChannelId::ZERO,
            ..
        }))
    ));
    // A peer speaking only version 2 and up.
    let root = tree.root();
    let options = HandshakeOptions {
        version: Some(3),
        min_version: Some(2),
        swarm_id: Some(root.as_bytes()),
        ..HandshakeOptions::default()
    };
    let mut buf = vec![0u8; 200];
    let mut w = DatagramWriter::new(&mut buf, ChannelId::ZERO, SwarmParams::default()).unwrap();
    w.push(&Message::Handshake {
        source: ChannelId(43),
        options,
    })
    .unwrap();
    let n = w.finish();
    ep.handle_datagram(now, addr(6), &buf[..n]);
    let out = drain(&mut ep, now);
    let (dst, mut msgs) = decode_datagram(&out[0].1, SwarmParams::default()).unwrap();
    assert_eq!(dst, ChannelId(43));
    assert!(matches!(
        msgs.next(),
        Some(Ok(Message::Handshake {
            source: ChannelId::ZERO,
            ..
        }))
    ));
    assert_eq!(ep.channel_count(), 0);
}

#[test]
fn unanswered_handshakes_drop_options_8_and_9_then_give_up() {
    let (_, tree) = seeder_endpoint(EndpointConfig::default());
    let mut ep = Endpoint::new(EndpointConfig::default(), 3);
    let store = MemoryStorage::empty(ChunkSize::DEFAULT);
    let setup = SwarmSetup::download(
        tree.root(),
        HashFunction::Sha1,
        ChunkSize::DEFAULT,
        None,
        Box::new(store),
        pick::by_name("sequential").unwrap(),
    )
    .unwrap();
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    let mut now = Instant::from_micros(1_000_000);
    ep.connect(now, h, addr(1)).unwrap();
    let mut extended = Vec::new();
    for _ in 0..200 {
        for (_, d) in drain(&mut ep, now) {
            let (_, mut msgs) = decode_datagram(&d, SwarmParams::default()).unwrap();
            if let Some(Ok(Message::Handshake { options, .. })) = msgs.next() {
                extended.push(options.chunk_size.is_some() && options.supported_messages.is_some());
                if let Some(ChunkSizeOption::Fixed(n)) = options.chunk_size {
                    assert_eq!(n, 1024);
                }
            }
        }
        now += Duration::from_millis(250);
        ep.handle_timeout(now);
    }
    // Two tries with the full RFC option set, then libswift's subset.
    assert_eq!(extended, [true, true, false, false, false]);
    let closed: Vec<Event> = std::iter::from_fn(|| ep.poll_event()).collect();
    assert!(
        closed.iter().any(|e| matches!(
            e,
            Event::Closed {
                reason: CloseReason::HandshakeTimeout,
                ..
            }
        )),
        "{closed:?}"
    );
    assert_eq!(ep.channel_count(), 0);
}

#[test]
fn dead_peers_are_detected_and_idle_channels_kept_alive() {
    let config = EndpointConfig {
        keepalive_interval: Duration::from_secs(20),
        ..EndpointConfig::default()
    };
    let (seed_ep, tree) = seeder_endpoint(config.clone());
    let mut leech = Endpoint::new(config, 4);
    let store = MemoryStorage::empty(ChunkSize::DEFAULT);
    let setup = SwarmSetup::download(
        tree.root(),
        HashFunction::Sha1,
        ChunkSize::DEFAULT,
        None,
        Box::new(store),
        pick::by_name("sequential").unwrap(),
    )
    .unwrap();
    let h = leech.add_swarm(Instant::ZERO, setup).unwrap();
    let mut net = Net::new(Duration::from_millis(5));
    net.add(addr(1), seed_ep);
    net.add(addr(2), leech);
    let now = net.now;
    net.node(addr(2)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(5), |n| n.nodes[&addr(2)].is_complete(h));
    assert!(net.nodes[&addr(2)].is_complete(h));
    // Idle for two minutes: keep-alives flow, nobody is declared dead.
    let before = net.delivered;
    net.run_for(Duration::from_secs(120), |_| false);
    assert!(net.delivered > before, "no keep-alives");
    assert!(
        !net.events
            .iter()
            .any(|(_, e)| matches!(e, Event::Closed { .. })),
        "{:?}",
        net.events
    );
    // Now the seeder goes silent: the leecher declares it dead after 3 min.
    net.filter = Some(Box::new(|f| f.from != addr(1)));
    net.run_for(Duration::from_secs(300), |n| {
        n.events.iter().any(|(a, e)| {
            *a == addr(2)
                && matches!(
                    e,
                    Event::Closed {
                        reason: CloseReason::Dead,
                        ..
                    }
                )
        })
    });
    let dead = net.events.iter().any(|(a, e)| {
        *a == addr(2)
            && matches!(
                e,
                Event::Closed {
                    reason: CloseReason::Dead,
                    ..
                }
            )
    });
    assert!(dead, "{:?}", net.events);
}

#[test]
fn closing_a_swarm_tells_the_peers() {
    let (seed_ep, tree) = seeder_endpoint(EndpointConfig::default());
    let mut leech = Endpoint::new(EndpointConfig::default(), 4);
    let store = MemoryStorage::empty(ChunkSize::DEFAULT);
    let setup = SwarmSetup::download(
        tree.root(),
        HashFunction::Sha1,
        ChunkSize::DEFAULT,
        None,
        Box::new(store),
        pick::by_name("sequential").unwrap(),
    )
    .unwrap();
    let h = leech.add_swarm(Instant::ZERO, setup).unwrap();
    let mut net = Net::new(Duration::from_millis(5));
    net.add(addr(1), seed_ep);
    net.add(addr(2), leech);
    let now = net.now;
    net.node(addr(2)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(5), |n| n.nodes[&addr(2)].is_complete(h));
    net.node(addr(2)).close_swarm(h);
    net.run_for(Duration::from_secs(1), |_| false);
    let seeder_saw = net.events.iter().any(|(a, e)| {
        *a == addr(1)
            && matches!(
                e,
                Event::Closed {
                    reason: CloseReason::ClosedByPeer,
                    ..
                }
            )
    });
    assert!(seeder_saw, "{:?}", net.events);
    assert_eq!(net.nodes[&addr(1)].channel_count(), 0);
}
