//! Channel ids are security tokens (RFC 7574 §12.1): a node on a network
//! draws them from ChaCha20 keyed by its driver from the OS
//! (`Endpoint::with_key`); the simulator and tests keep reproducible ones
//! (`Endpoint::new` with a seed). Issue 21, item 8.

mod common;

use common::{addr, content};
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::wire::ChannelId;
use ppspp_core::ChunkSize;

/// The ids of channels opened to 50 peers.
fn ids(mut ep: Endpoint) -> Vec<ChannelId> {
    let (_, tree) = content(4096, 251, ChunkSize::DEFAULT);
    let h = ep
        .add_swarm(
            Instant::ZERO,
            SwarmSetup::download_with_tree(
                tree.clone(),
                ppspp_core::Binmap::new(),
                Box::new(MemoryStorage::empty(ChunkSize::DEFAULT)),
                ppspp_core::pick::by_name("sequential").unwrap(),
            ),
        )
        .unwrap();
    (1..=50)
        .map(|i| ep.connect(Instant::ZERO, h, addr(i)).unwrap())
        .collect()
}

fn config() -> EndpointConfig {
    EndpointConfig {
        max_peers_per_swarm: 100,
        ..EndpointConfig::default()
    }
}

#[test]
fn keyed_ids_follow_the_key_only() {
    let a = ids(Endpoint::with_key(config(), [1; 32]));
    assert_eq!(a, ids(Endpoint::with_key(config(), [1; 32])));
    let mut other_key = [1; 32];
    other_key[31] = 2;
    let b = ids(Endpoint::with_key(config(), other_key));
    assert!(a.iter().all(|id| !b.contains(id)), "{a:?} {b:?}");
    let mut distinct = a.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), a.len());
    assert!(!a.contains(&ChannelId::ZERO));
}

#[test]
fn seeded_ids_are_reproducible_and_differ_per_seed() {
    let a = ids(Endpoint::new(config(), 5));
    assert_eq!(a, ids(Endpoint::new(config(), 5)));
    let b = ids(Endpoint::new(config(), 6));
    assert!(a.iter().all(|id| !b.contains(id)));
}

#[test]
fn keyed_ids_are_chacha20_output() {
    use rand::rngs::ChaCha20Rng;
    use rand::{Rng, SeedableRng};
    let key = [9; 32];
    let mut stream = ChaCha20Rng::from_seed(key);
    // The first 64 bits seed the endpoint's other (non-secret) choices.
    stream.next_u64();
    let expected: Vec<ChannelId> = std::iter::from_fn(|| Some(ChannelId(stream.next_u32())))
        .filter(|id| *id != ChannelId::ZERO)
        .take(50)
        .collect();
    assert_eq!(ids(Endpoint::with_key(config(), key)), expected);
}
