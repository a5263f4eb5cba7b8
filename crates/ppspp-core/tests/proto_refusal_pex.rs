//! A refusal for want of room names some of the full swarm's peers (PEX_RES
//! after the closing HANDSHAKE, `proto/endpoint/refusal.rs`): a newcomer
//! that knew only the seeder finds the swarm anyway (issue 26, E2: refused
//! leechers waited minutes for the tracker). Never more bytes than the
//! handshake, never to an initiator that does not list PEX_RES, never
//! for a swarm we do not serve.

mod common;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, content, leecher_endpoint, minimal_handshake, seeder_endpoint, Net};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::proto::{CloseReason, EndpointConfig, Event};
use ppspp_core::wire::{
    decode_datagram, ChannelId, DatagramWriter, HandshakeOptions, Message, MessageType,
    SupportedMessages, SwarmParams,
};
use ppspp_core::ChunkSize;

/// A seeder at `addr(1)` that keeps channels with at most `places` peers,
/// and `leechers` leechers at `addr(2)`… that connected to it.
fn full_swarm(places: usize, leechers: u16) -> (Net, Arc<MerkleTree>) {
    let seeder = EndpointConfig {
        max_peers_per_swarm: places,
        ..EndpointConfig::default()
    };
    swarm_of(seeder, EndpointConfig::default(), leechers)
}

/// A seeder at `addr(1)` configured by `seeder`, and `leechers` leechers
/// configured by `leecher` at `addr(2)`… that connected to it one by one
/// (fewer at once than the seeder's half-open budget).
fn swarm_of(
    seeder: EndpointConfig,
    leecher: EndpointConfig,
    leechers: u16,
) -> (Net, Arc<MerkleTree>) {
    let (bytes, tree) = content(200 * 1024, 251, ChunkSize::DEFAULT);
    let mut net = Net::new(Duration::from_millis(5));
    net.add(addr(1), seeder_endpoint(seeder, 1, &tree, &bytes));
    for i in 2..2 + leechers {
        let (ep, h) = leecher_endpoint(leecher.clone(), u64::from(i), &tree, "rarest-first");
        net.add(addr(i), ep);
        let now = net.now;
        net.node(addr(i)).connect(now, h, addr(1)).unwrap();
        net.run_for(Duration::from_millis(30), |_| false);
    }
    (net, tree)
}

/// An opening handshake for the swarm of `tree`, listing PEX_RES among its
/// supported messages if `reads_pex`, padded with a chunk size option
/// and HAVEs to at least `len` bytes.
fn opening(tree: &MerkleTree, reads_pex: bool, len: usize) -> Vec<u8> {
    let root = tree.root();
    let types = [MessageType::Handshake, MessageType::Data, MessageType::Have];
    let pex = [MessageType::PexResV4, MessageType::PexResV6];
    let listed = types.iter().chain(if reads_pex { &pex[..] } else { &[] });
    let options = HandshakeOptions {
        version: Some(1),
        min_version: Some(1),
        swarm_id: Some(root.as_bytes()),
        supported_messages: Some(SupportedMessages::from_types(listed.copied())),
        ..HandshakeOptions::default()
    };
    let mut buf = vec![0u8; 1500];
    let mut w = DatagramWriter::new(&mut buf, ChannelId::ZERO, SwarmParams::default()).unwrap();
    w.push(&Message::Handshake {
        source: ChannelId(0x5151),
        options,
    })
    .unwrap();
    let mut n = w.finish();
    buf.truncate(n);
    // Padded with CHOKE messages, one byte each: a refused handshake's
    // datagram is not read past the HANDSHAKE.
    while n < len {
        buf.push(MessageType::Choke.code());
        n += 1;
    }
    buf
}

/// Records every datagram the seeder sends to `to`.
fn record_to(net: &mut Net, to: SocketAddr) -> Arc<Mutex<Vec<Vec<u8>>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    net.filter = Some(Box::new(move |f| {
        if f.from == addr(1) && f.to == to {
            log.lock().unwrap().push(f.bytes.clone());
        }
        true
    }));
    seen
}

/// The refusal among `sent`: its length and the addresses it names.
fn refusal(sent: &[Vec<u8>]) -> (usize, Vec<SocketAddr>) {
    for d in sent {
        let (_, mut msgs) = decode_datagram(d, SwarmParams::default()).unwrap();
        let Some(Ok(Message::Handshake { source, .. })) = msgs.next() else {
            continue;
        };
        if source != ChannelId::ZERO {
            continue;
        }
        let named = msgs
            .map(|m| match m.unwrap() {
                Message::PexResV4(a) => SocketAddr::V4(a),
                other => panic!("a refusal carries only addresses, not {other:?}"),
            })
            .collect();
        return (d.len(), named);
    }
    panic!("no refusal among {} datagrams", sent.len());
}

#[test]
fn a_newcomer_refused_by_a_full_seeder_finds_the_swarm_through_the_refusal() {
    let (mut net, tree) = full_swarm(2, 2);
    assert_eq!(net.node(addr(1)).channel_count(), 2);
    let (ep, h) = leecher_endpoint(EndpointConfig::default(), 9, &tree, "rarest-first");
    net.add(addr(9), ep);
    let now = net.now;
    net.node(addr(9)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(30), |n| {
        n.events
            .iter()
            .any(|(at, e)| *at == addr(9) && matches!(e, Event::Complete { .. }))
    });
    let mine: Vec<&Event> = net
        .events
        .iter()
        .filter(|(at, _)| *at == addr(9))
        .map(|(_, e)| e)
        .collect();
    assert!(
        mine.iter().any(|e| matches!(
            e,
            Event::Closed {
                reason: CloseReason::Refused,
                ..
            }
        )),
        "the seeder refused it"
    );
    // What it learned before its first channel opened came with the
    // refusal (later, PEX answers name more).
    let mut learned: Vec<SocketAddr> = mine
        .iter()
        .take_while(|e| !matches!(e, Event::Connected { .. }))
        .filter_map(|e| match e {
            Event::PeerAddress { addr, .. } => Some(*addr),
            _ => None,
        })
        .collect();
    learned.sort();
    assert_eq!(learned, [addr(2), addr(3)], "the refusal named both peers");
    assert!(
        mine.iter().any(|e| matches!(e, Event::Complete { .. })),
        "it downloaded from the peers it was told of"
    );
    // Told of the seeder again by its new peers, it may try once more, and
    // hear the same two names.
    let stats = net.node(addr(1)).stats();
    assert!(stats.dropped.refused >= 1);
    assert_eq!(stats.refusal_addresses, 2 * stats.dropped.refused);
}

#[test]
fn the_refusal_is_never_longer_than_the_handshake() {
    let (mut net, tree) = full_swarm(10, 10);
    let me: SocketAddr = addr(40);
    let seen = record_to(&mut net, me);
    for (i, len) in [50usize, 60, 200].into_iter().enumerate() {
        seen.lock().unwrap().clear();
        let mut hs = opening(&tree, true, len);
        hs[5..9].copy_from_slice(&(0x100 + i as u32).to_be_bytes());
        let sent = hs.len();
        net.inject(me, addr(1), hs);
        net.run_for(Duration::from_millis(20), |_| false);
        let (got, named) = refusal(&seen.lock().unwrap());
        assert!(got <= sent, "{got} bytes answer {sent}");
        // 12 bytes of refusal, then 7 per IPv4 address, up to the ten peers.
        assert_eq!(
            named.len(),
            ((sent - 12) / 7).min(10),
            "handshake of {sent}"
        );
        let peers: Vec<SocketAddr> = (2..12).map(addr).collect();
        assert!(named.iter().all(|a| peers.contains(a)), "{named:?}");
        let mut unique = named.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), named.len(), "each named once");
    }
}

#[test]
fn refusals_spread_newcomers_over_the_peers() {
    let (mut net, tree) = full_swarm(10, 10);
    let mut times_named = std::collections::BTreeMap::new();
    for k in 0..20u16 {
        let me = addr(100 + k);
        let seen = record_to(&mut net, me);
        let mut hs = opening(&tree, true, 47);
        hs[5..9].copy_from_slice(&(0x200 + u32::from(k)).to_be_bytes());
        net.inject(me, addr(1), hs);
        net.run_for(Duration::from_millis(20), |_| false);
        let (_, named) = refusal(&seen.lock().unwrap());
        assert_eq!(named.len(), 5);
        for a in named {
            *times_named.entry(a).or_insert(0) += 1;
        }
    }
    // 100 namings over 10 peers: every peer is named, none nearly always.
    assert_eq!(times_named.len(), 10, "{times_named:?}");
    assert!(times_named.values().all(|&n| n < 20), "{times_named:?}");
}

#[test]
fn no_addresses_to_whoever_does_not_list_pex_or_asks_for_another_swarm() {
    let (mut net, tree) = full_swarm(2, 2);
    let me: SocketAddr = addr(50);
    let seen = record_to(&mut net, me);
    // A libswift-style handshake lists no supported messages.
    net.inject(me, addr(1), minimal_handshake(tree.root().as_bytes(), 0x77));
    net.run_for(Duration::from_millis(20), |_| false);
    assert_eq!(refusal(&seen.lock().unwrap()), (12, vec![]));
    // One that lists the others but not PEX_RES.
    seen.lock().unwrap().clear();
    net.inject(me, addr(1), opening(&tree, false, 120));
    net.run_for(Duration::from_millis(20), |_| false);
    assert_eq!(refusal(&seen.lock().unwrap()), (12, vec![]));
    // A swarm we do not serve: refused bare, whatever it lists.
    seen.lock().unwrap().clear();
    let (_, other) = content(10 * 1024, 13, ChunkSize::DEFAULT);
    let mut hs = opening(&other, true, 120);
    hs[5..9].copy_from_slice(&0x99u32.to_be_bytes());
    net.inject(me, addr(1), hs);
    net.run_for(Duration::from_millis(20), |_| false);
    assert_eq!(refusal(&seen.lock().unwrap()), (12, vec![]));
    assert_eq!(net.node(addr(1)).stats().refusal_addresses, 0);
}

#[test]
fn pex_answers_name_peers_that_joined_late_too() {
    // 40 peers; a PEX answer holds at most 32 (`pex_max_addresses`).
    // Answers drawn in address order named the same first 32 to everyone
    // and never the last to join (issue 26, E2 in steady state).
    let quiet = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let (mut net, tree) = swarm_of(EndpointConfig::default(), quiet, 40);
    assert_eq!(net.node(addr(1)).channel_count(), 40);
    let mut named = std::collections::BTreeSet::new();
    for i in 100..106u16 {
        let (ep, h) = leecher_endpoint(
            EndpointConfig::default(),
            u64::from(i),
            &tree,
            "rarest-first",
        );
        net.add(addr(i), ep);
        let now = net.now;
        net.node(addr(i)).connect(now, h, addr(1)).unwrap();
        net.run_for(Duration::from_millis(50), |_| false);
        let told: Vec<SocketAddr> = net
            .events
            .iter()
            .filter(|(at, _)| *at == addr(i))
            .filter_map(|(_, e)| match e {
                Event::PeerAddress { addr, .. } => Some(*addr),
                _ => None,
            })
            .collect();
        assert!(!told.is_empty(), "newcomer {i} was told of no one");
        named.extend(
            told.into_iter()
                .filter(|a| (2..42).map(addr).any(|p| p == *a)),
        );
    }
    // Six answers of 32 out of 40 name every one of the 40 with
    // probability above 0.99; in address order they named only 32.
    assert!(named.len() > 32, "{} of 40 named", named.len());
    assert!(
        named.contains(&addr(41)),
        "the last to join was never named"
    );
}
