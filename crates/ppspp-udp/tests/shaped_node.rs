//! A shaped node (`start_shaped`) hands every datagram it writes to its
//! shaper and sends it only when the shaper gives it back: the hook the
//! lab's real-time emulator puts its link model in.

mod common;

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ppspp_udp::{Held, NodeHandle, ShaperPort};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// What the test shaper saw.
#[derive(Default)]
struct Seen {
    out: AtomicU64,
}

/// A shaper that gives every datagram back after `delay` (none at all
/// when `drop_all`).
fn spawn_shaper(
    mut hold: mpsc::UnboundedReceiver<Held>,
    release: HashMap<SocketAddr, mpsc::UnboundedSender<Held>>,
    delay: Duration,
    drop_all: bool,
    seen: Arc<Seen>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut due: VecDeque<(Instant, Held)> = VecDeque::new();
        loop {
            let next = due.front().map(|(t, _)| *t);
            tokio::select! {
                h = hold.recv() => {
                    let Some(h) = h else { return };
                    seen.out.fetch_add(1, Ordering::Relaxed);
                    if !drop_all {
                        due.push_back((Instant::now() + delay, h));
                    }
                }
                () = async { tokio::time::sleep_until(next.unwrap()).await }, if next.is_some() => {
                    let (_, h) = due.pop_front().unwrap();
                    let _ = release[&h.node].send(h);
                }
            }
        }
    })
}

struct Pair {
    seeder: NodeHandle,
    node: NodeHandle,
    swarm: ppspp_core::proto::SwarmHandle,
    total: u64,
    seen: Arc<Seen>,
    seeder_task: tokio::task::JoinHandle<std::io::Result<()>>,
    shaper: tokio::task::JoinHandle<()>,
}

/// A seeder and a downloader, both shaped by one test shaper.
async fn shaped_pair(delay: Duration, drop_all: bool) -> Pair {
    let (data, tree) = common::content(300_000, 11);
    let (hold_tx, hold_rx) = mpsc::unbounded_channel();
    let (seeder_tx, seeder_rx) = mpsc::unbounded_channel();
    let (node_tx, node_rx) = mpsc::unbounded_channel();
    let port = |release| ShaperPort {
        hold: hold_tx.clone(),
        release,
    };
    let (seeder, _, seeder_task) =
        ppspp_udp::start_shaped(common::config(None, 3), port(seeder_rx))
            .await
            .unwrap();
    seeder
        .add_swarm(common::seed_setup(&tree, &data))
        .await
        .unwrap();
    let (node, _, _) = ppspp_udp::start_shaped(common::config(None, 4), port(node_rx))
        .await
        .unwrap();
    let swarm = node
        .add_swarm(common::download_setup(&tree, "linear"))
        .await
        .unwrap();
    let release = HashMap::from([
        (seeder.local_addr(), seeder_tx),
        (node.local_addr(), node_tx),
    ]);
    let seen = Arc::new(Seen::default());
    let shaper = spawn_shaper(hold_rx, release, delay, drop_all, seen.clone());
    Pair {
        seeder,
        node,
        swarm,
        total: tree.chunk_count(),
        seen,
        seeder_task,
        shaper,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_datagram_waits_for_the_shaper_and_the_download_completes() {
    let delay = Duration::from_millis(60);
    let p = shaped_pair(delay, false).await;
    let mut verified = p.node.verified();
    let start = Instant::now();
    p.node.connect(p.swarm, p.seeder.local_addr()).unwrap();
    // The first chunk needs four one-way trips (handshake, its answer with
    // the seeder's HAVE, the request, the data), each held `delay` at least.
    tokio::time::timeout(Duration::from_secs(10), verified.wait_for(|v| *v > 0))
        .await
        .expect("a first chunk")
        .unwrap();
    let first = start.elapsed();
    assert!(first >= 4 * delay, "first chunk after {first:?}");
    tokio::time::timeout(
        Duration::from_secs(60),
        verified.wait_for(|v| *v == p.total),
    )
    .await
    .expect("the download completes through the shaper")
    .unwrap();
    let report = p.node.report(p.swarm).await.unwrap();
    assert!(report.complete);
    // Everything the downloader received went through the shaper: at
    // least a datagram per chunk, and no more than the shaper let out.
    let out = p.seen.out.load(Ordering::Relaxed);
    let received = report.endpoint.datagrams_received;
    assert!(out > p.total, "{out} datagrams out for {} chunks", p.total);
    assert!(
        received >= p.total && received <= out,
        "{received} received, {out} out"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shaper_that_drops_everything_lets_nothing_through() {
    let p = shaped_pair(Duration::ZERO, true).await;
    p.node.connect(p.swarm, p.seeder.local_addr()).unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(
        p.seen.out.load(Ordering::Relaxed) > 0,
        "the handshake was held"
    );
    let report = p.node.report(p.swarm).await.unwrap();
    assert_eq!(report.endpoint.datagrams_received, 0);
    assert_eq!(*p.node.verified().borrow(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_stops_when_its_shaper_goes() {
    let p = shaped_pair(Duration::ZERO, false).await;
    p.shaper.abort();
    let done = tokio::time::timeout(Duration::from_secs(5), p.seeder_task)
        .await
        .expect("the seeder stopped");
    assert!(done.unwrap().is_ok());
}
