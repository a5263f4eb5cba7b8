//! The endpoint tells `tracing` what its channels do, inside a `channel`
//! span naming the swarm, the channel and the peer (issue 22). Nothing is
//! printed without a subscriber; with one, a transfer reads as channels
//! opened, their work, and channels closed.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, Net};
use ppspp_core::proto::EndpointConfig;
use ppspp_core::ChunkSize;

/// A writer into a shared buffer, for the test's subscriber.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn channels_are_traced_in_spans_naming_swarm_channel_and_peer() {
    let out = Buffer::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .without_time()
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        let (data, tree) = common::content(40_000, 251, ChunkSize::DEFAULT);
        let mut net = Net::new(Duration::from_millis(10));
        let config = EndpointConfig {
            pex_auto_connect: false,
            ..EndpointConfig::default()
        };
        net.add(
            addr(1),
            common::seeder_endpoint(config.clone(), 1, &tree, &data),
        );
        let (leecher, h) = common::leecher_endpoint(config, 2, &tree, "sequential");
        net.add(addr(2), leecher);
        let now = net.now;
        net.node(addr(2)).connect(now, h, addr(1)).unwrap();
        net.run_for(Duration::from_secs(10), |n| {
            n.nodes[&addr(2)].is_complete(h)
        });
        assert!(net.nodes[&addr(2)].is_complete(h));
        net.node(addr(2)).close_swarm(h);
        net.run_for(Duration::from_secs(1), |_| false);
    });
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    assert!(text.contains("swarm added"), "{text}");
    assert!(
        text.contains("channel opened") && text.contains("peer=10.0.0.1:6778 by_us=true"),
        "{text}"
    );
    assert!(text.contains("by_us=false"), "the seeder's side: {text}");
    assert!(text.contains("channel closed"), "{text}");
    // Work inside a channel's span is prefixed by it.
    let in_span = |what: &str| {
        text.lines()
            .any(|l| l.contains("channel{swarm=0 id=ch:") && l.contains(what))
    };
    assert!(in_span("datagram handled"), "{text}");
    assert!(in_span("datagram written"), "{text}");
}
