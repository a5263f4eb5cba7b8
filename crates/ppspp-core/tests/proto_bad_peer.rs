//! A peer whose chunks fail verification is disconnected, counted and never
//! asked again; its requests go to the honest peer and the content arrives
//! intact (RFC 7574 §5.2, §13.7).

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, Net, Shared};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{CloseReason, Endpoint, EndpointConfig, Event, SwarmSetup};
use ppspp_core::storage::{MemoryStorage, Storage};
use ppspp_core::time::Instant;
use ppspp_core::{ChunkIndex, ChunkSize, HashFunction};

#[derive(Debug)]
struct Corrupting(MemoryStorage);

impl Storage for Corrupting {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read_chunk(chunk, out)?;
        out[0] ^= 1;
        Ok(n)
    }
    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> std::io::Result<()> {
        self.0.write_chunk(chunk, data)
    }
}

#[test]
fn bad_data_drops_the_peer_and_the_download_completes_elsewhere() {
    let data: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let cs = ChunkSize::DEFAULT;
    let tree = Arc::new(MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap());
    let seeder = |store: Box<dyn Storage>, seed| {
        let mut ep = Endpoint::new(EndpointConfig::default(), seed);
        ep.add_swarm(
            Instant::ZERO,
            SwarmSetup::seed(tree.clone(), store, pick::by_name("sequential").unwrap()),
        )
        .unwrap();
        ep
    };
    let good = seeder(Box::new(MemoryStorage::with_content(cs, data.clone())), 1);
    let bad = seeder(
        Box::new(Corrupting(MemoryStorage::with_content(cs, data.clone()))),
        2,
    );
    let store = Shared(Arc::new(Mutex::new(MemoryStorage::empty(cs))));
    let setup = SwarmSetup::download(
        tree.root(),
        HashFunction::Sha1,
        cs,
        None,
        Box::new(store.clone()),
        pick::by_name("rarest-first").unwrap(),
    )
    .unwrap();
    let mut leech = Endpoint::new(EndpointConfig::default(), 3);
    let h = leech.add_swarm(Instant::ZERO, setup).unwrap();
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), good);
    net.add(addr(2), bad);
    net.add(addr(3), leech);
    let now = net.now;
    net.node(addr(3)).connect(now, h, addr(2)).unwrap();
    net.node(addr(3)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(60), |n| {
        n.nodes[&addr(3)].is_complete(h)
    });
    assert!(net.nodes[&addr(3)].is_complete(h));
    assert_eq!(store.0.lock().unwrap().bytes(), &data[..]);
    let stats = net.nodes[&addr(3)].swarm_stats(h).unwrap();
    assert_eq!(stats.bad_peers, 1);
    assert!(stats.chunks_rejected >= 1);
    assert_eq!(stats.peers[&addr(2)].payload_bytes_received, 0);
    assert_eq!(
        stats.peers[&addr(1)].payload_bytes_received,
        data.len() as u64
    );
    let dropped = net.events.iter().filter(|(a, e)| {
        *a == addr(3) && matches!(e, Event::Closed { peer, reason: CloseReason::BadData, .. } if *peer == addr(2))
    });
    assert_eq!(dropped.count(), 1);
    // Banned: connecting again is refused.
    let now = net.now;
    assert_eq!(net.node(addr(3)).connect(now, h, addr(2)), None);
}
