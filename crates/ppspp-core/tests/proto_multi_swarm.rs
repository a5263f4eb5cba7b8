//! Several swarms behind one endpoint (one UDP socket): channels are told
//! apart by their ids, and each download gets its own content
//! (RFC 7574 §3.11).

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, Net, Shared};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::{ChunkSize, HashFunction};

#[test]
fn three_swarms_share_one_endpoint_on_each_side() {
    let cs = ChunkSize::new(512).unwrap();
    let contents: Vec<Vec<u8>> = (0..3u32)
        .map(|k| {
            (0..(40_000 + 7_000 * k))
                .map(|i| ((i * (k + 3)) % 253) as u8)
                .collect()
        })
        .collect();
    let trees: Vec<Arc<MerkleTree>> = contents
        .iter()
        .map(|c| Arc::new(MerkleTree::from_bytes(c, cs, HashFunction::Sha256).unwrap()))
        .collect();
    let mut seeder = Endpoint::new(EndpointConfig::default(), 1);
    let mut leecher = Endpoint::new(EndpointConfig::default(), 2);
    let mut downloads = Vec::new();
    for (tree, content) in trees.iter().zip(&contents) {
        let store = MemoryStorage::with_content(cs, content.clone());
        seeder
            .add_swarm(
                Instant::ZERO,
                SwarmSetup::seed(
                    tree.clone(),
                    Box::new(store),
                    pick::by_name("rarest-first").unwrap(),
                ),
            )
            .unwrap();
        let out = Shared(Arc::new(Mutex::new(MemoryStorage::empty(cs))));
        let setup = SwarmSetup::download(
            tree.root(),
            HashFunction::Sha256,
            cs,
            None,
            Box::new(out.clone()),
            pick::by_name("sequential").unwrap(),
        )
        .unwrap();
        downloads.push((leecher.add_swarm(Instant::ZERO, setup).unwrap(), out));
    }
    // The same swarm twice is refused.
    let again = SwarmSetup::seed(
        trees[0].clone(),
        Box::new(MemoryStorage::empty(cs)),
        pick::by_name("sequential").unwrap(),
    );
    assert!(seeder.add_swarm(Instant::ZERO, again).is_none());
    let mut net = Net::new(Duration::from_millis(20));
    net.add(addr(1), seeder);
    net.add(addr(2), leecher);
    let now = net.now;
    for (h, _) in &downloads {
        net.node(addr(2)).connect(now, *h, addr(1)).unwrap();
    }
    let handles: Vec<_> = downloads.iter().map(|d| d.0).collect();
    net.run_for(Duration::from_secs(60), |n| {
        handles.iter().all(|h| n.nodes[&addr(2)].is_complete(*h))
    });
    for ((h, out), content) in downloads.iter().zip(&contents) {
        assert!(net.nodes[&addr(2)].is_complete(*h));
        assert_eq!(out.0.lock().unwrap().bytes(), &content[..]);
    }
    assert_eq!(net.nodes[&addr(1)].channel_count(), 3);
}
