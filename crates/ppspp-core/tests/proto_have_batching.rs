//! HAVEs for newly verified chunks wait (up to `have_interval`) for a
//! datagram to ride on instead of taking one datagram per chunk per peer;
//! and a peer that downloads only through them still completes. Also: a
//! leecher that knows the whole tree in advance (as the lab's simulated
//! peers do) downloads and verifies every chunk.

mod common;

use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::time::Instant;
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::ChunkSize;

const LEN: usize = 300 * 1024;

/// Seeder at addr(1); leecher at addr(2) fetching from it (with a known
/// tree); observer at addr(3), a leecher connected only to the leecher,
/// whose requests are all dropped so the leecher never sends it DATA.
/// Returns (chunks the leecher verified, HAVE-only datagrams it sent to the
/// observer, whether the leecher completed).
fn run(have_interval: Duration) -> (u64, u64, bool) {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(LEN, 253, cs);
    let config = EndpointConfig {
        have_interval,
        download_limit: Some(200 * 1024),
        ..EndpointConfig::default()
    };
    let seeder = seeder_endpoint(config.clone(), 1, &tree, &bytes);
    let (mut leecher, lh) = leecher_endpoint(config.clone(), 2, &tree, "sequential");
    let (mut observer, oh) = leecher_endpoint(config, 3, &tree, "sequential");
    leecher.connect(Instant::ZERO, lh, addr(1));
    observer.connect(Instant::ZERO, oh, addr(2));
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), seeder);
    net.add(addr(2), leecher);
    net.add(addr(3), observer);
    let have_only = Arc::new(Mutex::new(0u64));
    let counter = have_only.clone();
    let params = SwarmParams {
        chunk_size: Some(1024),
        ..SwarmParams::default()
    };
    net.filter = Some(Box::new(move |f| {
        if f.from == addr(2) && f.to == addr(3) {
            if let Ok((_, msgs)) = decode_datagram(&f.bytes, params) {
                let msgs: Vec<_> = msgs.flatten().collect();
                if !msgs.is_empty() && msgs.iter().all(|m| matches!(m, Message::Have(_))) {
                    *counter.lock().unwrap() += 1;
                }
            }
        }
        // The observer's requests never reach the leecher.
        let request = f.from == addr(3)
            && decode_datagram(&f.bytes, params)
                .is_ok_and(|(_, msgs)| msgs.flatten().any(|m| matches!(m, Message::Request(_))));
        !request
    }));
    net.run_for(Duration::from_secs(20), |n| {
        n.nodes[&addr(2)].is_complete(lh)
    });
    // Let the last HAVEs go out.
    net.run_for(Duration::from_secs(1), |_| false);
    let leecher = &net.nodes[&addr(2)];
    let verified = leecher.swarm_stats(lh).unwrap().chunks_verified;
    let done = leecher.is_complete(lh);
    let n = *have_only.lock().unwrap();
    (verified, n, done)
}

#[test]
fn haves_are_batched() {
    let (verified, batched, done) = run(Duration::from_millis(500));
    assert!(done);
    assert_eq!(verified, 300);
    // ~1.5 s of download at 200 KiB/s: a few HAVE datagrams, not hundreds.
    assert!(
        batched <= 10,
        "{batched} HAVE-only datagrams for {verified} chunks"
    );
    // Without batching, nearly one datagram per chunk.
    let (_, unbatched, _) = run(Duration::ZERO);
    assert!(unbatched >= 50, "{unbatched} HAVE-only datagrams unbatched");
}
