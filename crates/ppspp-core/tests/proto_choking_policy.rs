//! The choking policy is chosen by name: with `unchoke-all`, a seeder
//! with one upload slot serves two leechers at once and never sends CHOKE;
//! with the default `rotation`, the same seeder serves one and chokes the
//! other (RFC 7574 §3.9).

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use common::{addr, Net};
use ppspp_core::proto::{Choking, EndpointConfig};
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::ChunkSize;

/// Chunks each leecher verified in the first 5 s, and the CHOKEs the
/// seeder sent, under `choking` with one upload slot.
fn first_seconds(choking: Choking) -> (u64, u64, usize) {
    let (data, tree) = common::content(2_000_000, 247, ChunkSize::DEFAULT);
    let seeder = EndpointConfig {
        upload_slots: 1,
        choking,
        upload_limit: Some(25_000),
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), common::seeder_endpoint(seeder, 1, &tree, &data));
    let leecher = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let (a, ah) = common::leecher_endpoint(leecher.clone(), 2, &tree, "sequential");
    let (b, bh) = common::leecher_endpoint(leecher, 3, &tree, "sequential");
    net.add(addr(2), a);
    net.add(addr(3), b);
    let chokes: Rc<RefCell<usize>> = Rc::default();
    let count = chokes.clone();
    net.filter = Some(Box::new(move |f| {
        if f.from == addr(1) {
            if let Ok((_, msgs)) = decode_datagram(&f.bytes, SwarmParams::default()) {
                *count.borrow_mut() += msgs.flatten().filter(|m| *m == Message::Choke).count();
            }
        }
        true
    }));
    let now = net.now;
    net.node(addr(2)).connect(now, ah, addr(1)).unwrap();
    net.node(addr(3)).connect(now, bh, addr(1)).unwrap();
    net.run_for(Duration::from_secs(5), |_| false);
    let verified = |at: u16, h| net.nodes[&addr(at)].swarm_stats(h).unwrap().chunks_verified;
    let chokes = *chokes.borrow();
    (verified(2, ah), verified(3, bh), chokes)
}

#[test]
fn unchoke_all_serves_every_leecher_whatever_the_slots() {
    let (a, b, chokes) = first_seconds(Choking::UnchokeAll);
    assert!(a > 0 && b > 0, "verified {a} and {b}");
    assert_eq!(chokes, 0);
}

#[test]
fn rotation_serves_one_leecher_per_slot() {
    let (a, b, chokes) = first_seconds(Choking::Rotation);
    assert!(
        (a > 0) != (b > 0),
        "one slot: one leecher served, got {a} and {b}"
    );
    assert!(chokes > 0);
}
