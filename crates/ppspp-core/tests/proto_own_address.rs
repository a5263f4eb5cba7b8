//! A node never talks to itself: addresses the driver names as ours are
//! refused, an address found to be ours (our handshake came back) is
//! closed and never tried again, and PEX answers naming us are ignored
//! (libswift's PEX can return the address of the peer it answers).

mod common;

use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::time::Duration;

use common::{addr, content, leecher_endpoint, seeder_endpoint, InFlight, Net};
use ppspp_core::proto::{CloseReason, EndpointConfig, Event};
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::ChunkSize;

#[test]
fn a_handshake_that_comes_back_is_ours() {
    let (_, tree) = content(50 * 1024, 251, ChunkSize::DEFAULT);
    let (me, h) = leecher_endpoint(EndpointConfig::default(), 1, &tree, "sequential");
    let mut net = Net::new(Duration::from_millis(5));
    net.add(addr(3), me);
    let now = net.now;
    // The user (or a tracker) names our own address: the handshake reaches
    // us, and we recognise our channel id in it.
    assert!(net.node(addr(3)).connect(now, h, addr(3)).is_some());
    net.run_for(Duration::from_secs(10), |_| false);
    let closed: Vec<&Event> = net
        .events
        .iter()
        .map(|(_, e)| e)
        .filter(|e| matches!(e, Event::Closed { .. } | Event::Connected { .. }))
        .collect();
    assert_eq!(
        closed,
        [&Event::Closed {
            swarm: h,
            peer: addr(3),
            reason: CloseReason::OwnAddress
        }]
    );
    let ep = net.node(addr(3));
    assert_eq!(ep.stats().own_address_handshakes, 1);
    assert_eq!(ep.channel_count(), 0);
    assert!(ep.is_own_address(addr(3)));
    // Never tried again.
    assert_eq!(ep.connect(now, h, addr(3)), None);
}

#[test]
fn named_own_addresses_and_pex_answers_naming_us_are_skipped() {
    let (bytes, tree) = content(50 * 1024, 251, ChunkSize::DEFAULT);
    let seeder = seeder_endpoint(EndpointConfig::default(), 1, &tree, &bytes);
    let (mut me, h) = leecher_endpoint(EndpointConfig::default(), 2, &tree, "sequential");
    let (other, h2) = leecher_endpoint(EndpointConfig::default(), 3, &tree, "sequential");
    // We are reachable at addr(3) and, say through a NAT, at addr(4):
    // where the seeder knows another peer.
    me.add_own_address(addr(3));
    me.add_own_address(addr(4));
    let mut net = Net::new(Duration::from_millis(5));
    net.add(addr(1), seeder);
    net.add(addr(3), me);
    net.add(addr(4), other);
    // Count the PEX answers naming addr(4) that reach us.
    let told = Rc::new(Cell::new(0u32));
    let seen = told.clone();
    net.filter = Some(Box::new(move |f: &InFlight| {
        if f.to == addr(3) {
            let params = SwarmParams {
                chunk_size: Some(1024),
                ..SwarmParams::default()
            };
            if let Ok((_, msgs)) = decode_datagram(&f.bytes, params) {
                let named = msgs
                    .flatten()
                    .filter(|m| matches!(m, Message::PexResV4(a) if SocketAddr::V4(*a) == addr(4)))
                    .count();
                seen.set(seen.get() + named as u32);
            }
        }
        true
    }));
    let now = net.now;
    assert_eq!(net.node(addr(3)).connect(now, h, addr(3)), None);
    assert_eq!(net.node(addr(3)).connect(now, h, addr(4)), None);
    net.node(addr(4)).connect(now, h2, addr(1)).unwrap();
    net.run_for(Duration::from_millis(200), |_| false);
    // The seeder knows addr(4) now and tells it to whoever asks.
    let now = net.now;
    net.node(addr(3)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(5), |n| n.nodes[&addr(3)].is_complete(h));
    assert!(net.nodes[&addr(3)].is_complete(h));
    let learned: Vec<_> = net
        .events
        .iter()
        .filter(|(at, e)| *at == addr(3) && matches!(e, Event::PeerAddress { .. }))
        .collect();
    assert!(told.get() > 0, "the seeder named addr(4) to us");
    assert!(learned.is_empty(), "{learned:?}");
    assert_eq!(net.nodes[&addr(3)].stats().own_address_handshakes, 0);
    let ours = net.nodes[&addr(3)].swarm_stats(h).unwrap();
    assert_eq!(ours.peers.keys().copied().collect::<Vec<_>>(), [addr(1)]);
}
