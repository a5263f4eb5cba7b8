//! The chunks rarest-first leaves out of its search ("taken") are exactly
//! the chunks we have or have requested, through requests, arrivals and
//! requests given up on when a peer goes silent. A chunk wrongly left taken
//! would never be searched for again; one wrongly left out only costs time.

mod common;

use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::{EndpointConfig, SwarmHandle};
use ppspp_core::{ChunkIndex, ChunkSize};

const CHUNKS: u64 = 600;

/// Every chunk's taken mark agrees with have ∪ requested; returns how many
/// chunks are had and how many requested.
fn check_taken(net: &Net, h: SwarmHandle) -> (u64, u64) {
    let ep = &net.nodes[&addr(10)];
    let (have, requested) = (ep.have(h).unwrap(), ep.requested(h).unwrap());
    let availability = ep.availability(h).unwrap();
    for c in (0..CHUNKS).map(ChunkIndex) {
        let want = have.contains(c) || requested.contains(c);
        assert_eq!(availability.is_taken(c), want, "chunk {c} at {:?}", net.now);
    }
    (have.count(), requested.count())
}

#[test]
fn taken_marks_follow_requests_arrivals_and_releases() {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 253, cs);
    let config = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let mut net = Net::new(Duration::from_millis(30));
    net.add(addr(1), seeder_endpoint(config.clone(), 1, &tree, &bytes));
    net.add(addr(2), seeder_endpoint(config.clone(), 2, &tree, &bytes));
    let (mut ep, h) = leecher_endpoint(config, 10, &tree, "rarest-first");
    ep.connect(net.now, h, addr(1));
    ep.connect(net.now, h, addr(2));
    net.add(addr(10), ep);
    // Under way with both seeders.
    let mut seen_requested = 0;
    for _ in 0..4 {
        net.run_for(Duration::from_millis(100), |_| false);
        seen_requested = seen_requested.max(check_taken(&net, h).1);
    }
    assert!(seen_requested > 0, "nothing was ever in flight");
    // The second seeder goes silent: what was asked of it is given up on
    // and must become searchable again.
    let silent = addr(2);
    net.filter = Some(Box::new(move |d| d.from != silent));
    let before = net.nodes[&addr(10)].have(h).unwrap().count();
    for _ in 0..30 {
        net.run_for(Duration::from_millis(200), |_| false);
        check_taken(&net, h);
    }
    let done = |net: &Net| net.nodes[&addr(10)].is_complete(h);
    net.run_for(Duration::from_secs(60), done);
    assert!(done(&net), "the download stalled");
    assert!(before < CHUNKS, "done before the seeder went silent");
    assert_eq!(check_taken(&net, h), (CHUNKS, 0));
}
