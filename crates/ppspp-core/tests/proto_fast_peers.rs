//! swift-vod's fast-peer set (seed paper 000 eq. 1–2) over real channels:
//! a peer that delivers slowly is ranked out and is not asked for urgent
//! chunks.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::{ChunkIndex, ChunkSize};

const CHUNKS: u64 = 6000;

fn config(limit: Option<u64>) -> EndpointConfig {
    EndpointConfig {
        pex_auto_connect: false,
        upload_limit: limit,
        ..EndpointConfig::default()
    }
}

/// Runs seeders 1, 2 (400 kB/s) and 3 (20 kB/s) with a leecher using
/// `picker` whose playhead follows its download; returns the fast set after
/// 3 s and the requests the slow seeder got afterwards that fell in the
/// high set (10 s = 1221 chunks from the playhead when they were picked).
fn run(picker: &str) -> (Vec<std::net::SocketAddr>, u64, u64) {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 251, cs);
    let mut net = Net::new(Duration::from_millis(20));
    // The stream needs 125 kB/s, x = 1.5 times that: one fast seeder
    // covers it.
    net.add(
        addr(1),
        seeder_endpoint(config(Some(400_000)), 1, &tree, &bytes),
    );
    net.add(
        addr(2),
        seeder_endpoint(config(Some(400_000)), 2, &tree, &bytes),
    );
    net.add(
        addr(3),
        seeder_endpoint(config(Some(20_000)), 3, &tree, &bytes),
    );
    let (mut ep, h) = leecher_endpoint(config(None), 10, &tree, picker);
    ep.set_playhead(h, Some(ChunkIndex(0)));
    for s in 1..=3 {
        ep.connect(net.now, h, addr(s));
    }
    net.add(addr(10), ep);
    net.run_for(Duration::from_secs(3), |_| false);
    let fast = net.nodes[&addr(10)].fast_peers(h);
    let playhead = Rc::new(Cell::new(0u64));
    let (urgent, asked) = (Rc::new(Cell::new(0u64)), Rc::new(Cell::new(0u64)));
    let (p, u, a) = (playhead.clone(), urgent.clone(), asked.clone());
    net.filter = Some(Box::new(move |d| {
        if d.from == addr(10) && d.to == addr(3) {
            if let Ok((_, msgs)) = decode_datagram(&d.bytes, SwarmParams::default()) {
                for m in msgs.flatten() {
                    if let Message::Request(spec) = m {
                        let Some(r) = spec.to_chunks(cs) else {
                            continue;
                        };
                        a.set(a.get() + r.len());
                        if r.first().0 < p.get() + 1221 {
                            u.set(u.get() + r.len());
                        }
                    }
                }
            }
        }
        true
    }));
    // The filter sees a request when it is delivered, one link delay
    // (20 ms, two steps) after it was picked: it is judged against the
    // playhead of three steps before, the oldest the picker may have used
    // (judged against the newest, a request picked just outside the high
    // set counted as urgent once the playhead moved on).
    let mut recent = std::collections::VecDeque::from([0u64; 3]);
    for _ in 0..300 {
        let have = net.nodes[&addr(10)].have(h).unwrap();
        let first_missing = (0..CHUNKS)
            .find(|&c| !have.contains(ChunkIndex(c)))
            .unwrap_or(CHUNKS);
        recent.push_back(first_missing);
        recent.pop_front();
        playhead.set(recent[0]);
        net.node(addr(10))
            .set_playhead(h, Some(ChunkIndex(first_missing)));
        net.run_for(Duration::from_millis(10), |_| false);
    }
    (fast, urgent.get(), asked.get())
}

#[test]
fn a_slow_peer_is_not_fast_and_is_asked_for_no_urgent_chunk() {
    let (fast, urgent, asked) = run("swift-vod");
    assert!(!fast.is_empty(), "no fast set after 3 s");
    assert!(
        !fast.contains(&addr(3)),
        "the slow seeder is fast: {fast:?}"
    );
    // It still serves the mid and low sets.
    assert!(asked > 0, "the slow seeder was asked for nothing");
    assert_eq!(urgent, 0, "{urgent} of {asked} requests to it were urgent");
}

#[test]
fn std_vod_asks_the_slow_peer_for_urgent_chunks_too() {
    // The control: without a fast set every peer gets high-set requests.
    let (fast, urgent, asked) = run("std-vod");
    assert!(fast.is_empty());
    assert!(urgent > 0, "{urgent} of {asked}");
}
