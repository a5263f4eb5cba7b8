//! `poll_timeout` never has a driver call again at the same instant
//! forever: each round of timers at one instant with no input runs a
//! channel timer that had not run at that instant yet, or the deadline
//! moves past it (issue 22; `proto/endpoint/timers.rs`).

mod common;

use std::time::Duration;

use common::{addr, Net};
use ppspp_core::proto::{EndpointConfig, Event};
use ppspp_core::time::Instant;
use ppspp_core::ChunkSize;

/// Rounds (`handle_timeout` then draining every `poll_*`) the endpoint
/// asks for at `now` before its deadline moves past it; at most `limit`.
fn rounds_at(ep: &mut ppspp_core::proto::Endpoint, now: Instant, limit: u32) -> u32 {
    let mut buf = vec![0u8; 65536];
    let mut rounds = 0;
    loop {
        while ep.poll_transmit(now, &mut buf).is_some() {}
        while ep.poll_event().is_some() {}
        if ep.poll_timeout(now).is_none_or(|t| t > now) || rounds == limit {
            return rounds;
        }
        ep.handle_timeout(now);
        rounds += 1;
    }
}

/// The smallest HANDSHAKE we accept (version and swarm id): its channel
/// asks for no more than two rounds at the instant it arrived, and none of
/// its deadlines goes stale. (An answer larger than the initiator's
/// datagram, RFC 7574 §13.2.1, now waits for a retransmission instead of
/// staying due; with SHA-1 swarm ids our answer always fits, so the unit
/// test in `proto/endpoint/timers.rs` covers the stale case itself.)
#[test]
fn a_minimal_handshake_takes_at_most_two_rounds() {
    let (data, tree) = common::content(100_000, 251, ChunkSize::DEFAULT);
    let mut ep = common::seeder_endpoint(EndpointConfig::default(), 1, &tree, &data);
    let hello = common::minimal_handshake(tree.root().as_bytes(), 77);
    let now = Instant::from_micros(1_000_000);
    ep.handle_datagram(now, addr(9), &hello);
    assert_eq!(ep.channel_count(), 1, "the handshake opened a channel");
    let rounds = rounds_at(&mut ep, now, 100);
    assert!(rounds <= 2, "{rounds} rounds at one instant");
    assert_eq!(ep.stats().stale_deadlines, 0);
    // A retransmission is answered again.
    let later = now + Duration::from_millis(500);
    ep.handle_datagram(later, addr(9), &hello);
    let mut out = vec![0u8; 65536];
    let sent = std::iter::from_fn(|| ep.poll_transmit(later, &mut out)).count();
    assert_eq!(sent, 1, "answered again");
}

/// A swarm of a seeder and three leechers over a path that loses one
/// datagram in twelve: requests time out, chunks are released and asked
/// elsewhere, channels wake each other at one instant. No instant takes
/// more than a few rounds, and no deadline goes stale.
#[test]
fn a_lossy_swarm_never_spins_at_one_instant() {
    let (data, tree) = common::content(400_000, 241, ChunkSize::DEFAULT);
    let mut net = Net::new(Duration::from_millis(15));
    net.max_idle_turns = 16;
    let config = EndpointConfig {
        upload_limit: Some(150_000),
        ..EndpointConfig::default()
    };
    net.add(addr(1), common::seeder_endpoint(config, 1, &tree, &data));
    let mut handles = Vec::new();
    for i in 2..=4u16 {
        let (ep, h) = common::leecher_endpoint(
            EndpointConfig::default(),
            u64::from(i),
            &tree,
            "rarest-first",
        );
        net.add(addr(i), ep);
        handles.push((i, h));
    }
    let mut n = 0u64;
    net.filter = Some(Box::new(move |_| {
        n += 1;
        !n.is_multiple_of(12)
    }));
    let now = net.now;
    for &(i, h) in &handles {
        net.node(addr(i)).connect(now, h, addr(1)).unwrap();
    }
    net.run_for(Duration::from_secs(120), |net| {
        handles
            .iter()
            .all(|&(i, h)| net.nodes[&addr(i)].is_complete(h))
    });
    for &(i, h) in &handles {
        assert!(net.nodes[&addr(i)].is_complete(h), "leecher {i} incomplete");
    }
    assert!(
        net.most_idle_turns <= 4,
        "{} rounds at one instant",
        net.most_idle_turns
    );
    for ep in net.nodes.values() {
        assert_eq!(ep.stats().stale_deadlines, 0);
    }
    let completes = net
        .events
        .iter()
        .filter(|(at, e)| *at != addr(1) && matches!(e, Event::Complete { .. }))
        .count();
    assert_eq!(completes, 3);
}
