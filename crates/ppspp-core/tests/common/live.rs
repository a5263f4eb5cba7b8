//! Live swarms for protocol tests (RFC 7574 §6.1): a source injecting
//! chunks and receivers following it over the test [`Net`].

use ppspp_core::live::{LiveInjector, LiveKeyPair, LiveParams, LiveShape};
use ppspp_core::pick;
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmHandle, SwarmSetup};
use ppspp_core::storage::LiveRing;
use ppspp_core::time::Instant;
use ppspp_core::wire::{DiscardWindow, LiveSignatureAlgorithm};
use ppspp_core::ChunkSize;

use super::{addr, Net};

/// Chunks per munro (the default munro size).
pub const MUNRO: u64 = 32;

pub fn shape(window: u64, algorithm: LiveSignatureAlgorithm) -> LiveShape {
    LiveShape {
        params: LiveParams::default(),
        algorithm,
        window: DiscardWindow::Window(window),
        chunk_size: None,
    }
}

pub fn chunk(i: u64) -> Vec<u8> {
    (0..1024u64).map(|b| (b * 13 + i * 7) as u8).collect()
}

pub fn source(window: u64, algorithm: LiveSignatureAlgorithm) -> (Endpoint, SwarmHandle, Vec<u8>) {
    source_with(EndpointConfig::default(), window, algorithm)
}

/// A source with endpoint configuration `config`.
pub fn source_with(
    config: EndpointConfig,
    window: u64,
    algorithm: LiveSignatureAlgorithm,
) -> (Endpoint, SwarmHandle, Vec<u8>) {
    let key = LiveKeyPair::from_secret(algorithm, &[7; 32]).unwrap();
    let cs = ChunkSize::DEFAULT;
    let injector = LiveInjector::new(key, LiveParams::default(), Some(window));
    let id = injector.swarm_id();
    let mut ep = Endpoint::new(config, 1);
    let setup = SwarmSetup::live_source(
        injector,
        shape(window, algorithm),
        cs,
        Box::new(LiveRing::new(cs, window)),
        pick::by_name("sequential").unwrap(),
    );
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    (ep, h, id)
}

/// A receiver's swarm: a live ring of `window` chunks, hooking in
/// `behind` munros before the newest.
pub fn receiver_setup(
    id: &[u8],
    window: u64,
    algorithm: LiveSignatureAlgorithm,
    behind: u64,
) -> SwarmSetup {
    let cs = ChunkSize::DEFAULT;
    SwarmSetup::live_receiver(
        id,
        shape(window, algorithm),
        false,
        cs,
        Box::new(LiveRing::new(cs, window)),
        pick::by_name("sequential").unwrap(),
    )
    .unwrap()
    .hook_in_behind(behind)
}

/// A receiver (seed `seed`) of swarm `id` connected to `upstream`.
pub fn receiver_of(
    setup: SwarmSetup,
    config: EndpointConfig,
    seed: u64,
    now: Instant,
    upstream: &[u16],
) -> (Endpoint, SwarmHandle) {
    let mut ep = Endpoint::new(config, seed);
    let h = ep.add_swarm(Instant::ZERO, setup).unwrap();
    for &u in upstream {
        ep.connect(now, h, addr(u)).unwrap();
    }
    (ep, h)
}

/// Pushes chunks `from .. to` at the source at the net's time.
pub fn push(net: &mut Net, h: SwarmHandle, chunks: std::ops::Range<u64>) {
    let now = net.now;
    for i in chunks {
        net.node(addr(1))
            .push_live_chunk(now, h, &chunk(i), now.as_micros())
            .unwrap();
    }
}
