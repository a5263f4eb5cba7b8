//! The commands the HTTP gateway drives a node with: `set_playhead` makes a
//! streaming picker fetch from there first, `have_run` counts verified
//! chunks without a gap, and `verified()` wakes waiters as chunks verify.

use std::sync::Arc;
use std::time::Duration;

use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{EndpointConfig, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::{ChunkIndex, ChunkSize, HashFunction};
use ppspp_udp::NodeConfig;

fn config(upload_limit: Option<u64>) -> NodeConfig {
    NodeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        endpoint: EndpointConfig {
            upload_limit,
            ..EndpointConfig::default()
        },
        seed: 3,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_playhead_far_ahead_is_fetched_first_and_waiters_wake() {
    let cs = ChunkSize::DEFAULT;
    let data: Vec<u8> = (0..2_000_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let tree = Arc::new(MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap());
    let total = tree.chunk_count();
    // 500 kB/s: the whole content takes about 4 s.
    let (seeder, _se, _st) = ppspp_udp::start(config(Some(500_000))).await.unwrap();
    seeder
        .add_swarm(SwarmSetup::seed(
            tree.clone(),
            Box::new(MemoryStorage::with_content(cs, data.clone())),
            pick::by_name("rarest-first").unwrap(),
        ))
        .await
        .unwrap();
    let (node, _events, _task) = ppspp_udp::start(config(None)).await.unwrap();
    let swarm = node
        .add_swarm(
            SwarmSetup::download(
                tree.root(),
                HashFunction::Sha1,
                cs,
                Some(total),
                Box::new(MemoryStorage::empty(cs)),
                pick::by_name("linear").unwrap(),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let far = ChunkIndex(total * 8 / 10);
    node.set_playhead(swarm, Some(far)).unwrap();
    node.connect(swarm, seeder.local_addr()).unwrap();
    assert_eq!(node.have_run(swarm, far).await.unwrap(), 0);

    let mut verified = node.verified();
    let wait = async {
        while node.have_run(swarm, far).await.unwrap() == 0 {
            verified.changed().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(3), wait)
        .await
        .expect("the chunk at the playhead came");
    let r = node.report(swarm).await.unwrap();
    assert!(r.have < total / 2, "fetched in order instead: {}", r.have);
    assert_eq!(node.have_run(swarm, ChunkIndex(0)).await.unwrap(), 0);

    // Back to the start: everything arrives; runs stop at the end.
    node.set_playhead(swarm, Some(ChunkIndex(0))).unwrap();
    let done = async {
        while !node.report(swarm).await.unwrap().complete {
            verified.changed().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(30), done)
        .await
        .expect("complete");
    assert_eq!(*node.verified().borrow(), total);
    assert_eq!(node.have_run(swarm, ChunkIndex(0)).await.unwrap(), total);
    assert_eq!(node.have_run(swarm, far).await.unwrap(), total - far.0);
    assert_eq!(
        node.have_run(swarm, ChunkIndex(total - 1)).await.unwrap(),
        1
    );
    assert_eq!(node.have_run(swarm, ChunkIndex(total)).await.unwrap(), 0);
}
