//! Checkpoints come by progress as well as by time: with an interval far
//! longer than the download, a leecher still checkpoints once the
//! configured bytes verified (the first early), then as the step grows with
//! what is stored; with the progress trigger off, only completion does.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, content, seeder_endpoint, Net};
use ppspp_core::pick;
use ppspp_core::proto::{Endpoint, EndpointConfig, Event, SwarmSetup};
use ppspp_core::storage::{MemoryStorage, Snapshot, Storage};
use ppspp_core::{ChunkIndex, ChunkSize, HashFunction};

/// An in-memory store that records, for each checkpoint, how many chunks
/// it held and whether it was urgent.
#[derive(Debug)]
struct Counting {
    inner: MemoryStorage,
    log: Arc<Mutex<Vec<(u64, bool)>>>,
}

impl Storage for Counting {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> std::io::Result<usize> {
        self.inner.read_chunk(chunk, out)
    }
    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> std::io::Result<()> {
        self.inner.write_chunk(chunk, data)
    }
    fn set_content_len(&mut self, len: u64) -> std::io::Result<()> {
        self.inner.set_content_len(len)
    }
    fn checkpoint(&mut self, s: &Snapshot<'_>) -> std::io::Result<()> {
        self.log.lock().unwrap().push((s.have.count(), s.urgent));
        Ok(())
    }
}

const CS: u64 = 8192;
const CHUNKS: u64 = 512; // 4 MiB

/// Downloads 4 MiB in 8 KiB chunks with `config`; returns the checkpoints
/// (chunks held, urgent) in order.
fn checkpoints(config: EndpointConfig) -> Vec<(u64, bool)> {
    let cs = ChunkSize::new(CS).unwrap();
    let (data, tree) = content((CHUNKS * CS) as usize, 251, cs);
    let seeder = seeder_endpoint(EndpointConfig::default(), 1, &tree, &data);
    let log = Arc::new(Mutex::new(Vec::new()));
    let store = Counting {
        inner: MemoryStorage::empty(cs),
        log: log.clone(),
    };
    // Known by its root only: the leecher keeps a partial tree, which is
    // what a checkpoint records.
    let setup = SwarmSetup::download(
        tree.root(),
        HashFunction::Sha1,
        cs,
        Some(CHUNKS),
        Box::new(store),
        pick::by_name("sequential").unwrap(),
    )
    .unwrap();
    let mut leecher = Endpoint::new(config, 2);
    let h = leecher
        .add_swarm(ppspp_core::time::Instant::ZERO, setup)
        .unwrap();
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), seeder);
    net.add(addr(2), leecher);
    let now = net.now;
    net.node(addr(2)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(600), |n| {
        n.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Complete { .. }))
    });
    assert!(net.nodes[&addr(2)].is_complete(h), "download incomplete");
    // Well within one interval: the time trigger never fired.
    assert!(net.now.as_micros() < 3_600_000_000, "took {:?}", net.now);
    let got = log.lock().unwrap().clone();
    let stats = net.nodes[&addr(2)].swarm_stats(h).unwrap();
    assert_eq!(stats.checkpoints, got.len() as u64);
    got
}

fn config(bytes: u64, growth: u32) -> EndpointConfig {
    EndpointConfig {
        checkpoint_interval: Duration::from_secs(3600),
        checkpoint_bytes: bytes,
        checkpoint_growth_percent: growth,
        ..EndpointConfig::default()
    }
}

#[test]
fn every_fixed_step_verified() {
    // Every 256 KiB (32 chunks): 15 routine ones, then the completion.
    let got = checkpoints(config(256 << 10, 0));
    let routine: Vec<u64> = got.iter().filter(|c| !c.1).map(|c| c.0).collect();
    assert_eq!(
        routine,
        (1..16).map(|i| i * 32).collect::<Vec<_>>(),
        "{got:?}"
    );
    assert_eq!(got.last(), Some(&(CHUNKS, true)), "{got:?}");
}

#[test]
fn steps_grow_with_what_is_stored() {
    // At least 256 KiB, or as much as is stored (100 %): 32, 64, 128, 256
    // chunks, then the completion at 512.
    let got = checkpoints(config(256 << 10, 100));
    assert_eq!(
        got,
        [
            (32, false),
            (64, false),
            (128, false),
            (256, false),
            (CHUNKS, true)
        ]
    );
}

#[test]
fn time_only_checkpoints_at_completion() {
    let got = checkpoints(config(0, 0));
    assert_eq!(got, [(CHUNKS, true)]);
}
