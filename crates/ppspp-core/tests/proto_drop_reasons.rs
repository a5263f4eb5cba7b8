//! Every datagram the endpoint drops is counted under why (issue 22): too
//! short, an unknown channel, an undecodable header, channel 0 without a
//! HANDSHAKE, a refused HANDSHAKE, a malformed message.

mod common;

use common::{addr, datagram};
use ppspp_core::proto::{DropCounts, EndpointConfig};
use ppspp_core::time::Instant;
use ppspp_core::wire::{decode_datagram, ChannelId, Message, SwarmParams};
use ppspp_core::ChunkSize;

#[test]
fn each_dropped_datagram_is_counted_under_its_reason() {
    let (data, tree) = common::content(50_000, 251, ChunkSize::DEFAULT);
    let mut ep = common::seeder_endpoint(EndpointConfig::default(), 1, &tree, &data);
    let now = Instant::from_micros(1_000_000);
    let root = tree.root();
    let hello = common::minimal_handshake;
    // Too short.
    ep.handle_datagram(now, addr(2), &[0, 0]);
    // A channel we do not have.
    ep.handle_datagram(now, addr(2), &datagram(ChannelId(12345), &[]));
    // Channel 0 opening with something else than a HANDSHAKE.
    ep.handle_datagram(now, addr(2), &datagram(ChannelId::ZERO, &[Message::Choke]));
    // A HANDSHAKE for a swarm we do not serve: refused.
    ep.handle_datagram(now, addr(2), &hello(&[9u8; 20], 5));
    // An open channel, then a datagram on it whose message does not
    // decode (an unknown message type).
    ep.handle_datagram(now, addr(3), &hello(root.as_bytes(), 6));
    let mut buf = vec![0u8; 65536];
    let mut ours = None;
    while let Some(t) = ep.poll_transmit(now, &mut buf) {
        if t.destination != addr(3) {
            continue;
        }
        // Our answer names our channel as its HANDSHAKE's source.
        let (_, mut msgs) = decode_datagram(&buf[..t.len], SwarmParams::default()).unwrap();
        if let Some(Ok(Message::Handshake { source, .. })) = msgs.next() {
            ours = Some(source);
        }
    }
    let ours = ours.expect("answered");
    // A message type nobody defines.
    let mut bad = ours.0.to_be_bytes().to_vec();
    bad.push(0xEE);
    ep.handle_datagram(now, addr(3), &bad);
    let counts = ep.stats().dropped.clone();
    assert_eq!(
        counts,
        DropCounts {
            too_short: 1,
            unknown_channel: 1,
            undecodable: 0,
            not_a_handshake: 1,
            refused: 1,
            malformed: 1,
        }
    );
    assert_eq!(ep.stats().datagrams_dropped, counts.total());
}
