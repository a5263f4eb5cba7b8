//! Weighted fair queuing of uploads (seed paper 000 §III-B): under an
//! upload limit, a requester's share follows how many requests it has
//! outstanding with us; with plain turns every requester gets the same.

mod common;

use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::{EndpointConfig, UploadScheduling};
use ppspp_core::ChunkSize;

const CHUNKS: u64 = 20_000;

/// Chunks leechers 10 (up to 64 requests outstanding) and 11 (up to 4)
/// got from a seeder limited to 200 kB/s in 5 s.
fn shares(weighted: bool) -> (u64, u64) {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 251, cs);
    let mut net = Net::new(Duration::from_millis(20));
    let seeder = EndpointConfig {
        pex_auto_connect: false,
        upload_limit: Some(200_000),
        upload_scheduling: if weighted {
            UploadScheduling::Wfq
        } else {
            UploadScheduling::Fifo
        },
        ..EndpointConfig::default()
    };
    net.add(addr(1), seeder_endpoint(seeder, 1, &tree, &bytes));
    let mut handles = Vec::new();
    for (at, asks) in [(10, 64), (11, 4)] {
        let config = EndpointConfig {
            pex_auto_connect: false,
            max_requests_per_peer: asks,
            ..EndpointConfig::default()
        };
        let (mut ep, h) = leecher_endpoint(config, at.into(), &tree, "sequential");
        ep.connect(net.now, h, addr(1));
        net.add(addr(at), ep);
        handles.push(h);
    }
    net.run_for(Duration::from_secs(5), |_| false);
    let got = |at: u16, h| net.nodes[&addr(at)].swarm_stats(h).unwrap().chunks_verified;
    (got(10, handles[0]), got(11, handles[1]))
}

#[test]
fn weighted_turns_follow_outstanding_requests() {
    let (many, few) = shares(false);
    // Turns of one datagram each: about even.
    assert!(
        many < few * 3 / 2 && few < many * 3 / 2,
        "turns: {many} vs {few}"
    );
    let (many_w, few_w) = shares(true);
    // Weighted: the one that keeps more requests queued gets a larger
    // share. (Not the full 16:4 — its request window, steered by the
    // request round trip, shrinks as its requests wait longer: the
    // equilibrium the paper describes.)
    assert!(many_w > few_w * 9 / 5, "weighted: {many_w} vs {few_w}");
    // The limit is shared, not lost: about 200 kB/s × 5 s either way.
    let total = |a: u64, b: u64| a + b;
    assert!(total(many_w, few_w) * 10 >= total(many, few) * 9);
}
