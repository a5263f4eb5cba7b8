//! A node's agents (`NodeHandle::attach`): code run beside a swarm inside
//! the node's task, woken at the deadlines it asks for with no other
//! input, handed the node's clock (whose zero the program may set), and
//! given a last look when detached or when the node shuts down.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ppspp_core::proto::{Endpoint, SwarmHandle};
use ppspp_core::time::Instant;
use ppspp_udp::{NodeConfig, SwarmAgent};

/// What an agent saw, shared with the test.
#[derive(Default, Debug)]
struct Seen {
    updates: Vec<Instant>,
    asked: Vec<Instant>,
    left: Vec<Instant>,
    /// Chunks the swarm held at its last look.
    have_at_leave: Option<u64>,
}

/// Asks to be woken `every` after each update, `times` times.
struct Ticker {
    seen: Arc<Mutex<Seen>>,
    every: Duration,
    times: usize,
}

impl SwarmAgent for Ticker {
    fn update(&mut self, now: Instant, _ep: &mut Endpoint, _swarm: SwarmHandle) -> Option<Instant> {
        let mut s = self.seen.lock().unwrap();
        s.updates.push(now);
        // Only the deadlines asked for move it on: wakes for other
        // reasons (commands) must not stretch the chain.
        if s.asked.last().is_some_and(|t| now < *t) {
            return s.asked.last().copied();
        }
        if s.asked.len() >= self.times {
            return None;
        }
        let next = now + self.every;
        s.asked.push(next);
        Some(next)
    }

    fn leave(&mut self, now: Instant, ep: &mut Endpoint, swarm: SwarmHandle) {
        let mut s = self.seen.lock().unwrap();
        s.left.push(now);
        s.have_at_leave = ep.progress(swarm).map(|p| p.0);
    }
}

fn ticker(every_ms: u64, times: usize) -> (Arc<Mutex<Seen>>, Box<dyn SwarmAgent>) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let agent = Ticker {
        seen: seen.clone(),
        every: Duration::from_millis(every_ms),
        times,
    };
    (seen, Box::new(agent))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_runs_at_its_deadlines_and_leaves_when_detached() {
    let (data, tree) = common::content(200_000, 7);
    // The node's clock zero is 30 s ago: its times count from there.
    let config = NodeConfig {
        clock_zero: Some(std::time::Instant::now() - Duration::from_secs(30)),
        ..common::config(None, 11)
    };
    let (node, _, _) = ppspp_udp::start(config).await.unwrap();
    let swarm = node
        .add_swarm(common::seed_setup(&tree, &data))
        .await
        .unwrap();
    let (seen, agent) = ticker(30, 5);
    node.attach(swarm, agent).unwrap();
    // Five deadlines 30 ms apart, nothing else happening: the node wakes
    // for each.
    let woke = async {
        loop {
            {
                let s = seen.lock().unwrap();
                if s.asked.len() == 5 && s.updates.last() >= s.asked.last() {
                    return;
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), woke)
        .await
        .expect("the node woke the agent at every deadline");
    {
        let s = seen.lock().unwrap();
        assert!(s.updates[0] >= Instant::from_micros(30_000_000), "{s:?}");
        for t in &s.asked {
            assert!(s.updates.iter().any(|u| u >= t), "{s:?}");
        }
        assert!(s.left.is_empty());
    }
    assert_eq!(node.detach(swarm).await.unwrap(), 1);
    assert_eq!(node.detach(swarm).await.unwrap(), 0);
    let s = seen.lock().unwrap();
    assert_eq!(s.left.len(), 1, "{s:?}");
    assert!(s.left[0] >= *s.updates.last().unwrap());
    // It looked at the endpoint: the seeder holds every chunk.
    assert_eq!(s.have_at_leave, Some(tree.chunk_count()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_still_attached_leave_when_the_node_shuts_down() {
    let (data, tree) = common::content(100_000, 3);
    let (node, _, _) = ppspp_udp::start(common::config(None, 12)).await.unwrap();
    let swarm = node
        .add_swarm(common::seed_setup(&tree, &data))
        .await
        .unwrap();
    let (first, a) = ticker(1_000, 1);
    let (second, b) = ticker(1_000, 1);
    node.attach(swarm, a).unwrap();
    node.attach(swarm, b).unwrap();
    node.shutdown().await.unwrap();
    for seen in [first, second] {
        let s = seen.lock().unwrap();
        // Run when attached (and after the commands that came), its 1 s
        // deadline never came, then its one last look at shutdown.
        assert!(!s.updates.is_empty(), "{s:?}");
        assert!(s.updates.iter().all(|u| *u < s.asked[0]), "{s:?}");
        assert_eq!(s.left.len(), 1, "{s:?}");
    }
}
