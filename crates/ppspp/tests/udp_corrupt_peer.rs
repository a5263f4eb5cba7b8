//! A peer that serves corrupted chunks is detected, disconnected and
//! counted, and the download completes from the honest peer.

mod common;

use std::sync::Arc;

use common::*;
use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{EndpointConfig, SwarmSetup};
use ppspp_core::storage::{MemoryStorage, Storage};
use ppspp_core::{ChunkIndex, ChunkSize, HashFunction};
use ppspp_udp::NodeConfig;

/// Serves the right content with one byte flipped in every chunk.
#[derive(Debug)]
struct Corrupting(MemoryStorage);

impl Storage for Corrupting {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read_chunk(chunk, out)?;
        out[n / 2] ^= 0x5a;
        Ok(n)
    }
    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> std::io::Result<()> {
        self.0.write_chunk(chunk, data)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn corrupt_chunks_are_refused_and_the_download_completes_elsewhere() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(2_000_000, 9);
    let src = write_file(dir.path(), "src", &data);
    // The bad peer claims the same swarm but lies about the bytes.
    let cs = ChunkSize::DEFAULT;
    let tree = Arc::new(MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap());
    let config = NodeConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        endpoint: EndpointConfig::default(),
        seed: Some(5),
        clock_zero: None,
    };
    let (bad, _events, _task) = ppspp_udp::start(config).await.unwrap();
    let store = Corrupting(MemoryStorage::with_content(cs, data.clone()));
    bad.add_swarm(SwarmSetup::seed(
        tree,
        Box::new(store),
        pick::by_name("sequential").unwrap(),
    ))
    .await
    .unwrap();
    let good = seed(&src, &["--upload-limit", "4MB/s"]);
    let out = dir.path().join("out");
    let st = dir.path().join("stats.json");
    let bad_addr = bad.local_addr().to_string();
    let args: Vec<String> = vec![
        "--peer".into(),
        bad_addr.clone(),
        "--stats-json".into(),
        st.to_str().unwrap().into(),
    ];
    let (url, out2) = (good.url.clone(), out.clone());
    // The bad peer runs on this runtime; the download blocks another thread.
    let res = tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        get(&url, &out2, &args)
    })
    .await
    .unwrap();
    assert_ok(&res, "download with a corrupt peer");
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    let s = stats(&st);
    assert!(s["chunks_rejected"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(s["bad_peers"], 1, "{s}");
    assert!(
        s["peers"][&bad_addr]["chunks_rejected"].as_u64().unwrap() >= 1,
        "{s}"
    );
    assert_eq!(s["peers"][&bad_addr]["payload_bytes_received"], 0, "{s}");
    assert_eq!(
        s["peers"][good.addr()]["payload_bytes_received"],
        data.len() as u64,
        "{s}"
    );
}
