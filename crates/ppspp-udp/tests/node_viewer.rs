//! A node's viewer: the core's player model run against the live endpoint
//! (`watch`), steering a streaming download, reporting startup and
//! playback, and jumping on `seek`.

mod common;

use std::time::Duration;

use ppspp_core::play::{Bitrate, PlayerConfig, PlayerState};
use ppspp_core::{ChunkIndex, ChunkSize};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_stream_starts_plays_and_seeks() {
    let cs = ChunkSize::DEFAULT;
    let (data, tree) = common::content(1_000_000, 13);
    let total = tree.chunk_count();
    // 100 kB/s: the whole content takes 10 s.
    let (seeder, node, swarm) =
        common::seeder_and_downloader(&data, &tree, 100_000, "swift-vod").await;
    assert_eq!(node.report(swarm).await.unwrap().playback, None);
    // A 1 s prebuffer: 123 chunks.
    let player = PlayerConfig {
        bitrate: Bitrate::MBIT,
        prebuffer: Duration::from_secs(1),
        rebuffer: Duration::from_secs(1),
    };
    node.watch(swarm, player, cs, true).unwrap();
    node.connect(swarm, seeder.local_addr()).unwrap();
    let started = async {
        loop {
            let p = node.report(swarm).await.unwrap().playback.unwrap();
            if p.state == PlayerState::Playing {
                return p;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let p = tokio::time::timeout(Duration::from_secs(10), started)
        .await
        .expect("the viewer started playing");
    let startup = p.stats.startup_delay.expect("a startup delay once playing");
    assert!(startup > Duration::ZERO, "{startup:?}");
    // The viewer steered the download: the start came first.
    let r = node.report(swarm).await.unwrap();
    assert!(r.have < total, "complete before playing");
    assert!(node.have_run(swarm, ChunkIndex(0)).await.unwrap() >= 100);

    // A seek far ahead: the viewer waits there (not a stall) and the
    // download follows it.
    let far = ChunkIndex(total * 9 / 10);
    node.seek(swarm, far).unwrap();
    let p = node.report(swarm).await.unwrap().playback.unwrap();
    assert!(p.playhead >= far, "{p:?}");
    let there = async {
        while node.have_run(swarm, far).await.unwrap() < 50 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(4), there)
        .await
        .expect("the chunks after the seek came");
    // Before the chunks between: the download jumped with the viewer.
    let r = node.report(swarm).await.unwrap();
    assert!(r.have < total * 8 / 10, "{} of {total}", r.have);
    let p = r.playback.unwrap();
    assert_eq!(p.stats.stalls, 0, "{p:?}");
}
