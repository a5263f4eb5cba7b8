//! How many shaped real nodes one machine carries (issue 27's scale goal:
//! 1,000 peers at 125 KB/s each with p99 scheduling lateness ≤ 5 ms).
//!
//! For each count, half the nodes seed and half download, in pairs; each
//! seeder's uplink in the model is `RATE` (default 1 Mbit/s = 125 KB/s),
//! every other link 100 Mbit/s, 10 ms of core delay. After `SECONDS`
//! (default 5) it prints what the downloaders received, the shaper's
//! lateness and the process's CPU time.
//!
//! `cargo bench -p ppspp-emu --bench shaper_scale` (counts: `PEERS=20,200`).

use std::sync::Arc;
use std::time::Duration;

use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{EndpointConfig, SwarmHandle, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::{ChunkSize, HashFunction};
use ppspp_emu::shaper::ShaperHandle;
use ppspp_lab::net::{LinkConfig, Network, QueueLimit};
use ppspp_lab::packet::HostId;
use ppspp_udp::{NodeConfig, NodeHandle};

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

async fn run(peers: usize, rate_bps: u64, seconds: u64) -> String {
    let pairs = peers / 2;
    let cs = ChunkSize::DEFAULT;
    // Enough content that no download ends within the run.
    let len = (rate_bps / 8 * seconds * 2) as usize;
    let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    let tree = Arc::new(MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap());
    let mut net = Network::new(1);
    let fast = LinkConfig::new(Some(100_000_000), QueueLimit::Packets(300), Duration::ZERO);
    let slow = LinkConfig::new(Some(rate_bps), QueueLimit::Packets(300), Duration::ZERO);
    for _ in 0..pairs {
        net.add_host(slow.clone(), fast.clone(), None, 0);
        net.add_host(fast.clone(), fast.clone(), None, 0);
    }
    net.set_group_delays(vec![vec![Duration::from_millis(10)]]);
    let shaper = ShaperHandle::start(net);
    let config = |seed| NodeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        endpoint: EndpointConfig::default(),
        seed: Some(seed),
        clock_zero: None,
    };
    let mut downloads: Vec<(NodeHandle, SwarmHandle)> = Vec::new();
    let mut seeders = Vec::new();
    for i in 0..pairs {
        let (port, r) = shaper.port();
        let (seeder, _, _) = ppspp_udp::start_shaped(config(2 * i as u64), port)
            .await
            .unwrap();
        shaper.attach(HostId(2 * i as u32), seeder.local_addr(), r);
        seeder
            .add_swarm(SwarmSetup::seed(
                tree.clone(),
                Box::new(MemoryStorage::with_content(cs, data.clone())),
                pick::by_name("rarest-first").unwrap(),
            ))
            .await
            .unwrap();
        let (port, r) = shaper.port();
        let (node, _, _) = ppspp_udp::start_shaped(config(2 * i as u64 + 1), port)
            .await
            .unwrap();
        shaper.attach(HostId(2 * i as u32 + 1), node.local_addr(), r);
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
        downloads.push((node, swarm));
        seeders.push(seeder);
    }
    let cpu0 = ppspp_emu::cpu::cpu_seconds();
    let start = std::time::Instant::now();
    for ((node, swarm), seeder) in downloads.iter().zip(&seeders) {
        node.connect(*swarm, seeder.local_addr()).unwrap();
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let wall = start.elapsed().as_secs_f64();
    let mut bytes = 0u64;
    for (node, swarm) in &downloads {
        bytes += node.report(*swarm).await.unwrap().have * cs.bytes_usize() as u64;
    }
    let cpu = match (cpu0, ppspp_emu::cpu::cpu_seconds()) {
        (Some(a), Some(b)) => format!("{:.2}", (b - a) / wall),
        _ => "—".into(),
    };
    let stopped = shaper.stop().await;
    let l = &stopped.lateness_us;
    let per = bytes as f64 / wall / pairs as f64 / 1000.0;
    format!(
        "| {peers} | {pairs} | {:.0} | {per:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {cpu} |",
        rate_bps as f64 / 8000.0,
        bytes as f64 / wall / 1e6,
        l.value_at_quantile(0.5) as f64 / 1000.0,
        l.value_at_quantile(0.99) as f64 / 1000.0,
        l.max() as f64 / 1000.0,
    )
}

fn main() {
    // `cargo bench` passes `--bench`; this benchmark takes its settings
    // from the environment instead.
    let peers: Vec<usize> = env_or("PEERS", "20,100,200")
        .split(',')
        .map(|p| p.trim().parse().expect("PEERS: a list of counts"))
        .collect();
    let rate: u64 = env_or("RATE", "1000000").parse().expect("RATE: bit/s");
    let seconds: u64 = env_or("SECONDS", "5").parse().expect("SECONDS");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("| peers | downloaders | target KB/s each | got KB/s each | total MB/s | lateness p50 ms | p99 ms | max ms | CPU s per s |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for p in peers {
        println!("{}", rt.block_on(run(p, rate, seconds)));
    }
}
