//! swift-vod's request deadlines (seed paper 000 §III-C): an urgent
//! request not answered by its deadline is asked of another peer too,
//! long before the request timeout gives up on it — but not while the
//! player prebuffers, when nothing has a play time yet.

mod common;

use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::{EndpointConfig, SwarmHandle};
use ppspp_core::{ChunkIndex, ChunkSize};

const CHUNKS: u64 = 3000;

fn config() -> EndpointConfig {
    EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    }
}

/// A swift-vod leecher whose player plays (or, with `prebuffering`, waits
/// for its prebuffer), connected to seeder 1 and to seeder 2 (sending at
/// most `limit` bytes/s), over 20 ms one way.
fn leecher(limit: Option<u64>, prebuffering: bool) -> (Net, SwarmHandle, ChunkSize) {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 251, cs);
    let mut net = Net::new(Duration::from_millis(20));
    net.add(addr(1), seeder_endpoint(config(), 1, &tree, &bytes));
    let second = EndpointConfig {
        upload_limit: limit,
        ..config()
    };
    net.add(addr(2), seeder_endpoint(second, 2, &tree, &bytes));
    let (mut ep, h) = leecher_endpoint(config(), 10, &tree, "swift-vod");
    ep.set_playhead(h, Some(ChunkIndex(0)));
    ep.set_player_waiting(h, prebuffering);
    ep.connect(net.now, h, addr(1));
    ep.connect(net.now, h, addr(2));
    net.add(addr(10), ep);
    (net, h, cs)
}

/// What a datagram from the leecher asks: each chunk of its REQUESTs
/// (`true`) and of its CANCELs (`false`).
fn asks(bytes: &[u8], cs: ChunkSize) -> Vec<(bool, u64)> {
    use ppspp_core::wire::{decode_datagram, Message, SwarmParams};
    let Ok((_, msgs)) = decode_datagram(bytes, SwarmParams::default()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for m in msgs.flatten() {
        let (request, spec) = match m {
            Message::Request(spec) => (true, spec),
            Message::Cancel(spec) => (false, spec),
            _ => continue,
        };
        if let Some(r) = spec.to_chunks(cs) {
            out.extend((r.first().0..=r.last().0).map(|c| (request, c)));
        }
    }
    out
}

#[test]
fn a_late_urgent_request_goes_to_another_peer_before_the_timeout() {
    let (mut net, h, _) = leecher(Some(150_000), false);
    // Seeder 1 answers at first (a 40 ms round trip), then everything it
    // sends is lost: its requests time out only after ≥ 500 ms, but each
    // urgent one is due about a round trip after it was sent.
    let start = net.now;
    let hole = (
        start + Duration::from_millis(500),
        start + Duration::from_secs(30),
    );
    let mut longest_wait = Duration::ZERO;
    let (mut last, mut last_move) = (0, start);
    while last < CHUNKS && net.now < start + Duration::from_secs(60) {
        let now = net.now;
        net.filter = Some(Box::new(move |d| {
            !(d.from == addr(1) && now >= hole.0 && now < hole.1)
        }));
        net.run_for(Duration::from_millis(10), |_| false);
        let have = net.nodes[&addr(10)].have(h).unwrap();
        let f = (0..CHUNKS)
            .find(|&c| !have.contains(ChunkIndex(c)))
            .unwrap_or(CHUNKS);
        if f != last {
            (last, last_move) = (f, net.now);
        }
        longest_wait = longest_wait.max(net.now.saturating_since(last_move));
        net.node(addr(10)).set_playhead(h, Some(ChunkIndex(f)));
    }
    assert_eq!(last, CHUNKS, "the download did not complete in 60 s");
    // The request timeout alone (≥ 500 ms, then the pause) made the next
    // chunk wait well over half a second each time seeder 1 had it.
    assert!(
        longest_wait < Duration::from_millis(400),
        "the next chunk waited {longest_wait:?}"
    );
}

/// A request doubled for lateness is cancelled where it was late as soon as
/// the other copy arrives: long before the request timeout would cancel it.
#[test]
fn the_late_copy_is_cancelled_when_the_other_arrives() {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::rc::Rc;
    let (mut net, _, cs) = leecher(None, false);
    // When each chunk was last asked of seeder 1, and how long after that
    // each CANCEL of it went out.
    let asked: Rc<RefCell<BTreeMap<u64, ppspp_core::time::Instant>>> = Rc::default();
    let ages: Rc<RefCell<Vec<Duration>>> = Rc::default();
    let start = net.now;
    let hole = (
        start + Duration::from_millis(500),
        start + Duration::from_millis(1500),
    );
    while net.now < start + Duration::from_secs(3) {
        let now = net.now;
        let (a, g) = (asked.clone(), ages.clone());
        net.filter = Some(Box::new(move |d| {
            if d.from == addr(10) && d.to == addr(1) {
                for (request, c) in asks(&d.bytes, cs) {
                    if request {
                        a.borrow_mut().insert(c, now);
                    } else if let Some(&at) = a.borrow().get(&c) {
                        g.borrow_mut().push(now.saturating_since(at));
                    }
                }
            }
            // Seeder 1 goes silent for a second.
            !(d.from == addr(1) && now >= hole.0 && now < hole.1)
        }));
        net.run_for(Duration::from_millis(5), |_| false);
    }
    let ages = ages.borrow();
    let quick = ages
        .iter()
        .filter(|&&a| a < Duration::from_millis(400))
        .count();
    // The request timeout is at least 500 ms: a CANCEL sooner than that
    // after the request came from the other copy's arrival.
    assert!(quick > 0, "CANCEL ages at seeder 1: {ages:?}");
}

/// Requests sent while the player prebuffers carry no deadline: a peer
/// that is slow to answer for a moment is not taken for late, and its
/// chunks are not asked of another peer before the request timeout.
#[test]
fn a_prebuffering_player_does_not_double_slow_answers() {
    use std::cell::RefCell;
    use std::collections::BTreeMap;
    use std::rc::Rc;
    let (mut net, _, cs) = leecher(None, true);
    // When each chunk was last asked of seeder 2; how many chunks were
    // asked of seeder 1 within 500 ms (the request timeout's floor) of
    // being asked of seeder 2.
    let asked: Rc<RefCell<BTreeMap<u64, ppspp_core::time::Instant>>> = Rc::default();
    let early: Rc<RefCell<u64>> = Rc::default();
    let start = net.now;
    // Seeder 2 is silent for 300 ms: less than a request timeout.
    let hole = (
        start + Duration::from_millis(300),
        start + Duration::from_millis(600),
    );
    while net.now < start + Duration::from_secs(2) {
        let now = net.now;
        let (a, e) = (asked.clone(), early.clone());
        net.filter =
            Some(Box::new(move |d| {
                if d.from == addr(10) {
                    for (_, c) in asks(&d.bytes, cs).into_iter().filter(|a| a.0) {
                        if d.to == addr(2) {
                            a.borrow_mut().insert(c, now);
                        } else if a.borrow().get(&c).is_some_and(|&at| {
                            now.saturating_since(at) < Duration::from_millis(500)
                        }) {
                            *e.borrow_mut() += 1;
                        }
                    }
                }
                !(d.from == addr(2) && now >= hole.0 && now < hole.1)
            }));
        net.run_for(Duration::from_millis(5), |_| false);
    }
    assert!(asked.borrow().len() > 50, "seeder 2 was asked too little");
    assert_eq!(*early.borrow(), 0, "chunks asked again before the timeout");
}
