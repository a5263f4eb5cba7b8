//! A live stream flows from the injector to a receiver (RFC 7574 §6.1.2):
//! chunks pushed at the source are announced once their munro is signed,
//! requested, sent after the munro's hash, signature and uncles, verified
//! against the munro and stored; a relay serves what it verified to the
//! next peer with the same proofs.

mod common;

use std::time::Duration;

use std::sync::{Arc, Mutex};

use common::{addr, Net, Shared};
use ppspp_core::live::{LiveInjector, LiveKeyPair, LiveParams, LiveShape};
use ppspp_core::pick;
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmHandle, SwarmSetup};
use ppspp_core::storage::{LiveRing, MemoryStorage, Storage};
use ppspp_core::time::Instant;
use ppspp_core::wire::{DiscardWindow, LiveSignatureAlgorithm};
use ppspp_core::{ChunkIndex, ChunkSize};

const WINDOW: u64 = 1024;

fn shape() -> LiveShape {
    LiveShape {
        params: LiveParams::default(),
        algorithm: LiveSignatureAlgorithm::ECDSAP256SHA256,
        window: DiscardWindow::Window(WINDOW),
        chunk_size: None,
    }
}

fn chunk(i: u64) -> Vec<u8> {
    (0..1024u64).map(|b| (b * 31 + i * 7) as u8).collect()
}

fn source() -> (Endpoint, SwarmHandle, Vec<u8>) {
    let key = LiveKeyPair::from_secret(LiveSignatureAlgorithm::ECDSAP256SHA256, &[1; 32]).unwrap();
    let cs = ChunkSize::DEFAULT;
    let injector = LiveInjector::new(key, LiveParams::default(), Some(WINDOW));
    let id = injector.swarm_id();
    let mut ep = Endpoint::new(EndpointConfig::default(), 1);
    let setup = SwarmSetup::live_source(
        injector,
        shape(),
        cs,
        Box::new(LiveRing::new(cs, WINDOW)),
        pick::by_name("sequential").unwrap(),
    );
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    (ep, h, id)
}

fn receiver(id: &[u8], seed: u64, upstream: u16) -> Endpoint {
    receiver_with(
        id,
        seed,
        upstream,
        Box::new(LiveRing::new(ChunkSize::DEFAULT, WINDOW)),
    )
}

fn receiver_with(id: &[u8], seed: u64, upstream: u16, store: Box<dyn Storage>) -> Endpoint {
    let cs = ChunkSize::DEFAULT;
    let mut ep = Endpoint::new(EndpointConfig::default(), seed);
    let setup = SwarmSetup::live_receiver(
        id,
        shape(),
        false,
        cs,
        store,
        pick::by_name("sequential").unwrap(),
    )
    .unwrap()
    // These tests follow the whole window from its start.
    .hook_in_behind(u64::MAX);
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    ep.connect(Instant::from_micros(1_000_000), h, addr(upstream))
        .unwrap();
    ep
}

fn has_all(net: &mut Net, at: u16, chunks: u64) -> bool {
    let ep = net.node(addr(at));
    let h = ep.swarm_handle(0).unwrap();
    (0..chunks).all(|c| ep.has_chunk(h, ChunkIndex(c)))
}

#[test]
fn signed_chunks_reach_a_receiver_and_a_relay_verified() {
    let (mut src, h, id) = source();
    // 70 chunks: two full munros (64 chunks) are signed; 6 wait.
    for i in 0..70 {
        let at = src
            .push_live_chunk(Instant::ZERO, h, &chunk(i), 1_000 + i)
            .unwrap();
        assert_eq!(at, ChunkIndex(i));
    }
    assert!(src.has_chunk(h, ChunkIndex(63)));
    assert!(!src.has_chunk(h, ChunkIndex(64)), "unsigned: not announced");
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    net.add(addr(2), receiver(&id, 2, 1));
    net.run_for(Duration::from_secs(10), |n| {
        n.nodes.get(&addr(2)).is_some_and(|ep| {
            (0..64).all(|c| ep.has_chunk(ep.swarm_handle(0).unwrap(), ChunkIndex(c)))
        })
    });
    assert!(
        has_all(&mut net, 2, 64),
        "the receiver has the signed chunks"
    );
    let ep = net.node(addr(2));
    let rh = ep.swarm_handle(0).unwrap();
    assert!(!ep.has_chunk(rh, ChunkIndex(64)), "nothing unsigned");
    let stats = ep.swarm_stats(rh).unwrap();
    assert_eq!(stats.chunks_verified, 64);
    assert_eq!(stats.chunks_rejected, 0);
    assert_eq!(stats.live_munros_refused, 0);

    // A relay: a third peer fetching only from the receiver; its store is
    // read back below.
    let store = Shared(Arc::new(Mutex::new(MemoryStorage::empty(
        ChunkSize::DEFAULT,
    ))));
    net.add(addr(3), receiver_with(&id, 3, 2, Box::new(store.clone())));
    net.run_for(Duration::from_secs(10), |n| {
        n.nodes.get(&addr(3)).is_some_and(|ep| {
            (0..64).all(|c| ep.has_chunk(ep.swarm_handle(0).unwrap(), ChunkIndex(c)))
        })
    });
    assert!(has_all(&mut net, 3, 64), "the relay's peer has them too");

    // More chunks at the source: the third munro is announced and flows.
    let now = net.now;
    for i in 70..96 {
        net.node(addr(1))
            .push_live_chunk(now, h, &chunk(i), 2_000 + i)
            .unwrap();
    }
    // Both: the source may announce part of the munro to one of them
    // first (`EndpointConfig::live_source_spread`), so either can finish
    // first.
    net.run_for(Duration::from_secs(10), |n| {
        [2, 3].iter().all(|&a| {
            n.nodes.get(&addr(a)).is_some_and(|ep| {
                (0..96).all(|c| ep.has_chunk(ep.swarm_handle(0).unwrap(), ChunkIndex(c)))
            })
        })
    });
    assert!(has_all(&mut net, 2, 96));
    assert!(has_all(&mut net, 3, 96));
    let bytes = store.0.lock().unwrap().bytes().to_vec();
    for i in 0..96u64 {
        let at = i as usize * 1024;
        assert_eq!(&bytes[at..at + 1024], &chunk(i)[..], "chunk {i} as pushed");
    }
}

#[test]
fn a_peer_signing_with_another_key_is_dropped_and_nothing_is_stored() {
    let (_, _, id) = source();
    // A forger serves the swarm id of the true key, signing with its own.
    let key = LiveKeyPair::from_secret(LiveSignatureAlgorithm::ECDSAP256SHA256, &[2; 32]).unwrap();
    let cs = ChunkSize::DEFAULT;
    let injector = LiveInjector::new(key, LiveParams::default(), Some(WINDOW));
    let mut setup = SwarmSetup::live_source(
        injector,
        shape(),
        cs,
        Box::new(LiveRing::new(cs, WINDOW)),
        pick::by_name("sequential").unwrap(),
    );
    setup.live.as_mut().unwrap().id = id.clone();
    let mut forger = Endpoint::new(EndpointConfig::default(), 9);
    let h = forger.add_swarm(Instant::ZERO, setup).unwrap();
    for i in 0..64 {
        forger
            .push_live_chunk(Instant::ZERO, h, &chunk(i), 1_000 + i)
            .unwrap();
    }
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), forger);
    net.add(addr(2), receiver(&id, 2, 1));
    net.run_for(Duration::from_secs(5), |n| {
        n.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, ppspp_core::proto::Event::Closed { .. }))
    });
    let closed = net.events.iter().find_map(|(a, e)| match e {
        ppspp_core::proto::Event::Closed { reason, .. } if *a == addr(2) => Some(reason.clone()),
        _ => None,
    });
    assert_eq!(closed, Some(ppspp_core::proto::CloseReason::BadData));
    let ep = net.node(addr(2));
    let rh = ep.swarm_handle(0).unwrap();
    let stats = ep.swarm_stats(rh).unwrap();
    assert_eq!(stats.chunks_verified, 0);
    assert!(stats.live_munros_refused >= 1);
    assert_eq!(stats.bad_peers, 1);
}

#[test]
fn a_receiver_keeps_up_while_the_source_drops_what_leaves_the_window() {
    let (mut src, h, id) = source();
    let mut net = Net::new(Duration::from_millis(10));
    for i in 0..64 {
        src.push_live_chunk(Instant::ZERO, h, &chunk(i), i).unwrap();
    }
    net.add(addr(1), src);
    net.add(addr(2), receiver(&id, 2, 1));
    // 2,048 more chunks, one munro at a time: twice the window.
    for m in 0..64u64 {
        let now = net.now;
        for i in 64 + 32 * m..96 + 32 * m {
            net.node(addr(1))
                .push_live_chunk(now, h, &chunk(i), i)
                .unwrap();
        }
        net.run_for(Duration::from_millis(500), |_| false);
    }
    let last = 64 + 32 * 64 - 1;
    let ep = net.node(addr(2));
    let rh = ep.swarm_handle(0).unwrap();
    assert!(ep.has_chunk(rh, ChunkIndex(last)), "the receiver keeps up");
    assert_eq!(ep.swarm_stats(rh).unwrap().chunks_rejected, 0);
    let src = net.node(addr(1));
    assert!(src.has_chunk(h, ChunkIndex(last)));
    assert!(
        src.has_chunk(h, ChunkIndex(last + 1 - WINDOW)),
        "the window"
    );
    assert!(
        !src.has_chunk(h, ChunkIndex(last - WINDOW)),
        "nothing older"
    );
    assert_eq!(src.have(h).unwrap().count(), WINDOW);
}
