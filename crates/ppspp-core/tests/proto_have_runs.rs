//! A leecher fetching from two seeders at once verifies chunks of two parts
//! of the content in turn; its HAVEs to a third peer still announce runs of
//! consecutive chunks (sorted out of the interleaved log), not one HAVE per
//! chunk; and it does not announce chunks the third peer has.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, leecher_with_picker, seeder_endpoint, Net};
use ppspp_core::pick;
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::{Binmap, ChunkRange, ChunkSize};

const CHUNKS: u64 = 400;

/// What the leecher's HAVEs to the observer announced.
#[derive(Debug, Default)]
struct Announced {
    haves: u64,
    /// HAVEs wholly below `CHUNKS / 2`.
    low_only: u64,
    /// Chunks covered below and from `CHUNKS / 2`.
    low: u64,
    high: u64,
    /// Distinct chunks announced.
    chunks: std::collections::BTreeSet<u64>,
}

/// Seeders at addr(1) and addr(4); the leecher at addr(2) fetches from
/// both once connected to the observer; the observer at addr(3), holding chunks `observer_has`, is
/// connected only to the leecher and its requests are dropped. Returns what
/// the leecher announced to the observer and how many chunks it verified.
fn run(observer_has: Option<ChunkRange>) -> (Announced, u64) {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 77, cs);
    let config = EndpointConfig {
        download_limit: Some(200 * 1024),
        ..EndpointConfig::default()
    };
    let a = seeder_endpoint(config.clone(), 1, &tree, &bytes);
    let b = seeder_endpoint(config.clone(), 4, &tree, &bytes);
    let picker = pick::by_name("sequential").unwrap();
    let (leecher, lh) = leecher_with_picker(config.clone(), 2, &tree, picker);
    let mut observer = Endpoint::new(config, 3);
    let mut had = Binmap::new();
    if let Some(r) = observer_has {
        had.set(r);
    }
    let oh = observer
        .add_swarm(
            Instant::ZERO,
            SwarmSetup::download_with_tree(
                tree.clone(),
                had,
                Box::new(MemoryStorage::with_content(cs, bytes.clone())),
                pick::by_name("sequential").unwrap(),
            ),
        )
        .unwrap();
    observer.connect(Instant::ZERO, oh, addr(2));
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), a);
    net.add(addr(4), b);
    net.add(addr(2), leecher);
    net.add(addr(3), observer);
    let seen = Arc::new(Mutex::new(Announced::default()));
    let counter = seen.clone();
    let params = SwarmParams {
        chunk_size: Some(1024),
        ..SwarmParams::default()
    };
    net.filter = Some(Box::new(move |f| {
        let Ok((_, msgs)) = decode_datagram(&f.bytes, params) else {
            return true;
        };
        let msgs: Vec<_> = msgs.flatten().collect();
        if f.from == addr(2) && f.to == addr(3) {
            let mut c = counter.lock().unwrap();
            for m in &msgs {
                if let Message::Have(spec) = m {
                    c.haves += 1;
                    let r = spec.to_chunks(cs).unwrap();
                    if r.last().0 < CHUNKS / 2 {
                        c.low_only += 1;
                    }
                    for i in r.first().0..=r.last().0 {
                        c.chunks.insert(i);
                        if i < CHUNKS / 2 {
                            c.low += 1;
                        } else {
                            c.high += 1;
                        }
                    }
                }
            }
        }
        // The observer's requests never reach the leecher.
        !(f.from == addr(3) && msgs.iter().any(|m| matches!(m, Message::Request(_))))
    }));
    // The observer's channel is up (and its HAVEs in) before the leecher
    // starts to download.
    let start = Duration::from_millis(200);
    net.run_for(start, |_| false);
    for seeder in [addr(1), addr(4)] {
        net.node(addr(2)).connect(Instant::ZERO + start, lh, seeder);
    }
    net.run_for(Duration::from_secs(20), |n| {
        n.nodes[&addr(2)].is_complete(lh)
    });
    net.run_for(Duration::from_secs(1), |_| false);
    let verified = net.nodes[&addr(2)].swarm_stats(lh).unwrap().chunks_verified;
    let announced = std::mem::take(&mut *seen.lock().unwrap());
    (announced, verified)
}

#[test]
fn haves_announce_runs_not_single_chunks() {
    let (a, verified) = run(None);
    assert_eq!(verified, CHUNKS);
    // Every verified chunk was announced. A run may bridge chunks
    // announced before (harmless, and cheaper than a HAVE per run; see
    // `push_haves`): a few repeats at most.
    assert_eq!(a.chunks.len() as u64, CHUNKS, "{a:?}");
    assert!(a.low + a.high <= CHUNKS + CHUNKS / 10, "{a:?}");
    // ~2 s of download and a HAVE batch every 500 ms: a few runs per
    // batch, not one HAVE per chunk (57 HAVEs when each run of the log's
    // order took one).
    assert!(
        a.haves * 20 <= CHUNKS,
        "{} HAVEs for {CHUNKS} chunks",
        a.haves
    );
}

#[test]
fn chunks_the_peer_has_are_not_announced() {
    let half = ChunkRange::new(0, CHUNKS / 2 - 1).unwrap();
    let (a, verified) = run(Some(half));
    assert!(verified >= CHUNKS / 2, "verified {verified}");
    // A run may reach into the observer's half (it bridges chunks we had),
    // but none is announced for its chunks alone.
    assert_eq!(a.low_only, 0, "{a:?}");
    assert_eq!(a.high, CHUNKS / 2, "{a:?}");
}
