//! A peer is never sent what it announces it has: a HAVE takes the chunks
//! out of our upload queue. A DATA the receiver answers with a HAVE (libswift does for a chunk it
//! has already) leaves the sender's flight instead of waiting for an ACK
//! that never comes (issue 20: 100 MB to libswift stalled for 11–17 s in
//! retransmission timeouts). A whole window lost at once costs one timeout:
//! `InFlight::on_rto`'s unit test.

mod common;

use std::time::Duration;

use common::content;
use common::raw_peer::RawPeer;
use ppspp_core::proto::EndpointConfig;
use ppspp_core::time::Instant;
use ppspp_core::wire::Message;
use ppspp_core::{ChunkRange, ChunkSize};

/// The longest time between two DATA arriving after `from`.
fn longest_gap(arrivals: &[Instant], from: Instant) -> Duration {
    let after: Vec<Instant> = arrivals.iter().copied().filter(|&t| t >= from).collect();
    after
        .windows(2)
        .map(|w| w[1] - w[0])
        .max()
        .unwrap_or_default()
}

#[test]
fn a_have_answering_data_frees_the_window() {
    let (bytes, tree) = content(3000 * 1024, 251, ChunkSize::DEFAULT);
    let mut peer = RawPeer::connect(EndpointConfig::default(), &tree, &bytes);
    peer.have_for_duplicates = true;
    // Ask for the first 1000 chunks, then for all of them again once they
    // are here: every second copy is answered with a HAVE, never an ACK.
    peer.request(&[(0, 999)]);
    peer.run(Duration::from_secs(3));
    assert_eq!(peer.got.len(), 1000);
    peer.request(&[(0, 2999)]);
    let again = peer.now;
    peer.run(Duration::from_secs(10));
    assert_eq!(peer.got.len(), 3000, "everything came");
    // Waiting for ACKs of the duplicates ran into retransmission timeouts,
    // doubling, before the new chunks came.
    let gap = longest_gap(&peer.arrivals, again);
    assert!(gap < Duration::from_millis(500), "DATA stopped for {gap:?}");
}

#[test]
fn chunks_a_peer_announces_leave_the_upload_queue() {
    let (bytes, tree) = content(3000 * 1024, 251, ChunkSize::DEFAULT);
    let mut peer = RawPeer::connect(EndpointConfig::default(), &tree, &bytes);
    // It asks for everything, then says it has the last 2000 chunks (from
    // another peer, say) before any of them could be sent.
    peer.say(&[
        Message::Request(ChunkRange::new(0u64, 2999u64).unwrap().into()),
        Message::Have(ChunkRange::new(1000u64, 2999u64).unwrap().into()),
    ]);
    peer.run(Duration::from_secs(5));
    assert_eq!(peer.got.len(), 1000);
    assert_eq!(
        peer.got.keys().next_back(),
        Some(&999),
        "a chunk it had came"
    );
}
