//! The lab reports what each peer sent, by message type, and the counts
//! agree with the payload counters kept apart from them: a peer's DATA
//! bytes are its payload bytes sent plus a 17-byte header per DATA (type,
//! a 32-bit chunk range and the timestamp), and the run's tally is the sum
//! of its peers'.

use ppspp_core::wire::{MessageTally, MessageType};
use ppspp_lab::run::run;
use ppspp_lab::scenario::Role;

const SMALL: &str = include_str!("small_swarm.toml");

#[test]
fn data_bytes_match_payload_and_the_run_sums_its_peers() {
    let o = run(SMALL, "small_swarm.toml", None, None, |_| {}).unwrap();
    let mut sum = MessageTally::default();
    for p in &o.peers {
        let t = &p.messages_sent;
        let data = t.messages(MessageType::Data);
        assert_eq!(
            t.bytes(MessageType::Data),
            p.bytes_up + 17 * data,
            "peer {}",
            p.id
        );
        if p.role == Role::Leecher {
            // Each leecher opened channels, asked for chunks and acked them.
            assert!(t.messages(MessageType::Handshake) > 0, "peer {}", p.id);
            assert!(t.messages(MessageType::Request) > 0, "peer {}", p.id);
            assert!(t.messages(MessageType::Ack) > 0, "peer {}", p.id);
        }
        sum.merge(t);
    }
    assert_eq!(o.summary.messages_sent, sum);
    // The seeder sent every chunk at least once: 200 KB in 1 KiB chunks is
    // 195 full chunks and a short one.
    let seeder = o.peers.iter().find(|p| p.role == Role::Seeder).unwrap();
    assert!(seeder.messages_sent.messages(MessageType::Data) >= 196);
}
