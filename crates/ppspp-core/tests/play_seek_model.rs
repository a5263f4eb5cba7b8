//! A viewer with a seek model steers the download to where it jumps: the
//! viewer sets the swarm's playhead after every look, so after a seek of
//! the model the pickers fetch from the new position, and the wait there
//! is a seek wait, not a stall.

mod common;

use std::time::Duration;

use common::{addr, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::play::{PlayerConfig, PlayerState, SeekModel, Viewer};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::ChunkSize;
use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

const CHUNKS: u64 = 4000;

#[test]
fn the_pickers_follow_a_seek_of_the_model() {
    let config = EndpointConfig {
        pex_auto_connect: false,
        ..EndpointConfig::default()
    };
    for picker in ["linear", "std-vod", "swift-vod"] {
        let cs = ChunkSize::new(1024).unwrap();
        let (bytes, tree) = common::content(CHUNKS as usize * 1024, 251, cs);
        let mut net = Net::new(Duration::from_millis(20));
        net.add(addr(1), seeder_endpoint(config.clone(), 1, &tree, &bytes));
        let (mut ep, h) = leecher_endpoint(config.clone(), 10, &tree, picker);
        ep.connect(net.now, h, addr(1));
        net.add(addr(10), ep);
        // One seek a second of playback on average; this seed's first
        // comes while the download is still near the start.
        let model = SeekModel::per_minute(60.0).unwrap();
        let mut viewer = Viewer::new(PlayerConfig::default(), cs, Some(CHUNKS), net.now)
            .with_seeks(model, Xoshiro256PlusPlus::seed_from_u64(3));
        let mut played = false;
        let mut seek = None;
        for _ in 0..2000 {
            net.run_for(Duration::from_millis(10), |_| false);
            let now = net.now;
            viewer.update(now, net.node(addr(10)), h);
            played |= viewer.state() == PlayerState::Playing;
            if played && viewer.state() == PlayerState::Prebuffering {
                seek = Some((
                    viewer.playhead(now),
                    net.nodes[&addr(10)].verified_log(h).len(),
                ));
                break;
            }
        }
        let (target, before) = seek.unwrap_or_else(|| panic!("{picker}: no seek"));
        let ep = &net.nodes[&addr(10)];
        assert!(
            !ep.have(h).unwrap().contains(target),
            "{picker}: the seek lands beyond the download ({target:?})"
        );
        // Keep looking: the chunks that come next are from the target on.
        for _ in 0..50 {
            net.run_for(Duration::from_millis(10), |_| false);
            viewer.update(net.now, net.node(addr(10)), h);
        }
        let log = net.nodes[&addr(10)].verified_log(h);
        let near = log
            .since(before)
            .filter(|c| (target.0..target.0 + 700).contains(&c.0))
            .count();
        assert!(
            near >= 50,
            "{picker}: {near} of {} chunks after the seek near {target:?}",
            log.len() - before
        );
        let s = viewer.stats(net.now, &net.nodes[&addr(10)], h);
        assert!(s.seeks >= 1 && s.seek_waits >= 1, "{picker}: {s:?}");
        assert_eq!(s.stalls, 0, "{picker}: the wait is no stall");
    }
}
