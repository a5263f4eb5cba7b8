//! Requests as libswift makes them (wire notes, interop profile): tens of
//! thousands of chunks in one REQUEST, the same REQUEST twice, and never a
//! second try on the channel. A seeder serves all of it; a request it
//! cannot queue voids the peer's requests with CHOKE and UNCHOKE (RFC 7574
//! §3.9) instead of vanishing in part; and DATA timestamps are wall-clock
//! µs since the Unix epoch.

mod common;

use std::time::Duration;

use common::content;
use common::raw_peer::RawPeer;
use ppspp_core::proto::EndpointConfig;
use ppspp_core::ChunkSize;

#[test]
fn one_request_for_every_chunk_is_served_whole() {
    // More chunks than the old per-peer queue bound (8192) let through.
    let n = 10_000u64;
    let (bytes, tree) = content(n as usize * 1024, 251, ChunkSize::DEFAULT);
    let mut peer = RawPeer::connect(EndpointConfig::default(), &tree, &bytes);
    peer.request(&[(0, n - 1)]);
    peer.run(Duration::from_secs(30));
    assert_eq!(peer.got.len() as u64, n, "every chunk came, asked once");
    assert!(peer.got.values().all(|&c| c == 1), "no chunk came twice");
    assert!(peer.chokes.is_empty());
}

#[test]
fn a_request_made_twice_is_served_once() {
    let (bytes, tree) = content(300 * 1024, 251, ChunkSize::DEFAULT);
    let mut peer = RawPeer::connect(EndpointConfig::default(), &tree, &bytes);
    // libswift may repeat a REQUEST while the first is still queued.
    peer.request(&[(0, 299), (0, 299), (100, 199)]);
    peer.run(Duration::from_secs(5));
    assert_eq!(peer.got.len(), 300);
    assert!(peer.got.values().all(|&c| c == 1), "{:?}", peer.got);
}

#[test]
fn requests_beyond_the_queue_are_voided_then_asked_again() {
    let (bytes, tree) = content(64 * 1024, 251, ChunkSize::DEFAULT);
    let config = EndpointConfig {
        max_upload_queue_ranges: 4,
        ..EndpointConfig::default()
    };
    let mut peer = RawPeer::connect(config, &tree, &bytes);
    // Six separate ranges where four fit: the request is not cut silently.
    peer.request(&[(0, 0), (2, 2), (4, 4), (6, 6), (8, 8), (10, 10)]);
    peer.run(Duration::from_millis(500));
    assert_eq!(peer.chokes, [true, false], "CHOKE then UNCHOKE");
    // Whatever came before the CHOKE was queued; nothing after it.
    assert!(peer.got.keys().all(|&c| c <= 6), "{:?}", peer.got);
    // Asked again, as RFC 7574 §3.9 says a peer does after UNCHOKE, in a
    // form that fits, all of it comes.
    peer.request(&[(0, 63)]);
    peer.run(Duration::from_secs(2));
    assert_eq!(peer.got.len(), 64);
}

#[test]
fn data_timestamps_are_wall_clock_micros_since_the_unix_epoch() {
    let (bytes, tree) = content(20 * 1024, 251, ChunkSize::DEFAULT);
    // 2026-11-25T00:00:00Z in µs: the driver's epoch on the wall clock.
    let offset = 1_795_564_800_000_000u64;
    let config = EndpointConfig {
        wall_clock_offset: offset,
        ..EndpointConfig::default()
    };
    let mut peer = RawPeer::connect(config, &tree, &bytes);
    peer.request(&[(0, 19)]);
    peer.run(Duration::from_secs(1));
    assert_eq!(peer.got.len(), 20);
    for &(sent_at, stamp) in &peer.stamps {
        assert_eq!(stamp, sent_at.as_micros() + offset);
    }
}
