//! A swift-vod player that waits for its prebuffer asks its peers for the
//! prebuffer (the high set) and nothing else — "the initial buffer is
//! fetched aggressively" (seed paper 000 §IV-A) — and, once it plays, for
//! what comes after it.

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use common::{addr, leecher_with_picker, seeder_endpoint, Net};
use ppspp_core::pick::swift_vod::SwiftVod;
use ppspp_core::pick::MediaRate;
use ppspp_core::proto::EndpointConfig;
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::{ChunkIndex, ChunkSize};

const CHUNKS: u64 = 3000;
/// The high set: chunks 0..HIGH from the playhead at 0.
const HIGH: u64 = 100;

fn config() -> EndpointConfig {
    EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    }
}

/// The chunks a datagram's REQUESTs ask for.
fn requested(bytes: &[u8], cs: ChunkSize) -> Vec<u64> {
    let Ok((_, msgs)) = decode_datagram(bytes, SwarmParams::default()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in msgs.flatten() {
        if let Message::Request(spec) = m {
            if let Some(r) = spec.to_chunks(cs) {
                out.extend(r.first().0..=r.last().0);
            }
        }
    }
    out
}

#[test]
fn a_prebuffering_player_asks_only_for_its_prebuffer_until_it_plays() {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 7, cs);
    let mut net = Net::new(Duration::from_millis(20));
    net.add(addr(1), seeder_endpoint(config(), 1, &tree, &bytes));
    net.add(addr(2), seeder_endpoint(config(), 2, &tree, &bytes));
    let picker = SwiftVod::with_windows(MediaRate::default(), HIGH, 2 * HIGH);
    let (mut ep, h) = leecher_with_picker(config(), 10, &tree, Box::new(picker));
    ep.set_playhead(h, Some(ChunkIndex(0)));
    ep.set_player_waiting(h, true);
    ep.connect(net.now, h, addr(1));
    ep.connect(net.now, h, addr(2));
    net.add(addr(10), ep);
    let asked: Rc<RefCell<Vec<u64>>> = Rc::default();
    let log = asked.clone();
    net.filter = Some(Box::new(move |d| {
        if d.from == addr(10) {
            log.borrow_mut().extend(requested(&d.bytes, cs));
        }
        true
    }));
    // Long enough for the whole prebuffer, and then some: a picker that
    // goes on to the mid and low sets once the high set is all asked
    // would have asked for more by now.
    let start = net.now;
    net.run_for(Duration::from_secs(2), |_| false);
    let have = net.nodes[&addr(10)].have(h).unwrap();
    assert!(
        (0..HIGH).all(|c| have.contains(ChunkIndex(c))),
        "the prebuffer did not arrive"
    );
    let beyond: Vec<u64> = asked
        .borrow()
        .iter()
        .copied()
        .filter(|&c| c >= HIGH)
        .collect();
    assert!(
        beyond.is_empty(),
        "asked {} chunks beyond the prebuffer, first {:?}",
        beyond.len(),
        &beyond[..beyond.len().min(8)]
    );
    assert!(asked.borrow().len() as u64 >= HIGH);
    // The player starts: the peers are asked for the rest.
    net.node(addr(10)).set_player_waiting(h, false);
    net.run_for(Duration::from_secs(1), |_| false);
    assert!(
        asked.borrow().iter().any(|&c| c >= HIGH),
        "nothing beyond the prebuffer asked once playing"
    );
    assert!(net.now >= start + Duration::from_secs(3));
}
