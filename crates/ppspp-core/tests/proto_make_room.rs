//! A full live swarm makes room for a newcomer (`endpoint/make_room.rs`):
//! it closes the channel to the neighbour that gave it least, at most one
//! every `MAKE_ROOM_EVERY`, and only for a neighbour older than
//! `MAKE_ROOM_MIN_AGE`; without the rule, or in its pauses, the newcomer
//! is refused as before.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::live::{push, receiver_of, receiver_setup, source, MUNRO};
use common::{addr, Net};
use ppspp_core::proto::{CloseReason, EndpointConfig, Event, SwarmHandle};
use ppspp_core::wire::LiveSignatureAlgorithm;
use ppspp_core::ChunkIndex;

const ED25519: LiveSignatureAlgorithm = LiveSignatureAlgorithm::ED25519;
const WINDOW: u64 = 1024;

/// Streams for `d`: a munro made at the source every 100 ms.
fn stream_for(net: &mut Net, h: SwarmHandle, next: &mut u64, d: Duration) {
    let end = net.now + d;
    while net.now < end {
        push(net, h, *next * MUNRO..(*next + 1) * MUNRO);
        *next += 1;
        net.run_for(Duration::from_millis(100), |_| false);
    }
}

/// Whether `at` saw its channel to `peer` close for `reason`.
fn closed(net: &Net, at: SocketAddr, peer: SocketAddr, reason: CloseReason) -> bool {
    net.events.iter().any(|(a, e)| {
        *a == at
            && matches!(e, Event::Closed { peer: p, reason: r, .. } if *p == peer && *r == reason)
    })
}

/// A source (1), a receiver R (2) with two places connected to it and
/// to an idle receiver X (3) that never has anything to give: after 6 s of
/// stream a newcomer N (4) connects to R, and 500 ms later another, M
/// (5). Returns the net and N's swarm.
fn crowd(make_room: bool) -> (Net, SwarmHandle) {
    let (src, h, id) = source(WINDOW, ED25519);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    let setup = || receiver_setup(&id, WINDOW, ED25519, 2);
    let (x, _) = receiver_of(setup(), EndpointConfig::default(), 3, net.now, &[]);
    net.add(addr(3), x);
    let config = EndpointConfig {
        max_peers_per_swarm: 2,
        make_room_live: make_room,
        ..EndpointConfig::default()
    };
    let (r, _) = receiver_of(setup(), config, 2, net.now, &[1, 3]);
    net.add(addr(2), r);
    let mut next = 0;
    stream_for(&mut net, h, &mut next, Duration::from_secs(6));
    assert_eq!(net.node(addr(2)).channel_count(), 2);
    let (n, nh) = receiver_of(setup(), EndpointConfig::default(), 4, net.now, &[2]);
    net.add(addr(4), n);
    stream_for(&mut net, h, &mut next, Duration::from_millis(500));
    let (m, _) = receiver_of(setup(), EndpointConfig::default(), 5, net.now, &[2]);
    net.add(addr(5), m);
    stream_for(&mut net, h, &mut next, Duration::from_secs(1));
    (net, nh)
}

#[test]
fn a_full_live_swarm_lets_a_newcomer_in_in_place_of_the_neighbour_that_gave_least() {
    let (mut net, nh) = crowd(true);
    let r = addr(2);
    // X gave nothing, the source everything: X's channel went.
    assert!(closed(&net, r, addr(3), CloseReason::Local));
    assert!(!closed(&net, r, addr(1), CloseReason::Local));
    assert_eq!(net.node(r).stats().made_room, 1);
    // The newcomer is in, and R relays the stream to it.
    let n = net.node(addr(4));
    assert!(n.swarm_stats(nh).unwrap().live_hook_in.is_some());
    assert!(n.has_chunk(nh, ChunkIndex(65 * MUNRO)));
    // M came within `MAKE_ROOM_EVERY` of N: refused, and N (too young)
    // and the source stay.
    assert!(closed(&net, addr(5), r, CloseReason::Refused));
    assert!(!closed(&net, r, addr(4), CloseReason::Local));
    assert_eq!(net.node(r).channel_count(), 2);
}

#[test]
fn without_the_rule_a_full_live_swarm_refuses_the_newcomer() {
    let (mut net, _) = crowd(false);
    let r = addr(2);
    assert!(closed(&net, addr(4), r, CloseReason::Refused));
    assert!(closed(&net, addr(5), r, CloseReason::Refused));
    assert!(!closed(&net, r, addr(3), CloseReason::Local));
    assert_eq!(net.node(r).stats().made_room, 0);
}
