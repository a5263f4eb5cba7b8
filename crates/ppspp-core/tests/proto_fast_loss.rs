//! A chunk whose DATA datagram is lost is asked again as soon as the peer
//! has answered three requests sent after it (`EndpointConfig::
//! loss_threshold`; peers serve requests in order), not after the request
//! timeout of at least 500 ms.

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::time::Instant;
use ppspp_core::wire::{decode_datagram, ChunkSpec, Message, SwarmParams};
use ppspp_core::ChunkSize;

const CHUNKS: u64 = 400;
/// The chunk whose first DATA is lost.
const LOST: u64 = 150;

/// The chunk ranges of one kind of message in a datagram.
fn specs(bytes: &[u8], cs: ChunkSize, data: bool) -> Vec<(u64, u64)> {
    let Ok((_, msgs)) = decode_datagram(bytes, SwarmParams::default()) else {
        return Vec::new();
    };
    let spec_of = |m: Message<'_>| -> Option<ChunkSpec> {
        match m {
            Message::Data { spec, .. } if data => Some(spec),
            Message::Request(spec) if !data => Some(spec),
            _ => None,
        }
    };
    msgs.flatten()
        .filter_map(spec_of)
        .filter_map(|s| s.to_chunks(cs))
        .map(|r| (r.first().0, r.last().0))
        .collect()
}

/// How long after chunk `LOST`'s DATA was dropped the leecher asked for it
/// again, and whether the download completed.
fn reask_delay(loss_threshold: u64) -> (Duration, bool) {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 7, cs);
    let config = EndpointConfig {
        pex_auto_connect: false,
        loss_threshold,
        ..EndpointConfig::default()
    };
    let mut net = Net::new(Duration::from_millis(20));
    net.add(addr(1), seeder_endpoint(config.clone(), 1, &tree, &bytes));
    let (mut ep, h) = leecher_endpoint(config, 10, &tree, "linear");
    ep.connect(net.now, h, addr(1));
    net.add(addr(10), ep);
    let dropped: Rc<Cell<Option<Instant>>> = Rc::default();
    let reasked: Rc<Cell<Option<Instant>>> = Rc::default();
    let holds = |r: &(u64, u64)| r.0 <= LOST && LOST <= r.1;
    let start = net.now;
    while net.now < start + Duration::from_secs(20) {
        let now = net.now;
        let (d, a) = (dropped.clone(), reasked.clone());
        net.filter = Some(Box::new(move |dg| {
            if dg.from == addr(1)
                && d.get().is_none()
                && specs(&dg.bytes, cs, true).iter().any(holds)
            {
                d.set(Some(now));
                return false;
            }
            if dg.from == addr(10)
                && d.get().is_some()
                && a.get().is_none()
                && specs(&dg.bytes, cs, false).iter().any(holds)
            {
                a.set(Some(now));
            }
            true
        }));
        net.run_for(Duration::from_millis(1), |_| false);
        if net.nodes[&addr(10)].have(h).unwrap().count() == CHUNKS {
            break;
        }
    }
    let complete = net.nodes[&addr(10)].have(h).unwrap().count() == CHUNKS;
    let drop = dropped.get().expect("the DATA was dropped");
    let again = reasked.get().expect("the chunk was asked again");
    (again.saturating_since(drop), complete)
}

#[test]
fn a_lost_data_is_asked_again_within_a_round_trip() {
    let (fast, complete) = reask_delay(3);
    assert!(complete);
    // The three DATA after it reach the leecher soon after (52 ms from
    // the drop to the new REQUEST when this was written).
    assert!(
        fast < Duration::from_millis(100),
        "asked again after {fast:?}"
    );
    // Without the rule only the request timeout finds the loss.
    let (slow, complete) = reask_delay(0);
    assert!(complete);
    assert!(
        slow >= Duration::from_millis(400),
        "asked again after {slow:?}"
    );
}
