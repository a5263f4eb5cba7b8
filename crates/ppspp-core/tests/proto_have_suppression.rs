//! A HAVE is not sent for chunks the peer has announced itself: a leecher
//! downloading the whole content tells a neighbour that already holds the
//! first half only of the second half, and of all of it.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::{Binmap, ChunkRange, ChunkSize, HashFunction};

const CHUNKS: u64 = 200;
const HALF: u64 = CHUNKS / 2;

#[test]
fn haves_leave_out_what_the_peer_announced() {
    let cs = ChunkSize::new(1024).unwrap();
    let bytes: Vec<u8> = (0..CHUNKS as usize * 1024)
        .map(|i| (i % 249) as u8)
        .collect();
    let tree = Arc::new(MerkleTree::from_bytes(&bytes, cs, HashFunction::Sha1).unwrap());
    let config = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    // The neighbour at addr(3) holds chunks 0 .. HALF.
    let mut half = Binmap::new();
    half.set(ChunkRange::with_len(0u64, HALF).unwrap());
    let mut neighbour = Endpoint::new(config.clone(), 3);
    let nh = neighbour
        .add_swarm(
            Instant::ZERO,
            SwarmSetup::download_with_tree(
                tree.clone(),
                half,
                Box::new(MemoryStorage::with_content(cs, bytes.clone())),
                ppspp_core::pick::by_name("sequential").unwrap(),
            ),
        )
        .unwrap();
    let (leecher, lh) = leecher_endpoint(config.clone(), 2, &tree, "sequential");
    let mut net = Net::new(Duration::from_millis(10));
    neighbour.connect(net.now, nh, addr(2));
    net.add(addr(1), seeder_endpoint(config, 1, &tree, &bytes));
    net.add(addr(3), neighbour);
    // The neighbour's chunks reach the leecher first; then it downloads.
    net.add(addr(2), leecher);
    net.run_for(Duration::from_millis(200), |_| false);
    let now = net.now;
    net.node(addr(2)).connect(now, lh, addr(1));
    // Chunks the leecher announces to the neighbour, and the neighbour's
    // requests, dropped, so that it keeps only its half.
    let announced = Arc::new(Mutex::new(Binmap::new()));
    let seen = announced.clone();
    let params = SwarmParams {
        chunk_size: Some(1024),
        ..SwarmParams::default()
    };
    net.filter = Some(Box::new(move |f| {
        let Ok((_, msgs)) = decode_datagram(&f.bytes, params) else {
            return true;
        };
        let msgs: Vec<Message> = msgs.flatten().collect();
        if f.from == addr(2) && f.to == addr(3) {
            for m in &msgs {
                if let Message::Have(spec) = m {
                    seen.lock().unwrap().set(spec.to_chunks(cs).unwrap());
                }
            }
        }
        !(f.from == addr(3) && msgs.iter().any(|m| matches!(m, Message::Request(_))))
    }));
    net.run_for(Duration::from_secs(30), |n| {
        n.nodes[&addr(2)].is_complete(lh)
    });
    assert!(net.nodes[&addr(2)].is_complete(lh));
    net.run_for(Duration::from_secs(1), |_| false);
    let announced = announced.lock().unwrap();
    let first = ChunkRange::with_len(0u64, HALF).unwrap();
    let second = ChunkRange::with_len(HALF, CHUNKS - HALF).unwrap();
    assert_eq!(
        announced.count_in(first),
        0,
        "announced chunks the peer has"
    );
    assert_eq!(announced.count_in(second), CHUNKS - HALF);
}
