//! One direction of a link: a drop-tail FIFO queue served at the link's
//! capacity, then propagation delay (plus optional jitter that never
//! reorders), with random loss on entry.
//!
//! The queue is exact without events of its own: a FIFO served at a fixed
//! rate knows each packet's transmission end when it is enqueued, so the
//! queue is drained lazily up to the time of the next arrival. Inside, time
//! is kept in "bit-nanoseconds" (nanoseconds × capacity in bit/s), in which
//! a packet's transmission time is an exact integer, so rounding never
//! accumulates.

use std::collections::VecDeque;
use std::time::Duration;

use ppspp_core::time::Instant;
use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;

use super::loss::{Loss, LossModel};
use crate::packet::FlowId;

/// How much a queue holds before it drops arrivals (drop-tail).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum QueueLimit {
    /// At most this many bytes queued (the packet in transmission counts).
    Bytes(u64),
    /// At most this much time's worth of bytes at the link's capacity.
    Time(Duration),
    /// At most this many packets queued, whatever their size (the packet
    /// in transmission counts): routers' interface queues, as ns-2's
    /// drop-tail and seed paper 003's 300-packet router queue.
    Packets(u32),
    /// Never drops.
    Unlimited,
}

/// What a link is.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Bits per second; `None` for a link that never queues.
    pub capacity_bps: Option<u64>,
    /// The queue's limit.
    pub queue: QueueLimit,
    /// Propagation delay.
    pub delay: Duration,
    /// Extra delay drawn uniformly from `[0, jitter]` per packet; a packet
    /// never overtakes the one before it.
    pub jitter: Duration,
    /// Random loss of packets entering the link.
    pub loss: LossModel,
}

impl LinkConfig {
    /// A link of `capacity_bps` with a queue of `queue` and delay `delay`,
    /// no loss, no jitter.
    pub fn new(capacity_bps: Option<u64>, queue: QueueLimit, delay: Duration) -> LinkConfig {
        LinkConfig {
            capacity_bps,
            queue,
            delay,
            jitter: Duration::ZERO,
            loss: LossModel::None,
        }
    }

    /// The queue limit in bytes (`u64::MAX` for none).
    pub fn limit_bytes(&self) -> u64 {
        match (self.queue, self.capacity_bps) {
            (QueueLimit::Bytes(b), _) => b,
            (QueueLimit::Time(d), Some(c)) => {
                u64::try_from(d.as_nanos() * u128::from(c) / 8 / 1_000_000_000).unwrap_or(u64::MAX)
            }
            (QueueLimit::Time(_), None)
            | (QueueLimit::Packets(_), _)
            | (QueueLimit::Unlimited, _) => u64::MAX,
        }
    }

    /// The queue limit in packets (`usize::MAX` for none).
    pub fn limit_packets(&self) -> usize {
        match self.queue {
            QueueLimit::Packets(n) => n as usize,
            _ => usize::MAX,
        }
    }
}

/// Counters of one link.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Packets offered to the link.
    pub packets_in: u64,
    /// Bytes offered.
    pub bytes_in: u64,
    /// Packets sent on (neither lost nor dropped).
    pub packets_out: u64,
    /// Bytes sent on.
    pub bytes_out: u64,
    /// Packets dropped because the queue was full.
    pub drops_queue: u64,
    /// Packets lost at random.
    pub drops_loss: u64,
    /// Dequeues seen (each gives one occupancy sample).
    pub dequeues: u64,
    /// Sum of the queued bytes after each dequeue.
    pub sum_backlog_bytes: u128,
    /// Most bytes queued after a dequeue.
    pub max_backlog_bytes: u64,
    /// Sum of every forwarded packet's waiting time before its transmission
    /// started, in µs.
    pub sum_wait_us: u64,
}

/// A queue-occupancy sample taken after a packet left the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSample {
    /// When the packet finished transmission, µs.
    pub at_us: u64,
    /// Bytes still queued (including the one now in transmission).
    pub backlog_bytes: u64,
}

/// A per-packet queueing delay of the traced flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitSample {
    /// When the packet entered the link, µs.
    pub at_us: u64,
    /// How long it waited before its transmission started, µs.
    pub wait_us: u64,
}

/// What became of one traced flow's packets at a link: seed paper 003
/// counts the drops of a video call's packets and of BitTorrent's apart at
/// the one router queue they share (its Figs. 2c, 3c, 4b).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowCounts {
    /// Packets of the flow offered to the link.
    pub packets_in: u64,
    /// Of these, dropped because the queue was full.
    pub drops_queue: u64,
    /// Of these, lost at random.
    pub drops_loss: u64,
    /// Sum of the forwarded packets' waits before transmission, µs (every
    /// packet, also past the samples' bound).
    pub sum_wait_us: u64,
}

/// One traced flow at a link: its counters and its per-packet waits.
#[derive(Debug)]
struct Trace {
    flow: FlowId,
    counts: FlowCounts,
    waits: Vec<WaitSample>,
}

/// What became of a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// It reaches the far end of the link at this time.
    Forward(Instant),
    /// The queue was full.
    QueueDrop,
    /// Lost at random.
    Lost,
}

/// One direction of a link with its queue and counters.
#[derive(Debug)]
pub struct Link {
    config: LinkConfig,
    limit: u64,
    limit_packets: usize,
    /// Transmission end (bit-ns) and size of each queued packet, oldest
    /// first.
    queue: VecDeque<(u128, u32)>,
    backlog: u64,
    /// When the last queued packet's transmission ends (bit-ns).
    busy_until: u128,
    last_exit_us: u64,
    loss: Loss,
    rng: Xoshiro256PlusPlus,
    stats: LinkStats,
    /// Occupancy after every dequeue, when recorded (bounded).
    samples: Option<Vec<QueueSample>>,
    /// Waiting time of each packet of the traced flows (bounded per
    /// flow): a router's queue is shared, and seed paper 003 compares the
    /// waits of a video call's packets with BitTorrent's at the same one.
    traces: Vec<Trace>,
}

/// Most samples one link keeps; later ones are only counted.
pub const MAX_SAMPLES: usize = 2_000_000;

/// A packet's transmission time in bit-ns: exact.
fn transmission(size: u32) -> u128 {
    u128::from(size) * 8 * 1_000_000_000
}

impl Link {
    /// A link with its own random stream.
    pub fn new(config: LinkConfig, rng: Xoshiro256PlusPlus) -> Link {
        Link {
            limit: config.limit_bytes(),
            limit_packets: config.limit_packets(),
            loss: Loss::new(config.loss),
            config,
            queue: VecDeque::new(),
            backlog: 0,
            busy_until: 0,
            last_exit_us: 0,
            rng,
            stats: LinkStats::default(),
            samples: None,
            traces: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &LinkConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// Keep an occupancy sample after every dequeue.
    pub fn record_samples(&mut self) {
        self.samples.get_or_insert_with(Vec::new);
    }

    /// The occupancy samples, if recorded.
    pub fn samples(&self) -> Option<&[QueueSample]> {
        self.samples.as_deref()
    }

    /// Keep the waiting time of every packet of `flow` (besides any flow
    /// traced before).
    pub fn trace_flow(&mut self, flow: FlowId) {
        if !self.traces.iter().any(|t| t.flow == flow) {
            self.traces.push(Trace {
                flow,
                counts: FlowCounts::default(),
                waits: Vec::new(),
            });
        }
    }

    /// The waiting times of `flow`'s packets, if traced.
    pub fn flow_waits(&self, flow: FlowId) -> Option<&[WaitSample]> {
        self.trace(flow).map(|t| t.waits.as_slice())
    }

    /// The counters of `flow`'s packets, if traced.
    pub fn flow_counts(&self, flow: FlowId) -> Option<FlowCounts> {
        self.trace(flow).map(|t| t.counts)
    }

    fn trace(&self, flow: FlowId) -> Option<&Trace> {
        self.traces.iter().find(|t| t.flow == flow)
    }

    /// Bytes queued at `now` (the packet in transmission counts whole).
    pub fn backlog_at(&mut self, now: Instant) -> u64 {
        if let Some(c) = self.config.capacity_bps {
            self.drain(u128::from(now.as_micros()) * 1000 * u128::from(c));
        }
        self.backlog
    }

    /// Takes packets whose transmission ended by `now` (bit-ns) off the
    /// queue.
    fn drain(&mut self, now: u128) {
        let c = u128::from(self.config.capacity_bps.unwrap_or(1).max(1));
        while let Some(&(end, size)) = self.queue.front() {
            if end > now {
                break;
            }
            self.queue.pop_front();
            self.backlog -= u64::from(size);
            // Every packet still queued arrived before this one left (we
            // drain before each arrival), so this is the occupancy then.
            self.stats.dequeues += 1;
            self.stats.sum_backlog_bytes += u128::from(self.backlog);
            self.stats.max_backlog_bytes = self.stats.max_backlog_bytes.max(self.backlog);
            if let Some(s) = self.samples.as_mut().filter(|s| s.len() < MAX_SAMPLES) {
                s.push(QueueSample {
                    at_us: u64::try_from(end / c / 1000).unwrap_or(u64::MAX),
                    backlog_bytes: self.backlog,
                });
            }
        }
    }

    /// Offers a packet of `size` bytes of `flow` at `now`.
    pub fn offer(&mut self, now: Instant, size: u32, flow: FlowId) -> Offer {
        self.stats.packets_in += 1;
        self.stats.bytes_in += u64::from(size);
        // Untraced flows (the usual case) find no trace and cost one scan
        // of an empty or short list.
        let trace = self.traces.iter().position(|t| t.flow == flow);
        if let Some(k) = trace {
            self.traces[k].counts.packets_in += 1;
        }
        if self.loss.next_lost(&mut self.rng) {
            self.stats.drops_loss += 1;
            if let Some(k) = trace {
                self.traces[k].counts.drops_loss += 1;
            }
            return Offer::Lost;
        }
        let mut end_us = now.as_micros();
        if let Some(capacity) = self.config.capacity_bps {
            let c = u128::from(capacity.max(1));
            let now_bn = u128::from(now.as_micros()) * 1000 * c;
            self.drain(now_bn);
            if self.backlog + u64::from(size) > self.limit || self.queue.len() >= self.limit_packets
            {
                self.stats.drops_queue += 1;
                if let Some(k) = trace {
                    self.traces[k].counts.drops_queue += 1;
                }
                return Offer::QueueDrop;
            }
            let start = self.busy_until.max(now_bn);
            let end = start + transmission(size);
            self.busy_until = end;
            self.queue.push_back((end, size));
            self.backlog += u64::from(size);
            let wait_us = u64::try_from((start - now_bn) / c / 1000).unwrap_or(u64::MAX);
            self.stats.sum_wait_us += wait_us;
            if let Some(t) = trace.map(|k| &mut self.traces[k]) {
                t.counts.sum_wait_us += wait_us;
                if t.waits.len() < MAX_SAMPLES {
                    t.waits.push(WaitSample {
                        at_us: now.as_micros(),
                        wait_us,
                    });
                }
            }
            // Rounded up: a link never beats its capacity.
            end_us = u64::try_from(end.div_ceil(c * 1000)).unwrap_or(u64::MAX);
        }
        let mut exit = end_us + ppspp_core::time::duration_micros(self.config.delay);
        let jitter = ppspp_core::time::duration_micros(self.config.jitter);
        if jitter > 0 {
            exit += self.rng.random_range(0..=jitter);
        }
        // Jitter never reorders a link.
        exit = exit.max(self.last_exit_us);
        self.last_exit_us = exit;
        self.stats.packets_out += 1;
        self.stats.bytes_out += u64::from(size);
        Offer::Forward(Instant::from_micros(exit))
    }
}

#[cfg(test)]
#[path = "link_tests.rs"]
mod tests;
