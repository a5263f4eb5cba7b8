//! How many shaped real nodes one machine carries (issue 27's scale goal:
//! 1,000 peers at 125 KB/s each with p99 scheduling lateness ≤ 5 ms).
//!
//! For each count, the nodes stream to each other in a ring (`TOPOLOGY=ring`,
//! the default: each downloads from its predecessor and uploads to its
//! successor, so every node streams in and out) or in pairs
//! (`TOPOLOGY=pairs`: half seed, half download). Each uploader's uplink in
//! the model is `RATE` (default 1 Mbit/s = 125 KB/s), every other link
//! 100 Mbit/s, 10 ms of core delay; chunks are `CHUNK` bytes (default
//! 1024). After `SECONDS` (default 5) it prints what the downloaders
//! received, the shaper's lateness and the process's CPU time.
//!
//! `cargo bench -p ppspp-emu --bench shaper_scale` (counts: `PEERS=20,200`).
//! Crystal (seed paper 004, Fig. 9) found an emulator's cumulative rate
//! grows with the message size; `CHUNK` measures the same here.

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
use ppspp_udp::NodeConfig;

fn env_or(key: &str, default: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| default.to_string())
}

/// What every node in a run shares: the two contents and their trees.
struct Contents {
    cs: ChunkSize,
    data: [Vec<u8>; 2],
    trees: [Arc<MerkleTree>; 2],
}

impl Contents {
    /// Two contents of `len` bytes in chunks of `cs`.
    fn new(len: usize, cs: ChunkSize) -> Contents {
        let data: [Vec<u8>; 2] =
            [7usize, 11].map(|step| (0..len).map(|i| (i * step % 251) as u8).collect());
        let trees = [0, 1].map(|k: usize| {
            Arc::new(MerkleTree::from_bytes(&data[k], cs, HashFunction::Sha1).unwrap())
        });
        Contents { cs, data, trees }
    }

    fn seed(&self, k: usize) -> SwarmSetup {
        SwarmSetup::seed(
            self.trees[k].clone(),
            Box::new(MemoryStorage::with_content(self.cs, self.data[k].clone())),
            pick::by_name("rarest-first").unwrap(),
        )
    }

    fn download(&self, k: usize) -> SwarmSetup {
        let t = &self.trees[k];
        SwarmSetup::download(
            t.root(),
            HashFunction::Sha1,
            self.cs,
            Some(t.chunk_count()),
            Box::new(MemoryStorage::empty(self.cs)),
            pick::by_name("linear").unwrap(),
        )
        .unwrap()
    }
}

/// How the nodes stream to each other.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Topology {
    /// Half seed, half download, in pairs: a seeder uploads, its partner
    /// downloads.
    Pairs,
    /// A ring: node `i` downloads from node `i - 1` what that one seeds,
    /// and seeds to node `i + 1`, so every node streams in and out (even
    /// nodes seed content 0 and fetch content 1, odd ones the other way).
    Ring,
}

async fn run(peers: usize, rate_bps: u64, seconds: u64, cs: ChunkSize, topo: Topology) -> String {
    let peers = peers.max(2) / 2 * 2;
    // Enough content that no download ends within the run.
    let len = (rate_bps / 8 * seconds * 2) as usize;
    let contents = Contents::new(len, cs);
    let mut net = Network::new(1);
    let fast = LinkConfig::new(Some(100_000_000), QueueLimit::Packets(300), Duration::ZERO);
    let slow = LinkConfig::new(Some(rate_bps), QueueLimit::Packets(300), Duration::ZERO);
    for i in 0..peers {
        // Every uploader's uplink is the limit; a pair's downloader's is
        // not used.
        let up = if topo == Topology::Pairs && i % 2 == 1 {
            &fast
        } else {
            &slow
        };
        net.add_host(up.clone(), fast.clone(), None, 0);
    }
    net.set_group_delays(vec![vec![Duration::from_millis(10)]]);
    let shaper = ShaperHandle::start(net);
    let config = |seed| NodeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        endpoint: EndpointConfig::default(),
        seed: Some(seed),
        clock_zero: None,
    };
    let mut nodes = Vec::new();
    for i in 0..peers {
        let (port, r) = shaper.port();
        let (node, _, _) = ppspp_udp::start_shaped(config(i as u64), port)
            .await
            .unwrap();
        shaper.attach(HostId(i as u32), node.local_addr(), r);
        nodes.push(node);
    }
    // (downloader, its swarm, whom it downloads from)
    let mut downloads: Vec<(usize, SwarmHandle, usize)> = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        match topo {
            Topology::Pairs if i % 2 == 0 => {
                node.add_swarm(contents.seed(0)).await.unwrap();
            }
            Topology::Pairs => {
                let h = node.add_swarm(contents.download(0)).await.unwrap();
                downloads.push((i, h, i - 1));
            }
            Topology::Ring => {
                node.add_swarm(contents.seed(i % 2)).await.unwrap();
                let h = node.add_swarm(contents.download(1 - i % 2)).await.unwrap();
                downloads.push((i, h, (i + peers - 1) % peers));
            }
        }
    }
    let cpu0 = ppspp_emu::cpu::cpu_seconds();
    let start = std::time::Instant::now();
    for (i, h, from) in &downloads {
        nodes[*i].connect(*h, nodes[*from].local_addr()).unwrap();
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let mut bytes = 0u64;
    for (i, h, _) in &downloads {
        bytes += nodes[*i].report(*h).await.unwrap().have * cs.bytes_usize() as u64;
    }
    // Wall and CPU time both to the last report (a thousand reports take
    // a while, and the nodes go on meanwhile).
    let wall = start.elapsed().as_secs_f64();
    let cpu = match (cpu0, ppspp_emu::cpu::cpu_seconds()) {
        (Some(a), Some(b)) => format!("{:.2}", (b - a) / wall),
        _ => "—".into(),
    };
    let stopped = shaper.stop().await;
    let l = &stopped.lateness_us;
    let n = downloads.len();
    let per = bytes as f64 / wall / n as f64 / 1000.0;
    format!(
        "| {peers} | {n} | {} | {:.0} | {per:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {cpu} |",
        cs.bytes_u64(),
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
    let chunk: u64 = env_or("CHUNK", "1024").parse().expect("CHUNK: bytes");
    let cs = ChunkSize::new(chunk).expect("CHUNK: a chunk size the core takes");
    let topo = match env_or("TOPOLOGY", "ring").as_str() {
        "pairs" => Topology::Pairs,
        "ring" => Topology::Ring,
        t => panic!("TOPOLOGY: pairs or ring, not {t}"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    println!("| peers | downloaders | chunk B | target KB/s each | got KB/s each | total MB/s | lateness p50 ms | p99 ms | max ms | CPU s per s |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for p in peers {
        println!("{}", rt.block_on(run(p, rate, seconds, cs, topo)));
    }
}
