//! A driver's playhead steers a streaming download: the pickers start at
//! it, a seek moves them, and the verified log tells a player which chunks
//! came, in order.

mod common;

use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::play::{Player, PlayerConfig, PlayerState};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::{ChunkIndex, ChunkSize};

const CHUNKS: u64 = 2000;

fn config() -> EndpointConfig {
    EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    }
}

#[test]
fn the_download_starts_at_the_playhead_and_follows_a_seek() {
    for picker in ["linear", "std-vod"] {
        let cs = ChunkSize::new(1024).unwrap();
        let (bytes, tree) = common::content(CHUNKS as usize * 1024, 251, cs);
        let mut net = Net::new(Duration::from_millis(20));
        net.add(addr(1), seeder_endpoint(config(), 1, &tree, &bytes));
        let (mut ep, h) = leecher_endpoint(config(), 10, &tree, picker);
        ep.set_playhead(h, Some(ChunkIndex(1200)));
        ep.connect(net.now, h, addr(1));
        net.add(addr(10), ep);
        net.run_for(Duration::from_millis(300), |_| false);
        let log = net.nodes[&addr(10)]
            .verified_log(h)
            .since(0)
            .collect::<Vec<_>>();
        assert!(log.len() >= 20, "{picker}: {} chunks in 300 ms", log.len());
        // The high-priority set (or linear order) starts at the playhead.
        assert_eq!(log[0], ChunkIndex(1200), "{picker}");
        assert!(
            log[..20].iter().all(|c| (1200..1300).contains(&c.0)),
            "{picker}: {log:?}"
        );
        // A seek: new chunks come from the new position.
        let before = log.len();
        net.node(addr(10)).set_playhead(h, Some(ChunkIndex(100)));
        net.run_for(Duration::from_millis(300), |_| false);
        let log = net.nodes[&addr(10)]
            .verified_log(h)
            .since(0)
            .collect::<Vec<_>>();
        let after: Vec<u64> = log[before..].iter().map(|c| c.0).collect();
        // Requests already in flight still arrive; after them, the seek.
        let from_seek = after.iter().filter(|&&c| (100..300).contains(&c)).count();
        assert!(from_seek >= 20, "{picker}: {after:?}");
        // Every verified chunk is logged once.
        let have = net.nodes[&addr(10)].have(h).unwrap().count();
        assert_eq!(have, log.len() as u64, "{picker}");
    }
}

#[test]
fn a_player_fed_from_the_log_starts_and_plays_to_the_end() {
    let cs = ChunkSize::new(1024).unwrap();
    let (bytes, tree) = common::content(CHUNKS as usize * 1024, 251, cs);
    let mut net = Net::new(Duration::from_millis(20));
    net.add(addr(1), seeder_endpoint(config(), 1, &tree, &bytes));
    let (mut ep, h) = leecher_endpoint(config(), 10, &tree, "std-vod");
    ep.connect(net.now, h, addr(1));
    net.add(addr(10), ep);
    let start = net.now;
    let mut player = Player::new(PlayerConfig::default(), cs, start);
    player.set_chunk_count(CHUNKS);
    let mut seen = 0;
    // The driver's loop, in steps of 10 ms: feed arrivals, advance.
    while player.state() != PlayerState::Ended {
        net.run_for(Duration::from_millis(10), |_| false);
        let now = net.now;
        let ep = net.node(addr(10));
        let log = ep.verified_log(h);
        for c in log.since(seen) {
            player.on_verified(now, c);
        }
        seen = log.len();
        player.advance(now, ep.have(h).unwrap());
        let playhead = player.playhead(now);
        ep.set_playhead(h, Some(playhead));
        assert!(now < start + Duration::from_secs(60), "never ended");
    }
    let stats = player.stats(net.now, net.nodes[&addr(10)].have(h).unwrap());
    // 2000 KiB at 1 Mbit/s plays for 16.4 s; over a fast link the 5 s
    // prebuffer (611 chunks) comes in well under two seconds.
    let startup = stats.startup_delay.expect("it started");
    assert!(startup < Duration::from_secs(2), "startup {startup:?}");
    assert_eq!(stats.chunks_due, CHUNKS);
    assert!(stats.chunks_in_time <= CHUNKS);
}
