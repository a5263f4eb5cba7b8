//! Two real nodes on loopback whose datagrams cross the lab's network
//! model through the shaper: the model's links bound what they can move,
//! and its losses reach them.

use std::sync::Arc;
use std::time::Duration;

use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{EndpointConfig, SwarmHandle, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::{ChunkSize, HashFunction};
use ppspp_emu::shaper::{ShaperHandle, ShaperStats};
use ppspp_lab::net::{LinkConfig, LossModel, Network, QueueLimit};
use ppspp_lab::packet::HostId;
use ppspp_udp::{NodeConfig, NodeHandle};
use tokio::time::Instant;

const LEN: u32 = 300_000;
/// The seeder's uplink: 300 kB take at least 1.2 s through it.
const UPLINK_BPS: u64 = 2_000_000;
/// One-way core delay between the two hosts.
const CORE: Duration = Duration::from_millis(40);

fn config(seed: u64) -> NodeConfig {
    NodeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        endpoint: EndpointConfig::default(),
        seed: Some(seed),
        clock_zero: None,
    }
}

/// Host 0 (the seeder) on a 2 Mbit/s uplink with `loss`, host 1 on
/// 100 Mbit/s links; `CORE` between them.
fn network(loss: LossModel) -> Network {
    let mut net = Network::new(7);
    let fast = LinkConfig::new(Some(100_000_000), QueueLimit::Packets(300), Duration::ZERO);
    let mut up = LinkConfig::new(Some(UPLINK_BPS), QueueLimit::Packets(300), Duration::ZERO);
    up.loss = loss;
    net.add_host(up, fast.clone(), None, 0);
    net.add_host(fast.clone(), fast, None, 0);
    net.set_group_delays(vec![vec![CORE]]);
    net
}

struct Swarm {
    shaper: ShaperHandle,
    seeder: NodeHandle,
    node: NodeHandle,
    swarm: SwarmHandle,
    total: u64,
}

async fn swarm(loss: LossModel) -> Swarm {
    let data: Vec<u8> = (0..LEN).map(|i| (i * 13 % 251) as u8).collect();
    let cs = ChunkSize::DEFAULT;
    let tree = Arc::new(MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap());
    let shaper = ShaperHandle::start(network(loss));
    let (port, releaser) = shaper.port();
    let (seeder, _, _) = ppspp_udp::start_shaped(config(1), port).await.unwrap();
    shaper.attach(HostId(0), seeder.local_addr(), releaser);
    seeder
        .add_swarm(SwarmSetup::seed(
            tree.clone(),
            Box::new(MemoryStorage::with_content(cs, data)),
            pick::by_name("rarest-first").unwrap(),
        ))
        .await
        .unwrap();
    let (port, releaser) = shaper.port();
    let (node, _, _) = ppspp_udp::start_shaped(config(2), port).await.unwrap();
    shaper.attach(HostId(1), node.local_addr(), releaser);
    let swarm = node
        .add_swarm(
            SwarmSetup::download(
                tree.root(),
                HashFunction::Sha1,
                cs,
                Some(tree.chunk_count()),
                Box::new(MemoryStorage::empty(cs)),
                pick::by_name("linear").unwrap(),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    Swarm {
        shaper,
        seeder,
        node,
        swarm,
        total: tree.chunk_count(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_links_bound_a_real_download() {
    let s = swarm(LossModel::None).await;
    let mut verified = s.node.verified();
    let start = Instant::now();
    s.node.connect(s.swarm, s.seeder.local_addr()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), verified.wait_for(|v| *v > 0))
        .await
        .expect("a first chunk")
        .unwrap();
    // Handshake, its answer, the request, the data: four crossings of the
    // core at least.
    let first = start.elapsed();
    assert!(first >= 4 * CORE, "first chunk after {first:?}");
    tokio::time::timeout(
        Duration::from_secs(60),
        verified.wait_for(|v| *v == s.total),
    )
    .await
    .expect("complete")
    .unwrap();
    let took = start.elapsed();
    assert!(s.node.report(s.swarm).await.unwrap().complete);
    // Every chunk crossed the seeder's 2 Mbit/s uplink in the model.
    let floor = Duration::from_secs_f64(f64::from(LEN) * 8.0 / UPLINK_BPS as f64);
    assert!(took >= floor, "300 kB in {took:?} through 2 Mbit/s");
    let stopped = s.shaper.stop().await;
    let (net, stats) = (stopped.net, stopped.stats);
    let (up, _) = net.access_links(HostId(0)).unwrap();
    let link = net.link(up).stats();
    assert!(link.bytes_out >= u64::from(LEN), "{link:?}");
    // Each of the many turns with due events was counted.
    assert!(
        stopped.lateness_us.len() > 100,
        "{}",
        stopped.lateness_us.len()
    );
    assert_eq!(link.drops_loss, 0);
    let ShaperStats {
        offered,
        sent,
        unknown,
    } = stats;
    assert_eq!(unknown, 0);
    assert!(sent <= offered, "{stats:?}");
    assert!(sent > s.total, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_losses_reach_the_nodes() {
    // Everything the seeder sends is lost in the model: the downloader's
    // handshake gets through, nothing comes back.
    let s = swarm(LossModel::Bernoulli { p: 1.0 }).await;
    s.node.connect(s.swarm, s.seeder.local_addr()).unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(*s.node.verified().borrow(), 0);
    let report = s.node.report(s.swarm).await.unwrap();
    let stopped = s.shaper.stop().await;
    let (net, stats) = (stopped.net, stopped.stats);
    let (up, _) = net.access_links(HostId(0)).unwrap();
    let link = net.link(up).stats();
    assert!(link.drops_loss > 0, "{link:?}");
    assert_eq!(link.packets_out, 0);
    // The downloader's datagrams went through the model; none of the
    // seeder's reached the downloader.
    assert!(stats.sent > 0, "{stats:?}");
    assert_eq!(report.endpoint.datagrams_received, 0);
}
