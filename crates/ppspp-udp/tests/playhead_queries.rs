//! The commands the HTTP gateway drives a node with: `set_playhead` makes a
//! streaming picker fetch from there first, `have_run` counts verified
//! chunks without a gap, and `verified()` wakes waiters as chunks verify.

mod common;

use std::time::Duration;

use ppspp_core::ChunkIndex;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_playhead_far_ahead_is_fetched_first_and_waiters_wake() {
    let (data, tree) = common::content(2_000_000, 7);
    let total = tree.chunk_count();
    // 500 kB/s: the whole content takes about 4 s.
    let (seeder, node, swarm) =
        common::seeder_and_downloader(&data, &tree, 500_000, "linear").await;
    let far = ChunkIndex(total * 8 / 10);
    node.set_playhead(swarm, Some(far)).unwrap();
    // Asked before connecting: once connected, the chunk may come before
    // the query is answered (a busy machine made CI see 1 here).
    assert_eq!(node.have_run(swarm, far).await.unwrap(), 0);
    node.connect(swarm, seeder.local_addr()).unwrap();

    let mut verified = node.verified();
    let wait = async {
        while node.have_run(swarm, far).await.unwrap() == 0 {
            verified.changed().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(3), wait)
        .await
        .expect("the chunk at the playhead came");
    let r = node.report(swarm).await.unwrap();
    assert!(r.have < total / 2, "fetched in order instead: {}", r.have);
    assert_eq!(node.have_run(swarm, ChunkIndex(0)).await.unwrap(), 0);

    // Back to the start: everything arrives; runs stop at the end.
    node.set_playhead(swarm, Some(ChunkIndex(0))).unwrap();
    let done = async {
        while !node.report(swarm).await.unwrap().complete {
            verified.changed().await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(30), done)
        .await
        .expect("complete");
    assert_eq!(*node.verified().borrow(), total);
    assert_eq!(node.have_run(swarm, ChunkIndex(0)).await.unwrap(), total);
    assert_eq!(node.have_run(swarm, far).await.unwrap(), total - far.0);
    assert_eq!(
        node.have_run(swarm, ChunkIndex(total - 1)).await.unwrap(),
        1
    );
    assert_eq!(node.have_run(swarm, ChunkIndex(total)).await.unwrap(), 0);
}
