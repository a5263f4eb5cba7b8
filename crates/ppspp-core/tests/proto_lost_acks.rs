//! Lost control datagrams are not congestion. On a path that drops some of
//! the receiver's datagrams but none of the DATA:
//! - a lost ACK is repeated by the next ACK (which covers the run of
//!   chunks before it), so the sender does not take the DATA for lost and
//!   halve its window;
//! - a lost REQUEST, noticed when the peer answers requests sent after it,
//!   halves the request window as a loss, instead of restarting it from
//!   one chunk and pausing the peer as a silent one.

mod common;

use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
use ppspp_core::ChunkSize;

const CHUNKS: usize = 2000;

/// Which of the leecher's datagrams the path loses.
#[derive(Clone, Copy)]
enum Drop {
    None,
    /// Every n-th datagram carrying an ACK and no REQUEST.
    Acks(u64),
    /// Every n-th datagram carrying a REQUEST.
    Requests(u64),
}

fn carries(bytes: &[u8]) -> (bool, bool) {
    let Ok((_, msgs)) = decode_datagram(bytes, SwarmParams::default()) else {
        return (false, false);
    };
    let (mut ack, mut request) = (false, false);
    for m in msgs.flatten() {
        ack |= matches!(m, Message::Ack { .. });
        request |= matches!(m, Message::Request(_));
    }
    (ack, request)
}

/// Virtual time for the leecher to complete, one way 100 ms, the seeder
/// sending at most 400 kB/s.
fn download_time(drop: Drop) -> Duration {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS * 1024, 251, cs);
    let mut net = Net::new(Duration::from_millis(100));
    let seeder = EndpointConfig {
        upload_limit: Some(400_000),
        ..EndpointConfig::default()
    };
    net.add(addr(1), seeder_endpoint(seeder, 1, &tree, &bytes));
    let (mut ep, h) = leecher_endpoint(EndpointConfig::default(), 2, &tree, "sequential");
    ep.connect(net.now, h, addr(1));
    net.add(addr(2), ep);
    let mut seen = 0u64;
    net.filter = Some(Box::new(move |d| {
        if d.from != addr(2) {
            return true;
        }
        let (ack, request) = carries(&d.bytes);
        let (counts, every) = match drop {
            Drop::None => return true,
            Drop::Acks(n) => (ack && !request, n),
            Drop::Requests(n) => (request, n),
        };
        if !counts {
            return true;
        }
        seen += 1;
        !seen.is_multiple_of(every)
    }));
    let start = net.now;
    net.run_until(start + Duration::from_secs(600), |n| {
        n.nodes[&addr(2)].is_complete(h)
    });
    assert!(net.nodes[&addr(2)].is_complete(h), "the download completes");
    net.now - start
}

#[test]
fn lost_acks_do_not_slow_the_download() {
    let clean = download_time(Drop::None);
    let lossy = download_time(Drop::Acks(10));
    // Measured: as fast as the clean path; without repeated ACKs, 3.8
    // times as long.
    assert!(
        lossy.as_secs_f64() < clean.as_secs_f64() * 1.2,
        "clean {clean:?}, one ACK datagram in ten lost {lossy:?}"
    );
}

#[test]
fn lost_requests_are_losses_not_timeouts() {
    let clean = download_time(Drop::None);
    let lossy = download_time(Drop::Requests(20));
    // Measured: 2.9 times as long (each loss still halves the window, and
    // its chunks wait for the request timeout); taken for timeouts, 5.2.
    assert!(
        lossy.as_secs_f64() < clean.as_secs_f64() * 4.0,
        "clean {clean:?}, one REQUEST datagram in twenty lost {lossy:?}"
    );
}
