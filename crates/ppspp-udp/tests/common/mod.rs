//! Two real nodes on loopback: a seeder of test content and a downloader.

#![allow(dead_code)]

use std::sync::Arc;

use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{EndpointConfig, SwarmHandle, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::{ChunkSize, HashFunction};
use ppspp_udp::{NodeConfig, NodeHandle};

/// A loopback node with an optional upload limit (bytes/s).
pub fn config(upload_limit: Option<u64>, seed: u64) -> NodeConfig {
    NodeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        endpoint: EndpointConfig {
            upload_limit,
            ..EndpointConfig::default()
        },
        seed: Some(seed),
        clock_zero: None,
    }
}

/// `len` bytes of test content (byte `i` is `i·step mod 251`) and its tree.
pub fn content(len: u32, step: u32) -> (Vec<u8>, Arc<MerkleTree>) {
    let data: Vec<u8> = (0..len).map(|i| (i * step % 251) as u8).collect();
    let tree =
        Arc::new(MerkleTree::from_bytes(&data, ChunkSize::DEFAULT, HashFunction::Sha1).unwrap());
    (data, tree)
}

/// The swarm of a node seeding `data` (whose tree is `tree`).
pub fn seed_setup(tree: &Arc<MerkleTree>, data: &[u8]) -> SwarmSetup {
    SwarmSetup::seed(
        tree.clone(),
        Box::new(MemoryStorage::with_content(
            ChunkSize::DEFAULT,
            data.to_vec(),
        )),
        pick::by_name("rarest-first").unwrap(),
    )
}

/// The swarm of a node that downloads `tree`'s content with `picker`.
pub fn download_setup(tree: &Arc<MerkleTree>, picker: &str) -> SwarmSetup {
    let cs = ChunkSize::DEFAULT;
    SwarmSetup::download(
        tree.root(),
        HashFunction::Sha1,
        cs,
        Some(tree.chunk_count()),
        Box::new(MemoryStorage::empty(cs)),
        pick::by_name(picker).unwrap(),
    )
    .unwrap()
}

/// A node seeding `data` at `upload_limit`, and one set to download it
/// with `picker` (not yet connected).
pub async fn seeder_and_downloader(
    data: &[u8],
    tree: &Arc<MerkleTree>,
    upload_limit: u64,
    picker: &str,
) -> (NodeHandle, NodeHandle, SwarmHandle) {
    let (seeder, _, _) = ppspp_udp::start(config(Some(upload_limit), 3))
        .await
        .unwrap();
    seeder.add_swarm(seed_setup(tree, data)).await.unwrap();
    let (node, _, _) = ppspp_udp::start(config(None, 4)).await.unwrap();
    let swarm = node.add_swarm(download_setup(tree, picker)).await.unwrap();
    (seeder, node, swarm)
}
