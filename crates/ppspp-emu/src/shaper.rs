//! The network model between real nodes: every datagram a shaped node
//! writes enters the lab's [`Network`] at its host's uplink, crosses the
//! modelled path (access links, sites, core delay, queues, loss) against
//! the wall clock, and goes to the kernel when the model delivers it; the
//! receiving node gets it from its socket at once.
//!
//! The whole path is modelled before the kernel, on the sending side: the
//! model's delivery time is when the datagram enters the loopback, which
//! adds its own few microseconds. (Splitting the path at the core, uplinks
//! on the sending side and downlinks on the receiving side, is what an
//! emulation across machines needs; the model already cuts there for its
//! partitions.)
//!
//! One task owns the model, so links shared by several nodes (a site's
//! router, seed paper 003's access router) see all their traffic in one
//! queue. Its timers are tokio's, whose resolution is a millisecond: a
//! datagram goes out up to about a millisecond after the model's time.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hdrhistogram::Histogram;
use ppspp_core::time::Instant;
use ppspp_lab::net::Network;
use ppspp_lab::packet::{Body, FlowId, HostId, Packet, UDP_OVERHEAD};
use ppspp_udp::{Held, ShaperPort};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// What the shaper did, in datagrams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShaperStats {
    /// Written by a node and offered to the model.
    pub offered: u64,
    /// Delivered by the model and given back to be sent.
    pub sent: u64,
    /// From or to an address no attached node has (dropped).
    pub unknown: u64,
    // What the nodes received is in their endpoints' counters
    // (`EndpointStats::datagrams_received`): it does not pass here.
}

/// What a stopped shaper hands back.
pub struct Stopped {
    /// The model, with its links' counters.
    pub net: Network,
    /// What the shaper did.
    pub stats: ShaperStats,
    /// How late the shaper acted on the model's due events, in µs: at each
    /// turn that found some due, the wall clock minus the earliest one's
    /// time. Its p99 is issue 27's "scheduling lateness".
    pub lateness_us: Histogram<u64>,
}

/// Gives a node its datagrams back; made with its [`ShaperPort`] by
/// [`ShaperHandle::port`], handed over with [`ShaperHandle::attach`].
#[derive(Debug)]
pub struct Releaser(mpsc::UnboundedSender<Held>);

enum Control {
    Attach(HostId, SocketAddr, Releaser),
    Detach(HostId),
}

/// Talks to a running shaper.
pub struct ShaperHandle {
    /// Wire bytes the model has delivered from each host so far, by host
    /// id (what `record.rates` samples).
    delivered: Arc<[AtomicU64]>,
    hold: mpsc::UnboundedSender<Held>,
    control: mpsc::UnboundedSender<Control>,
    task: JoinHandle<Stopped>,
}

impl ShaperHandle {
    /// Starts the shaper's task on the current tokio runtime, with `net`'s
    /// clock at zero now.
    pub fn start(net: Network) -> ShaperHandle {
        ShaperHandle::start_at(net, std::time::Instant::now())
    }

    /// As [`ShaperHandle::start`], with `net`'s clock at zero at `epoch`
    /// (a run's start, so that the model's samples share its time axis).
    pub fn start_at(net: Network, epoch: std::time::Instant) -> ShaperHandle {
        let (hold, hold_rx) = mpsc::unbounded_channel();
        let (control, control_rx) = mpsc::unbounded_channel();
        let delivered: Arc<[AtomicU64]> =
            (0..net.host_count()).map(|_| AtomicU64::new(0)).collect();
        let shaper = Shaper {
            delivered: delivered.clone(),
            net,
            epoch,
            hosts: HashMap::new(),
            nodes: Vec::new(),
            stats: ShaperStats::default(),
            // Three significant digits up to an hour; it grows as needed.
            lateness_us: Histogram::new(3).expect("3 significant digits are allowed"),
        };
        ShaperHandle {
            delivered,
            hold,
            control,
            task: tokio::spawn(shaper.run(hold_rx, control_rx)),
        }
    }

    /// Wire bytes the model has delivered from host `host` so far.
    pub fn delivered_from(&self, host: usize) -> u64 {
        self.delivered
            .get(host)
            .map_or(0, |n| n.load(Ordering::Relaxed))
    }

    /// A port for a node to be started with (`ppspp_udp::start_shaped`),
    /// and the releaser to [`attach`](Self::attach) once its address is
    /// known.
    pub fn port(&self) -> (ShaperPort, Releaser) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            ShaperPort {
                hold: self.hold.clone(),
                release: rx,
            },
            Releaser(tx),
        )
    }

    /// The node at `addr` is host `host` of the model. Attach it before it
    /// first sends (before it connects to a peer). A datagram to or from an
    /// address no host has is dropped and counted as `unknown`; a host
    /// keeps its address after it [detaches](Self::detach), so datagrams to
    /// a node that has stopped cross the model and the kernel drops them.
    pub fn attach(&self, host: HostId, addr: SocketAddr, releaser: Releaser) {
        let _ = self.control.send(Control::Attach(host, addr, releaser));
    }

    /// Host `host`'s node has left: what it wrote and the model still
    /// carries is dropped, and its port's release channel closes (the node
    /// stops). It keeps its address.
    pub fn detach(&self, host: HostId) {
        let _ = self.control.send(Control::Detach(host));
    }

    /// Stops the shaper; returns the model (with its links' counters) and
    /// what the shaper did. Every attached node's release channel closes.
    pub async fn stop(self) -> Stopped {
        drop(self.hold);
        drop(self.control);
        self.task.await.expect("the shaper's task does not panic")
    }
}

struct Shaper {
    delivered: Arc<[AtomicU64]>,
    net: Network,
    epoch: std::time::Instant,
    hosts: HashMap<SocketAddr, HostId>,
    /// By host id: its address once attached, and its node's releaser
    /// until it detaches.
    nodes: Vec<Option<(SocketAddr, Option<Releaser>)>>,
    stats: ShaperStats,
    lateness_us: Histogram<u64>,
}

impl Shaper {
    fn now(&self) -> Instant {
        Instant::from_micros(u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX))
    }

    fn at(&self, t: Instant) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.epoch + Duration::from_micros(t.as_micros()))
    }

    async fn run(
        mut self,
        mut hold: mpsc::UnboundedReceiver<Held>,
        mut control: mpsc::UnboundedReceiver<Control>,
    ) -> Stopped {
        loop {
            self.deliver_due();
            let wake = self.net.poll_timeout().map(|t| self.at(t));
            tokio::select! {
                // Attachments first: a node attached before it sends must
                // not see its first datagram dropped.
                biased;
                c = control.recv() => match c {
                    Some(c) => self.apply(c),
                    // The handle stopped the shaper (the nodes still hold
                    // senders of `hold`, so that one never closes first).
                    None => break,
                },
                h = hold.recv() => match h {
                    Some(h) => self.on_held(h),
                    None => break,
                },
                () = sleep_until(wake), if wake.is_some() => {}
            }
        }
        Stopped {
            net: self.net,
            stats: self.stats,
            lateness_us: self.lateness_us,
        }
    }

    fn apply(&mut self, c: Control) {
        match c {
            Control::Attach(host, addr, releaser) => self.set(host, addr, Some(releaser)),
            Control::Detach(host) => {
                if let Some(Some((_, r))) = self.nodes.get_mut(host.0 as usize) {
                    *r = None;
                }
            }
        }
    }

    fn set(&mut self, host: HostId, addr: SocketAddr, releaser: Option<Releaser>) {
        let i = host.0 as usize;
        if self.nodes.len() <= i {
            self.nodes.resize_with(i + 1, || None);
        }
        if let Some(Some((old, _))) = self.nodes.get(i) {
            self.hosts.remove(old);
        }
        self.hosts.insert(addr, host);
        self.nodes[i] = Some((addr, releaser));
    }

    fn on_held(&mut self, h: Held) {
        let (Some(&src), Some(&dst)) = (self.hosts.get(&h.node), self.hosts.get(&h.peer)) else {
            self.stats.unknown += 1;
            return;
        };
        self.stats.offered += 1;
        let size = u32::try_from(h.bytes.len()).unwrap_or(u32::MAX) + UDP_OVERHEAD;
        let now = self.now();
        self.net.send(
            now,
            Packet {
                src,
                dst,
                // A peer's datagrams are one flow, as in the simulator.
                flow: FlowId(src.0),
                size,
                body: Body::Datagram(h.bytes),
            },
        );
    }

    /// Moves the model up to now and sends what it delivered.
    fn deliver_due(&mut self) {
        let now = self.now();
        if let Some(due) = self.net.poll_timeout().filter(|t| *t <= now) {
            self.lateness_us
                .saturating_record(now.as_micros() - due.as_micros());
        }
        self.net.handle_timeout(now);
        while let Some(p) = self.net.poll_delivery() {
            if let Some(n) = self.delivered.get(p.src.0 as usize) {
                n.fetch_add(u64::from(p.size), Ordering::Relaxed);
            }
            let Body::Datagram(bytes) = p.body else {
                continue;
            };
            let (Some(node), Some(peer)) = (self.addr(p.src), self.addr(p.dst)) else {
                continue;
            };
            self.stats.sent += 1;
            self.release(p.src, Held { node, peer, bytes });
        }
    }

    fn addr(&self, host: HostId) -> Option<SocketAddr> {
        self.nodes.get(host.0 as usize)?.as_ref().map(|(a, _)| *a)
    }

    fn release(&self, host: HostId, h: Held) {
        if let Some(Some((_, Some(r)))) = self.nodes.get(host.0 as usize) {
            let _ = r.0.send(h);
        }
    }
}

async fn sleep_until(t: Option<tokio::time::Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
