//! The endpoint's work per input does not grow with its channel count: a
//! seeder serving many peers asks only the channels an input concerns for
//! a datagram (plus those whose timers fire), not every channel each time.
//! And the downloads it serves still all complete.

mod common;

use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::ChunkSize;

const LEN: usize = 64 * 1024;

/// A seeder at addr(1) and `n` leechers that know only the seeder (no
/// PEX), arriving 37 ms apart. Runs until all complete, then `idle` more; returns the seeder's
/// channel polls per datagram it received or sent over the whole run, and
/// whether every leecher completed.
fn run(n: u16, idle: Duration) -> (f64, bool) {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(LEN, 251, cs);
    let config = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let mut net = Net::new(Duration::from_millis(20));
    let seeder = seeder_endpoint(config.clone(), 1, &tree, &bytes);
    net.add(addr(1), seeder);
    let mut handles = Vec::new();
    for i in 0..n {
        let (mut ep, h) =
            leecher_endpoint(config.clone(), 100 + u64::from(i), &tree, "rarest-first");
        ep.connect(net.now, h, addr(1));
        net.add(addr(2 + i), ep);
        handles.push((addr(2 + i), h));
        // Arrivals apart, so that inputs do not all come at one instant.
        net.run_for(Duration::from_millis(37), |_| false);
    }
    let all_done = |net: &Net| handles.iter().all(|(a, h)| net.nodes[a].is_complete(*h));
    net.run_for(Duration::from_secs(60), |net| all_done(net));
    let done = all_done(&net);
    net.run_for(idle, |_| false);
    let stats = net.nodes[&addr(1)].stats().clone();
    let datagrams = stats.datagrams_received + stats.datagrams_sent;
    let per_datagram = stats.channel_polls as f64 / datagrams.max(1) as f64;
    (per_datagram, done)
}

#[test]
fn polls_per_input_do_not_grow_with_channels() {
    let (few, done_few) = run(4, Duration::from_secs(40));
    let (many, done_many) = run(48, Duration::from_secs(40));
    assert!(done_few && done_many);
    // A datagram in or out costs its own channel a poll or two (the one
    // that writes, and the one that finds nothing more), plus a poll per
    // timer: a small number whatever the channel count. Polling every
    // channel per input would make it grow to about 48 with 48 peers.
    assert!(few < 3.0, "{few} polls per datagram with 4 peers");
    assert!(many < 3.0, "{many} polls per datagram with 48 peers");
    assert!(
        many < 1.5 * few,
        "{many} polls per datagram with 48 peers vs {few} with 4"
    );
}

/// A download limit is kept: requests ask for no more than it pays for.
/// And its own timer lets them go again: with a 4 ms round trip every
/// chunk asked for arrives before the limit pays for the next, so no
/// datagram is left to wake the channel.
#[test]
fn download_limit_is_kept_and_resumes_on_its_own_timer() {
    const SIZE: usize = 400 * 1024;
    const LIMIT: u64 = 64 * 1024;
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(SIZE, 249, cs);
    let config = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    let limited = EndpointConfig {
        download_limit: Some(LIMIT),
        ..config.clone()
    };
    let mut net = Net::new(Duration::from_millis(2));
    net.add(addr(1), seeder_endpoint(config, 1, &tree, &bytes));
    let (mut ep, h) = leecher_endpoint(limited, 2, &tree, "sequential");
    ep.connect(net.now, h, addr(1));
    net.add(addr(2), ep);
    let start = net.now;
    net.run_for(Duration::from_secs(30), |n| {
        n.nodes[&addr(2)].is_complete(h)
    });
    let took = net.now.saturating_since(start).as_secs_f64();
    assert!(
        net.nodes[&addr(2)].is_complete(h),
        "not complete after {took} s"
    );
    // The first 128 KiB come in a burst; the rest at 64 KiB/s: about 4.3 s.
    let least = (SIZE as f64 - 128.0 * 1024.0) / LIMIT as f64;
    assert!(
        (least * 0.9..least + 2.0).contains(&took),
        "{took} s, the limit allows {least} s"
    );
}
