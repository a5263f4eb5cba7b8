//! A channel whose pick found nothing does not search again until
//! something could change that: the peer announcing a chunk we lack, or
//! requested chunks given back. Announcements of chunks we have — a peer
//! downloading what we already hold — are not such news, and a pick is the
//! costly part of a datagram.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{addr, seeder_endpoint, Net};
use ppspp_core::pick::{PickView, Picker, RarestFirst};
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::{Binmap, ChunkRange, ChunkSize};
use rand::Rng;

const CHUNKS: u64 = 600;

/// Rarest-first, counting the picks that found nothing.
#[derive(Debug)]
struct Counting {
    inner: RarestFirst,
    empty: Arc<AtomicU64>,
}

impl Picker for Counting {
    fn name(&self) -> &'static str {
        "counting"
    }

    fn pick(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    ) {
        let before = out.len();
        self.inner.pick(view, max_chunks, rng, out);
        if out.len() == before {
            self.empty.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[test]
fn announcements_of_chunks_we_have_do_not_trigger_picks() {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 251, cs);
    let config = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let first: Binmap = [ChunkRange::new(0, 99).unwrap()].into_iter().collect();
    let holder = |seed, picker: Box<dyn Picker>| {
        let mut ep = Endpoint::new(config.clone(), seed);
        let h = ep
            .add_swarm(
                Instant::ZERO,
                SwarmSetup::download_with_tree(
                    tree.clone(),
                    first.clone(),
                    Box::new(MemoryStorage::with_content(cs, bytes.clone())),
                    picker,
                ),
            )
            .unwrap();
        (ep, h)
    };
    let mut net = Net::new(Duration::from_millis(20));
    net.add(addr(1), seeder_endpoint(config.clone(), 1, &tree, &bytes));
    // The peer holds what the leecher holds, and downloads the rest from
    // the leecher only: every HAVE it sends names a chunk the leecher has.
    let (peer, _) = holder(2, Box::new(RarestFirst::new()));
    net.add(addr(2), peer);
    let empty = Arc::new(AtomicU64::new(0));
    let counting = Counting {
        inner: RarestFirst::new(),
        empty: empty.clone(),
    };
    let (mut leecher, h) = holder(10, Box::new(counting));
    leecher.connect(net.now, h, addr(1));
    leecher.connect(net.now, h, addr(2));
    net.add(addr(10), leecher);
    let start = net.now;
    net.run_for(Duration::from_secs(60), |n| {
        n.nodes[&addr(10)].is_complete(h)
    });
    assert!(net.nodes[&addr(10)].is_complete(h));
    let took = net.now.saturating_since(start).as_secs_f64();
    let uploaded = net.nodes[&addr(10)]
        .swarm_stats(h)
        .unwrap()
        .payload_bytes_sent;
    assert!(
        uploaded > 100 * 1024,
        "the peer downloaded only {uploaded} B"
    );
    // At most one empty pick per second at the peer, plus one after each
    // of the few releases; a pick on every HAVE would be hundreds.
    let empty = empty.load(Ordering::Relaxed);
    assert!(
        (empty as f64) <= took + 10.0,
        "{empty} empty picks in {took:.1} s"
    );
}
