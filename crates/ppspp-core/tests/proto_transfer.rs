//! One seeder, one leecher, over the in-test network: the leecher ends with
//! the exact content, for edge sizes, chunk sizes, hash functions, and with
//! and without the content length in the metadata.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, Net, Shared};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{Endpoint, EndpointConfig, Event, SwarmHandle, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::{ChunkSize, HashFunction};

fn content(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i * 31 + usize::from(salt)) % 251) as u8)
        .collect()
}

pub fn seeder(
    data: &[u8],
    cs: ChunkSize,
    hf: HashFunction,
    seed: u64,
) -> (Endpoint, SwarmHandle, Arc<MerkleTree>) {
    let tree = Arc::new(MerkleTree::from_bytes(data, cs, hf).unwrap());
    let mut ep = Endpoint::new(EndpointConfig::default(), seed);
    let store = MemoryStorage::with_content(cs, data.to_vec());
    let setup = SwarmSetup::seed(
        tree.clone(),
        Box::new(store),
        pick::by_name("sequential").unwrap(),
    );
    let h = ep
        .add_swarm(ppspp_core::time::Instant::ZERO, setup)
        .unwrap();
    (ep, h, tree)
}

fn transfer(len: usize, cs: u64, hf: HashFunction, tell_length: bool, picker: &str) {
    let data = content(len, cs as u8);
    let cs = ChunkSize::new(cs).unwrap();
    let (seed_ep, _, tree) = seeder(&data, cs, hf, 1);
    let store = Shared(Arc::new(Mutex::new(MemoryStorage::empty(cs))));
    let chunk_count = tell_length.then(|| tree.chunk_count());
    let setup = SwarmSetup::download(
        tree.root(),
        hf,
        cs,
        chunk_count,
        Box::new(store.clone()),
        pick::by_name(picker).unwrap(),
    )
    .unwrap();
    let mut leech_ep = Endpoint::new(EndpointConfig::default(), 2);
    let h = leech_ep
        .add_swarm(ppspp_core::time::Instant::ZERO, setup)
        .unwrap();
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), seed_ep);
    net.add(addr(2), leech_ep);
    let now = net.now;
    net.node(addr(2)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(120), |n| {
        n.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Complete { .. }))
    });
    let what = format!("{len} bytes, {cs}-byte chunks, {hf}, length told: {tell_length}, {picker}");
    assert!(
        net.nodes[&addr(2)].is_complete(h),
        "{what}: not complete; events {:?}",
        net.events
    );
    assert_eq!(
        store.0.lock().unwrap().bytes(),
        &data[..],
        "{what}: content differs"
    );
    let lens: Vec<u64> = net
        .events
        .iter()
        .filter_map(|(a, e)| match e {
            Event::ContentLength { len, .. } if *a == addr(2) => Some(*len),
            _ => None,
        })
        .collect();
    assert_eq!(lens, [len as u64], "{what}");
    let stats = net.nodes[&addr(2)].swarm_stats(h).unwrap();
    assert_eq!(stats.chunks_verified, tree.chunk_count(), "{what}");
    assert_eq!(stats.payload_bytes_received, len as u64, "{what}");
    assert_eq!(stats.chunks_rejected, 0, "{what}");
}

#[test]
fn edge_sizes_chunk_sizes_and_hash_functions() {
    for cs in [1024u64, 8192] {
        for hf in [HashFunction::Sha1, HashFunction::Sha256] {
            let c = cs as usize;
            for len in [1, c, c + 1, 3 * c - 7] {
                for tell in [true, false] {
                    for picker in pick::NAMES {
                        transfer(len, cs, hf, tell, picker);
                    }
                }
            }
        }
    }
}

#[test]
fn a_few_megabytes() {
    transfer(3 << 20, 1024, HashFunction::Sha1, false, "rarest-first");
    transfer(3 << 20, 8192, HashFunction::Sha256, true, "sequential");
    transfer(200_000, 1024, HashFunction::Sha1, true, "sequential");
}
