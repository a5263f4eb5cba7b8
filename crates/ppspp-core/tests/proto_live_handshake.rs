//! Two endpoints open a channel in a live swarm (RFC 7574 §6.1, §7.5,
//! §7.7): the swarm id is the injector's public key, the handshake names
//! the unified Merkle tree and the signature algorithm, and a peer with
//! another algorithm is refused with the reason.

mod common;

use std::time::Duration;

use common::{addr, Net};
use ppspp_core::live::{LiveInjector, LiveKeyPair, LiveParams, LiveShape};
use ppspp_core::pick;
use ppspp_core::proto::{CloseReason, Endpoint, EndpointConfig, Event, SwarmSetup};
use ppspp_core::storage::LiveRing;
use ppspp_core::time::Instant;
use ppspp_core::wire::{DiscardWindow, LiveSignatureAlgorithm};
use ppspp_core::ChunkSize;

fn shape(algorithm: LiveSignatureAlgorithm) -> LiveShape {
    LiveShape {
        params: LiveParams::default(),
        algorithm,
        window: DiscardWindow::Window(1024),
        chunk_size: None,
    }
}

/// A source endpoint of a P-256 live swarm; its swarm id.
fn source() -> (Endpoint, Vec<u8>) {
    let key = LiveKeyPair::from_secret(LiveSignatureAlgorithm::ECDSAP256SHA256, &[1; 32]).unwrap();
    let cs = ChunkSize::DEFAULT;
    let injector = LiveInjector::new(key, LiveParams::default(), Some(1024));
    let id = injector.swarm_id();
    let mut ep = Endpoint::new(EndpointConfig::default(), 1);
    let setup = SwarmSetup::live_source(
        injector,
        shape(LiveSignatureAlgorithm::ECDSAP256SHA256),
        cs,
        Box::new(LiveRing::new(cs, 1024)),
        pick::by_name("sequential").unwrap(),
    );
    ep.add_swarm(Instant::ZERO, setup).unwrap();
    (ep, id)
}

fn receiver(id: &[u8], algorithm: LiveSignatureAlgorithm) -> Endpoint {
    let cs = ChunkSize::DEFAULT;
    let mut ep = Endpoint::new(EndpointConfig::default(), 2);
    let setup = SwarmSetup::live_receiver(
        id,
        shape(algorithm),
        false,
        cs,
        Box::new(LiveRing::new(cs, 1024)),
        pick::by_name("sequential").unwrap(),
    )
    .unwrap();
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    ep.connect(Instant::from_micros(1_000_000), h, addr(1))
        .unwrap();
    ep
}

#[test]
fn a_receiver_and_the_source_connect_in_a_live_swarm() {
    let (src, id) = source();
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    net.add(
        addr(2),
        receiver(&id, LiveSignatureAlgorithm::ECDSAP256SHA256),
    );
    net.run_for(Duration::from_secs(2), |n| {
        n.events
            .iter()
            .filter(|(_, e)| matches!(e, Event::Connected { .. }))
            .count()
            == 2
    });
    let connected: Vec<_> = net
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Event::Connected { .. }))
        .map(|(a, _)| *a)
        .collect();
    assert!(connected.contains(&addr(1)), "{:?}", net.events);
    assert!(connected.contains(&addr(2)), "{:?}", net.events);
}

#[test]
fn a_peer_with_another_signature_algorithm_is_refused() {
    let (src, id) = source();
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    // The receiver names Ed25519 in option 5 for the P-256 swarm: the
    // source refuses the handshake.
    net.add(addr(2), receiver(&id, LiveSignatureAlgorithm::ED25519));
    net.run_for(Duration::from_secs(2), |n| {
        n.events
            .iter()
            .any(|(_, e)| matches!(e, Event::Closed { .. }))
    });
    let closed = net.events.iter().find_map(|(a, e)| match e {
        Event::Closed { reason, .. } if *a == addr(2) => Some(reason.clone()),
        _ => None,
    });
    assert_eq!(closed, Some(CloseReason::Refused), "{:?}", net.events);
    assert!(!net
        .events
        .iter()
        .any(|(_, e)| matches!(e, Event::Connected { .. })));
}
