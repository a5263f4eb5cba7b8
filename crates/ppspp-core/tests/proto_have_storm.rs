//! A storm of HAVEs for scattered chunks cannot grow a downloader's memory
//! without bound (issue 21, item 9: 4.4 M random HAVEs took a bare-id
//! downloader to 110 MB). Before the size is known a peer's announcements
//! have a fixed allowance; after, they are cut to the content; HAVEs past
//! either are counted, and a peer that keeps sending them is closed.

mod common;

use std::time::Duration;

use common::{addr, content, Net};
use ppspp_core::hash::Hash;
use ppspp_core::proto::{
    CloseReason, Endpoint, EndpointConfig, Event, ProtocolViolation, SwarmHandle, SwarmSetup,
};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::wire::{ChannelId, DatagramWriter, HandshakeOptions, Message, SwarmParams};
use ppspp_core::{ChunkRange, ChunkSize, HashFunction};

const HOSTILE: u32 = 0x0bad_0bad;

fn params() -> SwarmParams {
    SwarmParams {
        chunk_size: Some(1024),
        ..SwarmParams::default()
    }
}

/// A downloader of the swarm `root`, with or without the content length.
fn downloader(root: Hash, chunk_count: Option<u64>) -> (Endpoint, SwarmHandle) {
    let mut ep = Endpoint::new(EndpointConfig::default(), 7);
    let setup = SwarmSetup::download(
        root,
        HashFunction::Sha1,
        ChunkSize::DEFAULT,
        chunk_count,
        Box::new(MemoryStorage::empty(ChunkSize::DEFAULT)),
        ppspp_core::pick::by_name("sequential").unwrap(),
    )
    .unwrap();
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    (ep, h)
}

/// One datagram to our channel `to` of the given messages.
fn datagram(to: ChannelId, msgs: &[Message<'_>]) -> Vec<u8> {
    let mut buf = vec![0u8; 1500];
    let mut w = DatagramWriter::new(&mut buf, to, params()).unwrap();
    for m in msgs {
        w.push(m).unwrap();
    }
    let n = w.finish();
    buf.truncate(n);
    buf
}

/// Connects the downloader at addr(2) to a hostile peer at addr(9) that
/// answers the handshake and nothing else (the test speaks for it).
fn connect_to_hostile(root: Hash, chunk_count: Option<u64>) -> (Net, ChannelId, SwarmHandle) {
    let (ep, h) = downloader(root, chunk_count);
    let mut net = Net::new(Duration::from_millis(1));
    net.add(addr(2), ep);
    let now = net.now;
    let ours = net.node(addr(2)).connect(now, h, addr(9)).unwrap();
    let answer = HandshakeOptions {
        version: Some(1),
        min_version: Some(1),
        ..HandshakeOptions::default()
    };
    let hs = datagram(
        ours,
        &[Message::Handshake {
            source: ChannelId(HOSTILE),
            options: answer,
        }],
    );
    net.inject(addr(9), addr(2), hs);
    net.run_for(Duration::from_millis(5), |_| false);
    assert!(net
        .events
        .iter()
        .any(|(_, e)| matches!(e, Event::Connected { .. })));
    (net, ours, h)
}

/// Sends `count` HAVEs of single chunks drawn from `0..span`, in full
/// datagrams, until the channel closes; returns how many went out.
fn storm(net: &mut Net, ours: ChannelId, span: u64, count: u64) -> u64 {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut sent = 0;
    while sent < count {
        let mut msgs = Vec::new();
        for _ in 0..150 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let c = x % span;
            msgs.push(Message::Have(ChunkRange::new(c, c).unwrap().into()));
        }
        sent += msgs.len() as u64;
        net.inject(addr(9), addr(2), datagram(ours, &msgs));
        net.run_for(Duration::from_micros(100), |_| false);
        if closed(net).is_some() {
            break;
        }
    }
    sent
}

fn closed(net: &Net) -> Option<CloseReason> {
    net.events.iter().find_map(|(_, e)| match e {
        Event::Closed { reason, .. } => Some(reason.clone()),
        _ => None,
    })
}

fn refused(net: &mut Net, h: SwarmHandle) -> u64 {
    net.node(addr(2)).swarm_stats(h).unwrap().haves_refused
}

#[test]
fn before_the_size_is_known_announcements_have_an_allowance() {
    let (_, tree) = content(64 * 1024, 251, ChunkSize::DEFAULT);
    let (mut net, ours, h) = connect_to_hostile(tree.root(), None);
    let mut peak = 0;
    let mut sent = 0;
    while closed(&net).is_none() && sent < 2_000_000 {
        sent += storm(&mut net, ours, 1 << 28, 30_000);
        peak = peak.max(net.node(addr(2)).announced_bytes());
    }
    // The allowance (1 MiB) plus one step of the arena's growth.
    assert!(peak <= 2 << 20, "peer state grew to {peak} bytes");
    assert_eq!(
        closed(&net),
        Some(CloseReason::Protocol(ProtocolViolation::ImpossibleChunks)),
        "the peer is closed once it has sent too many (sent {sent})"
    );
    assert!(refused(&mut net, h) >= 4096);
}

#[test]
fn once_the_size_is_known_announcements_are_cut_to_the_content() {
    let (_, tree) = content(64 * 1024, 251, ChunkSize::DEFAULT);
    let (mut net, ours, h) = connect_to_hostile(tree.root(), Some(64));
    // Inside the content: recorded, bounded by the 64 chunks.
    storm(&mut net, ours, 64, 3_000);
    assert_eq!(closed(&net), None);
    assert_eq!(refused(&mut net, h), 0);
    assert!(net.node(addr(2)).announced_bytes() <= 4096);
    // Past the end: chunks that cannot exist, counted, then closed.
    let beyond = ChunkRange::new(1000u64, 1000u64).unwrap();
    let msgs: Vec<Message<'_>> = (0..100).map(|_| Message::Have(beyond.into())).collect();
    net.inject(addr(9), addr(2), datagram(ours, &msgs));
    net.run_for(Duration::from_millis(1), |_| false);
    assert_eq!(refused(&mut net, h), 100);
    storm(&mut net, ours, 1 << 20, 1_000_000);
    assert!(matches!(closed(&net), Some(CloseReason::Protocol(_))));
}
