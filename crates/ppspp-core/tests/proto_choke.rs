//! Upload slots: with one slot, a seeder serves one leecher at a time,
//! chokes the other, and hands the slot over in turn; both complete
//! (RFC 7574 §3.9).

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use common::{addr, Net};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmHandle, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::{ChunkSize, HashFunction};

/// 2 MB of content, its tree, and a seeder's config with one upload slot
/// and 25 kB/s, so that serving one leecher takes over a minute.
fn one_slot(modulus: usize) -> (Vec<u8>, Arc<MerkleTree>, EndpointConfig) {
    let (data, tree) = common::content(2_000_000, modulus, ChunkSize::DEFAULT);
    let config = EndpointConfig {
        upload_slots: 1,
        upload_limit: Some(25_000),
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    (data, tree, config)
}

/// A one-slot seeder (at `addr(1)`, see [`one_slot`]) and two leechers at
/// `addr(2)` and `addr(3)`, not connected yet; their swarm handles.
fn seeder_and_two_leechers(modulus: usize) -> (Net, SwarmHandle, SwarmHandle) {
    let (data, tree, config) = one_slot(modulus);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), common::seeder_endpoint(config, 1, &tree, &data));
    let leecher_config = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let (first, fh) = common::leecher_endpoint(leecher_config.clone(), 2, &tree, "sequential");
    let (second, sh) = common::leecher_endpoint(leecher_config, 3, &tree, "sequential");
    net.add(addr(2), first);
    net.add(addr(3), second);
    (net, fh, sh)
}

#[test]
fn one_slot_is_shared_in_turns() {
    let (data, tree, config) = one_slot(249);
    let cs = ChunkSize::DEFAULT;
    let mut seeder = Endpoint::new(config, 1);
    seeder
        .add_swarm(
            Instant::ZERO,
            SwarmSetup::seed(
                tree.clone(),
                Box::new(MemoryStorage::with_content(cs, data.clone())),
                pick::by_name("sequential").unwrap(),
            ),
        )
        .unwrap();
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), seeder);
    let leecher_config = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let mut handles = Vec::new();
    for i in [2u16, 3] {
        let setup = SwarmSetup::download(
            tree.root(),
            HashFunction::Sha1,
            cs,
            None,
            Box::new(MemoryStorage::empty(cs)),
            pick::by_name("sequential").unwrap(),
        )
        .unwrap();
        let mut ep = Endpoint::new(leecher_config.clone(), u64::from(i));
        handles.push(ep.add_swarm(Instant::ZERO, setup).unwrap());
        net.add(addr(i), ep);
    }
    // Watch CHOKE/UNCHOKE from the seeder: (leecher, choke?).
    let seen: Rc<RefCell<Vec<(std::net::SocketAddr, bool)>>> = Rc::default();
    let log = seen.clone();
    net.filter = Some(Box::new(move |f| {
        if f.from == addr(1) {
            if let Ok((_, msgs)) = decode_datagram(&f.bytes, SwarmParams::default()) {
                for m in msgs.flatten() {
                    match m {
                        Message::Choke => log.borrow_mut().push((f.to, true)),
                        Message::Unchoke => log.borrow_mut().push((f.to, false)),
                        _ => {}
                    }
                }
            }
        }
        true
    }));
    let now = net.now;
    for (i, h) in [2u16, 3].into_iter().zip(&handles) {
        net.node(addr(i)).connect(now, *h, addr(1)).unwrap();
    }
    net.run_for(Duration::from_secs(400), |n| {
        n.nodes[&addr(2)].is_complete(handles[0]) && n.nodes[&addr(3)].is_complete(handles[1])
    });
    assert!(net.nodes[&addr(2)].is_complete(handles[0]));
    assert!(net.nodes[&addr(3)].is_complete(handles[1]));
    let events = seen.borrow();
    // Both were choked at some point and unchoked again: the slot rotated.
    for i in [2u16, 3] {
        assert!(
            events.contains(&(addr(i), true)),
            "{i} never choked: {events:?}"
        );
        assert!(
            events.contains(&(addr(i), false)),
            "{i} never unchoked: {events:?}"
        );
    }
    // Each leecher got a share from the seeder.
    let seeder_swarm = net.nodes[&addr(1)].swarm_handle(0).unwrap();
    let stats = net.nodes[&addr(1)].swarm_stats(seeder_swarm).unwrap();
    for i in [2u16, 3] {
        let got = stats.peers[&addr(i)].payload_bytes_sent;
        assert!(
            got >= data.len() as u64,
            "leecher {i} got {got} from the seeder"
        );
    }
}

/// With one slot: the first leecher stops asking (its requests are lost
/// from 3 s on) while the second waits choked. The slot must go to the
/// waiting one once the first is idle, well before the 30 s rotation.
#[test]
fn an_idle_slot_goes_to_a_waiting_peer() {
    let (mut net, fh, sh) = seeder_and_two_leechers(241);
    let now = net.now;
    net.node(addr(2)).connect(now, fh, addr(1)).unwrap();
    net.run_for(Duration::from_millis(500), |_| false);
    let now = net.now;
    net.node(addr(3)).connect(now, sh, addr(1)).unwrap();
    net.run_for(Duration::from_millis(2500), |_| false);
    let verified =
        |net: &Net, at: u16, h| net.nodes[&addr(at)].swarm_stats(h).unwrap().chunks_verified;
    assert!(verified(&net, 2, fh) > 0, "the first leecher got nothing");
    assert_eq!(
        verified(&net, 3, sh),
        0,
        "the slot was not the first's alone"
    );
    // From now on the first leecher's requests never arrive.
    let silent_from = net.now;
    let params = SwarmParams::default();
    net.filter = Some(Box::new(move |f| {
        let request = f.from == addr(2)
            && decode_datagram(&f.bytes, params)
                .is_ok_and(|(_, msgs)| msgs.flatten().any(|m| matches!(m, Message::Request(_))));
        !request
    }));
    net.run_for(Duration::from_secs(60), |n| verified(n, 3, sh) > 0);
    let waited = net.now.saturating_since(silent_from);
    assert!(
        verified(&net, 3, sh) > 0,
        "the second leecher never got the slot"
    );
    // Idle after IDLE (5 s), noticed at the next rechoke (every 10 s).
    assert!(
        waited < Duration::from_secs(20),
        "the second leecher waited {waited:?}"
    );
}

/// With one slot held by a leecher that keeps asking: a second leecher
/// arriving after the first has held the slot for over 5 s (`choke`'s
/// NEWCOMER_HOLD) takes it at once, not at the 30 s rotation; the first is
/// choked.
#[test]
fn a_newcomer_takes_the_slot_held_longest() {
    let (mut net, fh, sh) = seeder_and_two_leechers(239);
    let choked: Rc<RefCell<Vec<std::net::SocketAddr>>> = Rc::default();
    let log = choked.clone();
    net.filter = Some(Box::new(move |f| {
        if f.from == addr(1) {
            if let Ok((_, msgs)) = decode_datagram(&f.bytes, SwarmParams::default()) {
                if msgs.flatten().any(|m| matches!(m, Message::Choke)) {
                    log.borrow_mut().push(f.to);
                }
            }
        }
        true
    }));
    let now = net.now;
    net.node(addr(2)).connect(now, fh, addr(1)).unwrap();
    net.run_for(Duration::from_secs(6), |_| false);
    let verified =
        |net: &Net, at: u16, h| net.nodes[&addr(at)].swarm_stats(h).unwrap().chunks_verified;
    let first_got = verified(&net, 2, fh);
    assert!(first_got > 0, "the first leecher got nothing");
    assert!(
        !net.nodes[&addr(2)].is_complete(fh),
        "the first leecher is done already: the test needs it to keep asking"
    );
    let now = net.now;
    net.node(addr(3)).connect(now, sh, addr(1)).unwrap();
    net.run_for(Duration::from_secs(3), |_| false);
    assert!(
        verified(&net, 3, sh) > 0,
        "the newcomer got nothing in 3 s: it waited for the rotation"
    );
    assert!(
        choked.borrow().contains(&addr(2)),
        "the first leecher kept its slot: {:?}",
        choked.borrow()
    );
}

/// A peer that let its slot go idle is a newcomer again when it asks
/// again. With one slot: the returning leecher loses the slot to one that
/// connected earlier (the peer unchoked longest keeps it), so without
/// being a newcomer it would wait for the rotation (30 s); as a newcomer it
/// takes the slot back as soon as the other has held it 5 s.
#[test]
fn a_peer_back_from_idle_is_a_newcomer_again() {
    let (mut net, eh, bh) = seeder_and_two_leechers(233);
    // Which leechers' REQUESTs are lost.
    let silent: Rc<RefCell<Vec<std::net::SocketAddr>>> = Rc::new(RefCell::new(vec![addr(2)]));
    let gate = silent.clone();
    let params = SwarmParams::default();
    net.filter = Some(Box::new(move |f| {
        let request = decode_datagram(&f.bytes, params)
            .is_ok_and(|(_, msgs)| msgs.flatten().any(|m| matches!(m, Message::Request(_))));
        !(request && gate.borrow().contains(&f.from))
    }));
    let verified =
        |net: &Net, at: u16, h| net.nodes[&addr(at)].swarm_stats(h).unwrap().chunks_verified;
    // The early leecher connects first but asks for nothing yet.
    let now = net.now;
    net.node(addr(2)).connect(now, eh, addr(1)).unwrap();
    net.run_for(Duration::from_millis(500), |_| false);
    let now = net.now;
    net.node(addr(3)).connect(now, bh, addr(1)).unwrap();
    net.run_for(Duration::from_millis(2500), |_| false);
    assert!(verified(&net, 3, bh) > 0, "the slot was not taken");
    // It goes idle; then the early one asks and gets the slot.
    silent.borrow_mut().push(addr(3));
    net.run_for(Duration::from_secs(8), |_| false);
    *silent.borrow_mut() = vec![addr(3)];
    net.run_for(Duration::from_secs(30), |n| verified(n, 2, eh) > 0);
    assert!(
        verified(&net, 2, eh) > 0,
        "the early leecher never got the slot"
    );
    net.run_for(Duration::from_secs(6), |_| false);
    // The idle one asks again (its requests were lost, so within a
    // request timeout or two).
    silent.borrow_mut().clear();
    let before = verified(&net, 3, bh);
    let from = net.now;
    net.run_for(Duration::from_secs(30), |n| verified(n, 3, bh) > before);
    let waited = net.now.saturating_since(from);
    assert!(verified(&net, 3, bh) > before, "it never got the slot back");
    assert!(
        waited < Duration::from_secs(8),
        "it waited {waited:?}: queued as if it had held the slot all along"
    );
}
