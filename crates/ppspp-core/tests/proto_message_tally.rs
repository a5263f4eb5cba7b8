//! The endpoint counts what it sends by message type, and the count adds up
//! to the bytes it sent: every datagram is its 4-byte channel id plus its
//! messages, so a path that wrote a datagram without counting it would
//! break the sum.

mod common;

use std::time::Duration;

use common::{addr, content, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::{EndpointConfig, Event};
use ppspp_core::wire::MessageType;
use ppspp_core::ChunkSize;

#[test]
fn messages_sent_add_up_to_the_bytes_sent() {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = content(200 * 1024 + 17, 251, cs);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(
        addr(1),
        seeder_endpoint(EndpointConfig::default(), 1, &tree, &bytes),
    );
    let (leech, h) = leecher_endpoint(EndpointConfig::default(), 2, &tree, "sequential");
    net.add(addr(2), leech);
    let now = net.now;
    net.node(addr(2)).connect(now, h, addr(1)).unwrap();
    net.run_for(Duration::from_secs(60), |n| {
        n.events
            .iter()
            .any(|(a, e)| *a == addr(2) && matches!(e, Event::Complete { .. }))
    });
    assert!(net.nodes[&addr(2)].is_complete(h));

    for at in [addr(1), addr(2)] {
        let s = net.nodes[&at].stats();
        assert!(s.datagrams_sent > 0);
        assert_eq!(
            s.messages_sent.total_bytes() + 4 * s.datagrams_sent,
            s.bytes_sent,
            "{at}: {:?}",
            s.messages_sent
        );
        assert_eq!(s.messages_sent.messages(MessageType::Handshake), 1, "{at}");
    }
    let seeder = &net.nodes[&addr(1)].stats().messages_sent;
    // A clean link: every chunk went out once, each DATA its payload plus a
    // header of 1 + 8 (chunk range) + 8 (timestamp) bytes.
    let chunks = tree.chunk_count();
    assert_eq!(seeder.messages(MessageType::Data), chunks);
    assert_eq!(
        seeder.bytes(MessageType::Data),
        bytes.len() as u64 + 17 * chunks
    );
    assert!(seeder.messages(MessageType::Integrity) > 0);
    let leecher = &net.nodes[&addr(2)].stats().messages_sent;
    assert_eq!(leecher.messages(MessageType::Data), 0);
    assert!(leecher.messages(MessageType::Ack) > 0);
    assert!(leecher.messages(MessageType::Request) > 0);
}
