//! A live peer in an emulation: the simulator's camera or player
//! ([`LivePart`], from `ppspp_lab::sim::partition::live_peer`) run inside
//! the peer's real node as a [`SwarmAgent`], on the node's clock, which is
//! the run's.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ppspp_core::play::StallSpan;
use ppspp_core::proto::{Endpoint, SwarmHandle};
use ppspp_core::time::Instant;
use ppspp_lab::live::metrics::LivePeer;
use ppspp_lab::sim::partition::LivePart;
use ppspp_udp::SwarmAgent;
use tokio::sync::Notify;

/// A live peer's part, shared by its node (which runs it) and its task in
/// the emulation (which waits for it to end and reads its figures).
pub(crate) struct LiveShared {
    part: Mutex<LivePart>,
    /// Chunks its swarm holds now (the core's progress), for the progress
    /// samples.
    pub have: AtomicU64,
    /// Whether the viewer played the stream to its end.
    pub ended: AtomicBool,
    /// Told once when it does.
    pub on_end: Notify,
}

impl LiveShared {
    /// `part`, not yet run.
    pub fn new(part: LivePart) -> Arc<LiveShared> {
        Arc::new(LiveShared {
            part: Mutex::new(part),
            have: AtomicU64::new(0),
            ended: AtomicBool::new(false),
            on_end: Notify::new(),
        })
    }

    /// The agent that runs it in a node.
    pub fn agent(self: &Arc<Self>) -> Box<dyn SwarmAgent> {
        Box::new(LiveAgent(self.clone()))
    }

    /// What it did, as the simulator reports it, and a viewer's stalls;
    /// a viewer's figures are there once its agent left.
    pub fn result(&self) -> (LivePeer, Vec<StallSpan>) {
        match &*self.part.lock().expect("not poisoned") {
            LivePart::Source(s) => (
                LivePeer {
                    made: s.made(),
                    playback: None,
                },
                Vec::new(),
            ),
            LivePart::Viewer(v) => (
                LivePeer {
                    made: 0,
                    playback: v.frozen().cloned(),
                },
                v.frozen_stalls().to_vec(),
            ),
        }
    }
}

struct LiveAgent(Arc<LiveShared>);

impl SwarmAgent for LiveAgent {
    fn update(&mut self, now: Instant, ep: &mut Endpoint, swarm: SwarmHandle) -> Option<Instant> {
        let mut part = self.0.part.lock().expect("not poisoned");
        let next = match &mut *part {
            LivePart::Source(s) => {
                // The camera makes what is due (RFC 7574 §6.1.2).
                if let Err(e) = s.produce(now, ep, swarm) {
                    tracing::warn!("live source: {e}");
                }
                s.poll_timeout()
            }
            LivePart::Viewer(v) => {
                let next = v.update(now, ep, swarm);
                if v.ended() && !self.0.ended.swap(true, Ordering::AcqRel) {
                    self.0.on_end.notify_one();
                }
                next
            }
        };
        let have = ep.progress(swarm).map_or(0, |p| p.0);
        self.0.have.store(have, Ordering::Release);
        next
    }

    fn leave(&mut self, now: Instant, ep: &mut Endpoint, swarm: SwarmHandle) {
        if let LivePart::Viewer(v) = &mut *self.0.part.lock().expect("not poisoned") {
            v.leave(now, ep, swarm);
        }
    }
}
