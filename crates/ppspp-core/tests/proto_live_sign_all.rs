//! "Sign All" on the wire (RFC 7574 §6.1.1, content integrity method 2):
//! the source signs every chunk and sends the signature in a
//! SIGNED_INTEGRITY right before the chunk's DATA, with no hashes; a
//! receiver verifies each chunk against the swarm id and relays it with
//! the same signature. A peer announcing the other live method is refused
//! at the handshake, and chunks signed with another key are never stored.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, Net, Shared};
use ppspp_core::live::{LiveInjector, LiveKeyPair, LiveMethod, LiveParams, LiveShape};
use ppspp_core::pick;
use ppspp_core::proto::{CloseReason, Endpoint, EndpointConfig, Event, SwarmHandle, SwarmSetup};
use ppspp_core::storage::{LiveRing, MemoryStorage, Storage};
use ppspp_core::time::Instant;
use ppspp_core::wire::{DiscardWindow, LiveSignatureAlgorithm};
use ppspp_core::{ChunkIndex, ChunkSize};

const WINDOW: u64 = 512;
const P256: LiveSignatureAlgorithm = LiveSignatureAlgorithm::ECDSAP256SHA256;

fn params(method: LiveMethod) -> LiveParams {
    LiveParams {
        method,
        ..LiveParams::default()
    }
}

fn shape(method: LiveMethod) -> LiveShape {
    LiveShape {
        params: params(method),
        algorithm: P256,
        window: DiscardWindow::Window(WINDOW),
        chunk_size: None,
    }
}

fn chunk(i: u64) -> Vec<u8> {
    (0..1024u64).map(|b| (b * 5 + i * 11) as u8).collect()
}

/// A Sign All source signing with secret `secret`, serving swarm `id`
/// (its own key's unless given).
fn source(secret: u8, id: Option<Vec<u8>>) -> (Endpoint, SwarmHandle, Vec<u8>) {
    let key = LiveKeyPair::from_secret(P256, &[secret; 32]).unwrap();
    let cs = ChunkSize::DEFAULT;
    let injector = LiveInjector::new(key, params(LiveMethod::SignAll), Some(WINDOW));
    let mut setup = SwarmSetup::live_source(
        injector,
        shape(LiveMethod::SignAll),
        cs,
        Box::new(LiveRing::new(cs, WINDOW)),
        pick::by_name("sequential").unwrap(),
    );
    if let Some(id) = id {
        setup.live.as_mut().unwrap().id = id;
    }
    let id = setup.live.as_ref().unwrap().id.clone();
    let mut ep = Endpoint::new(EndpointConfig::default(), 1);
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    (ep, h, id)
}

fn receiver(
    id: &[u8],
    method: LiveMethod,
    seed: u64,
    upstream: u16,
    store: Box<dyn Storage>,
) -> Endpoint {
    let mut ep = Endpoint::new(EndpointConfig::default(), seed);
    let setup = SwarmSetup::live_receiver(
        id,
        shape(method),
        true,
        ChunkSize::DEFAULT,
        store,
        pick::by_name("sequential").unwrap(),
    )
    .unwrap()
    .hook_in_behind(u64::MAX);
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    ep.connect(Instant::from_micros(1_000_000), h, addr(upstream))
        .unwrap();
    ep
}

fn has_all(net: &Net, at: u16, chunks: u64) -> bool {
    net.nodes.get(&addr(at)).is_some_and(|ep| {
        let h = ep.swarm_handle(0).unwrap();
        (0..chunks).all(|c| ep.has_chunk(h, ChunkIndex(c)))
    })
}

#[test]
fn every_chunk_is_signed_verified_and_relayed() {
    let (mut src, h, id) = source(1, None);
    for i in 0..200 {
        src.push_live_chunk(Instant::ZERO, h, &chunk(i), 1_000 + i)
            .unwrap();
    }
    // No munro to wait for: every pushed chunk is announced.
    assert!(src.has_chunk(h, ChunkIndex(199)));
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    net.add(
        addr(2),
        receiver(
            &id,
            LiveMethod::SignAll,
            2,
            1,
            Box::new(LiveRing::new(ChunkSize::DEFAULT, WINDOW)),
        ),
    );
    net.run_for(Duration::from_secs(10), |n| has_all(n, 2, 200));
    assert!(has_all(&net, 2, 200), "the receiver has every chunk");
    let store = Shared(Arc::new(Mutex::new(MemoryStorage::empty(
        ChunkSize::DEFAULT,
    ))));
    net.add(
        addr(3),
        receiver(&id, LiveMethod::SignAll, 3, 2, Box::new(store.clone())),
    );
    net.run_for(Duration::from_secs(10), |n| has_all(n, 3, 200));
    assert!(has_all(&net, 3, 200), "and the relay's peer");
    let bytes = store.0.lock().unwrap().bytes().to_vec();
    for i in 0..200u64 {
        let at = i as usize * 1024;
        assert_eq!(&bytes[at..at + 1024], &chunk(i)[..], "chunk {i} as pushed");
    }
    for at in [2, 3] {
        let ep = net.node(addr(at));
        let rh = ep.swarm_handle(0).unwrap();
        let s = ep.swarm_stats(rh).unwrap();
        assert_eq!(
            (s.chunks_verified, s.chunks_rejected, s.live_munros_refused),
            (200, 0, 0)
        );
        assert_eq!(s.live_hook_in, Some(ChunkIndex(0)));
    }
}

#[test]
fn a_peer_of_the_other_method_is_refused_at_the_handshake() {
    let (src, _, id) = source(1, None);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    let store = Box::new(LiveRing::new(ChunkSize::DEFAULT, WINDOW));
    net.add(
        addr(2),
        receiver(&id, LiveMethod::UnifiedMerkleTree, 2, 1, store),
    );
    net.run_for(Duration::from_secs(5), |n| {
        n.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Closed { .. }))
    });
    let reason = net.events.iter().find_map(|(a, e)| match e {
        Event::Closed { reason, .. } if *a == addr(2) => Some(reason.clone()),
        _ => None,
    });
    // The source refuses the handshake; nobody connects.
    assert_eq!(reason, Some(CloseReason::Refused), "{:?}", net.events);
    assert!(!net
        .events
        .iter()
        .any(|(_, e)| matches!(e, Event::Connected { .. })));
}

#[test]
fn chunks_signed_with_another_key_are_never_stored() {
    let (_, _, id) = source(1, None);
    let (mut forger, h, _) = source(2, Some(id.clone()));
    for i in 0..40 {
        forger
            .push_live_chunk(Instant::ZERO, h, &chunk(i), 1_000 + i)
            .unwrap();
    }
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), forger);
    let store = Box::new(LiveRing::new(ChunkSize::DEFAULT, WINDOW));
    net.add(addr(2), receiver(&id, LiveMethod::SignAll, 2, 1, store));
    net.run_for(Duration::from_secs(5), |n| {
        n.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Closed { .. }))
    });
    let ep = net.node(addr(2));
    let rh = ep.swarm_handle(0).unwrap();
    let s = ep.swarm_stats(rh).unwrap();
    assert_eq!(s.chunks_verified, 0);
    assert_eq!(s.bad_peers, 1);
    assert!(ep.have(rh).unwrap().is_empty());
}
