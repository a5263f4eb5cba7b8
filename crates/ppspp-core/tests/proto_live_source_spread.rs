//! A live source announces each fresh segment to its unchoked peers in
//! turns (`EndpointConfig::live_source_spread`,
//! `channel/announce/spread.rs`): each hears of its share of the segment at
//! once and of the rest after a hold, so every chunk is asked of the
//! source by the same number of peers first.

mod common;

use std::time::Duration;

use common::live::{push, receiver_of, receiver_setup, source_with, MUNRO};
use common::{addr, Net};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::time::Instant;
use ppspp_core::wire::LiveSignatureAlgorithm;
use ppspp_core::ChunkIndex;

const WINDOW: u64 = 1024;
const ALG: LiveSignatureAlgorithm = LiveSignatureAlgorithm::ED25519;
const RECEIVERS: u16 = 4;

/// The source (address 1) with `spread`, and four receivers (2-5) that
/// follow it from the stream's start, each connected to it alone (no PEX:
/// what a receiver holds came from the source); the first
/// munro is pushed and fetched by all, so that each receiver has asked the
/// source for something and holds a rank.
fn swarm(spread: f64) -> (Net, ppspp_core::proto::SwarmHandle) {
    let config = EndpointConfig {
        live_source_spread: spread,
        ..EndpointConfig::default()
    };
    let (src, h, id) = source_with(config, WINDOW, ALG);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    for r in 0..RECEIVERS {
        let setup = receiver_setup(&id, WINDOW, ALG, u64::MAX);
        let alone = EndpointConfig {
            pex_auto_connect: false,
            ..EndpointConfig::default()
        };
        let (ep, _) = receiver_of(setup, alone, 10 + u64::from(r), Instant::ZERO, &[1]);
        net.add(addr(2 + r), ep);
    }
    push(&mut net, h, 0..MUNRO);
    net.run_for(Duration::from_secs(5), |n| {
        (0..RECEIVERS).all(|r| held(n, 2 + r, 0..MUNRO).len() == MUNRO as usize)
    });
    for r in 0..RECEIVERS {
        assert_eq!(held(&net, 2 + r, 0..MUNRO).len(), MUNRO as usize);
    }
    (net, h)
}

/// The chunks of `range` receiver `at` holds.
fn held(net: &Net, at: u16, range: std::ops::Range<u64>) -> Vec<u64> {
    let ep = &net.nodes[&addr(at)];
    let h = ep.swarm_handle(0).unwrap();
    range.filter(|&c| ep.has_chunk(h, ChunkIndex(c))).collect()
}

/// How many receivers hold each chunk of `range`.
fn copies(net: &Net, range: std::ops::Range<u64>) -> Vec<usize> {
    range
        .map(|c| {
            (0..RECEIVERS)
                .filter(|&r| held(net, 2 + r, c..c + 1).len() == 1)
                .count()
        })
        .collect()
}

#[test]
fn each_chunk_of_a_fresh_segment_goes_first_to_half_the_peers() {
    let (mut net, h) = swarm(0.5);
    let segment = MUNRO..2 * MUNRO;
    push(&mut net, h, segment.clone());
    // Well within the hold (1 s): only the parts each heard of at once.
    net.run_for(Duration::from_millis(400), |_| false);
    assert_eq!(copies(&net, segment.clone()), vec![2; MUNRO as usize]);
    for r in 0..RECEIVERS {
        assert_eq!(held(&net, 2 + r, segment.clone()).len(), MUNRO as usize / 2);
    }
    // After the hold everyone hears of the rest, and fetches it.
    net.run_for(Duration::from_secs(3), |n| {
        copies(n, MUNRO..2 * MUNRO)
            .iter()
            .all(|&c| c == RECEIVERS as usize)
    });
    assert_eq!(
        copies(&net, segment),
        vec![RECEIVERS as usize; MUNRO as usize]
    );
}

#[test]
fn without_a_spread_every_peer_hears_of_every_chunk_at_once() {
    let (mut net, h) = swarm(0.0);
    let segment = MUNRO..2 * MUNRO;
    push(&mut net, h, segment.clone());
    net.run_for(Duration::from_millis(400), |_| false);
    assert_eq!(
        copies(&net, segment),
        vec![RECEIVERS as usize; MUNRO as usize]
    );
}
