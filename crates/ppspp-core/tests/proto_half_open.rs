//! Handshakes that never complete (spoofed source addresses) have their own
//! small budget and a short timeout, as TCP's SYN cache: a flood of them
//! neither fills the swarm's places nor keeps an honest newcomer out
//! (issue 21, item 1: 70 spoofed handshakes every 20 s locked `get` out).

mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::{addr, content, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::proto::{CloseReason, EndpointConfig, Event};
use ppspp_core::wire::{ChannelId, DatagramWriter, HandshakeOptions, Message, SwarmParams};
use ppspp_core::ChunkSize;

/// An opening HANDSHAKE for the swarm of `tree` from channel `source`.
fn opening(tree: &MerkleTree, source: u32) -> Vec<u8> {
    let root = tree.root();
    let options = HandshakeOptions {
        version: Some(1),
        min_version: Some(1),
        swarm_id: Some(root.as_bytes()),
        ..HandshakeOptions::default()
    };
    let mut buf = vec![0u8; 1500];
    let mut w = DatagramWriter::new(&mut buf, ChannelId::ZERO, SwarmParams::default()).unwrap();
    w.push(&Message::Handshake {
        source: ChannelId(source),
        options,
    })
    .unwrap();
    let n = w.finish();
    buf.truncate(n);
    buf
}

/// A spoofed source: nobody lives there, so the answer is lost.
fn spoofed(i: u32) -> SocketAddr {
    SocketAddr::from(([198, 51, 100, (i % 250) as u8], 1000 + i as u16))
}

/// Sends `count` handshakes from spoofed addresses to the seeder.
fn flood(net: &mut Net, tree: &MerkleTree, round: u32, count: u32) {
    for i in 0..count {
        let n = round * 1000 + i;
        net.inject(spoofed(n), addr(1), opening(tree, 0x1000 + n));
    }
}

fn seeded_net(config: EndpointConfig) -> (Net, Arc<MerkleTree>) {
    let (bytes, tree) = content(40 * 1024, 251, ChunkSize::DEFAULT);
    let mut net = Net::new(Duration::from_millis(5));
    net.add(addr(1), seeder_endpoint(config, 1, &tree, &bytes));
    (net, tree)
}

#[test]
fn a_flood_of_half_open_handshakes_does_not_lock_out_a_newcomer() {
    let (mut net, tree) = seeded_net(EndpointConfig::default());
    // 70 handshakes every 20 s, as in the issue; more than the 64 places.
    flood(&mut net, &tree, 0, 70);
    net.run_for(Duration::from_millis(100), |_| false);
    let seeder = net.node(addr(1));
    let budget = EndpointConfig::default().max_half_open_per_swarm;
    assert_eq!(seeder.channel_count(), budget, "the budget caps half-open");
    // All arrived at once: none waited long enough to be pushed out.
    assert_eq!(seeder.stats().half_open_evicted, 0);

    // A newcomer arrives between two rounds, just before the second, and
    // gets everything: it pushes out a stale half-open channel, and is too
    // young to be pushed out by the second round. (Right after a round it
    // would be refused for a second; `get` tries again.)
    net.run_for(Duration::from_secs(2), |_| false);
    let (me, h) = leecher_endpoint(EndpointConfig::default(), 2, &tree, "sequential");
    net.add(addr(2), me);
    let now = net.now;
    net.node(addr(2)).connect(now, h, addr(1)).unwrap();
    // Its handshake takes 5 ms; the round comes just after.
    net.run_for(Duration::from_millis(6), |_| false);
    flood(&mut net, &tree, 1, 70);
    net.run_for(Duration::from_secs(20), |n| {
        n.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Complete { .. }))
    });
    let refused = net.events.iter().any(|(a, e)| {
        *a == addr(2)
            && matches!(
                e,
                Event::Closed {
                    reason: CloseReason::Refused,
                    ..
                }
            )
    });
    assert!(!refused, "the newcomer was refused: {:?}", net.events);
    assert!(
        net.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Complete { .. })),
        "the newcomer did not complete"
    );
    // The second round pushed out the rest of the first.
    assert_eq!(net.node(addr(1)).stats().half_open_evicted, budget as u64);
}

#[test]
fn a_burst_beyond_the_budget_is_refused_not_evicted() {
    // A flash crowd of honest handshakes within a round trip: the young
    // half-open channels are not pushed out (their third datagrams are on
    // the way); the handshakes beyond the budget are refused, so their
    // initiators know at once.
    let (mut net, tree) = seeded_net(EndpointConfig::default());
    let budget = EndpointConfig::default().max_half_open_per_swarm as u32;
    flood(&mut net, &tree, 0, budget + 4);
    net.run_for(Duration::from_millis(10), |_| false);
    let seeder = net.node(addr(1));
    assert_eq!(seeder.channel_count(), budget as usize);
    assert_eq!(seeder.stats().half_open_evicted, 0);
    // A second later the oldest may give way.
    net.run_for(Duration::from_secs(1), |_| false);
    flood(&mut net, &tree, 1, 1);
    net.run_for(Duration::from_millis(10), |_| false);
    let seeder = net.node(addr(1));
    assert_eq!(seeder.stats().half_open_evicted, 1);
    assert_eq!(seeder.channel_count(), budget as usize);
}

#[test]
fn half_open_channels_time_out_quickly() {
    let (mut net, tree) = seeded_net(EndpointConfig::default());
    let timeout = EndpointConfig::default().half_open_timeout;
    flood(&mut net, &tree, 0, 10);
    net.run_for(timeout - Duration::from_millis(100), |_| false);
    assert_eq!(net.node(addr(1)).channel_count(), 10, "still waiting");
    net.run_for(Duration::from_millis(200), |_| false);
    assert_eq!(net.node(addr(1)).channel_count(), 0, "gone at the timeout");
}

#[test]
fn a_retransmitted_handshake_is_answered_within_the_timeout() {
    // The first answer is lost; the initiator's retry (1 s later) is
    // answered and the channel completes.
    let (mut net, tree) = seeded_net(EndpointConfig::default());
    let (me, h) = leecher_endpoint(EndpointConfig::default(), 2, &tree, "sequential");
    net.add(addr(2), me);
    let mut dropped = false;
    net.filter = Some(Box::new(move |f| {
        if f.from == addr(1) && !dropped {
            dropped = true;
            return false;
        }
        true
    }));
    let now = net.now;
    net.node(addr(2)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(10), |n| {
        n.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Complete { .. }))
    });
    assert!(
        net.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Complete { .. })),
        "{:?}",
        net.events,
    );
}

#[test]
fn a_half_open_channel_that_completes_into_a_full_swarm_is_refused() {
    let config = EndpointConfig {
        max_peers_per_swarm: 1,
        ..EndpointConfig::default()
    };
    let (mut net, tree) = seeded_net(config);
    let (a, ha) = leecher_endpoint(EndpointConfig::default(), 2, &tree, "sequential");
    let (b, hb) = leecher_endpoint(EndpointConfig::default(), 3, &tree, "sequential");
    net.add(addr(2), a);
    net.add(addr(3), b);
    let now = net.now;
    // Both handshakes arrive while the swarm has room; the first third
    // datagram takes the one place, the second is refused.
    net.node(addr(2)).connect(now, ha, addr(1)).unwrap();
    net.node(addr(3)).connect(now, hb, addr(1)).unwrap();
    net.run_for(Duration::from_millis(50), |_| false);
    let open: Vec<SocketAddr> = net
        .events
        .iter()
        .filter(|(at, e)| *at == addr(1) && matches!(e, Event::Connected { .. }))
        .map(|(_, e)| match e {
            Event::Connected { peer, .. } => *peer,
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(open, [addr(2)], "one place, one peer");
    assert!(net.events.iter().any(|(at, e)| *at == addr(3)
        && matches!(
            e,
            Event::Closed {
                reason: CloseReason::ClosedByPeer | CloseReason::Refused,
                ..
            }
        )));
    assert_eq!(net.node(addr(1)).channel_count(), 1);
}
