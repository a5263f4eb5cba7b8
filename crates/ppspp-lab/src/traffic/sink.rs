//! A UDP sink: the receiving end of CBR and on/off flows. It never sends;
//! it counts what arrives per flow and measures one-way delay and
//! inter-arrival times (the video jitter of experiment E4).

use std::collections::BTreeMap;
use std::time::Duration;

use ppspp_core::time::{duration_micros, Instant};

use crate::agent::Agent;
use crate::packet::{Body, FlowId, Packet};

/// Count, sum, minimum and maximum of a series of durations, and all the
/// samples when asked for (quantiles need them; long runs may not want the
/// memory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DelayStats {
    /// Samples recorded.
    pub count: u64,
    /// Their sum, in µs.
    pub sum_us: u64,
    /// The smallest (zero when none).
    pub min: Duration,
    /// The largest.
    pub max: Duration,
    /// Every sample in µs, in arrival order, if kept.
    pub samples: Option<Vec<u64>>,
}

impl DelayStats {
    /// Empty stats that keep every sample if `keep`.
    pub fn new(keep: bool) -> DelayStats {
        DelayStats {
            samples: keep.then(Vec::new),
            ..DelayStats::default()
        }
    }

    /// Adds one sample.
    pub fn record(&mut self, d: Duration) {
        let us = duration_micros(d);
        if self.count == 0 || d < self.min {
            self.min = d;
        }
        self.max = self.max.max(d);
        self.count += 1;
        self.sum_us = self.sum_us.saturating_add(us);
        if let Some(samples) = &mut self.samples {
            samples.push(us);
        }
    }

    /// The mean, if any sample.
    pub fn mean(&self) -> Option<Duration> {
        (self.count > 0).then(|| Duration::from_micros(self.sum_us / self.count))
    }

    /// The `q`-quantile (0 ≤ q ≤ 1, nearest rank), if samples were kept
    /// and there is one.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        let mut s = self.samples.clone()?;
        if s.is_empty() {
            return None;
        }
        s.sort_unstable();
        let rank = (q.clamp(0.0, 1.0) * s.len() as f64).ceil() as usize;
        Some(Duration::from_micros(s[rank.clamp(1, s.len()) - 1]))
    }
}

/// What a [`UdpSink`] saw of one flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowStats {
    /// Packets received.
    pub packets: u64,
    /// Bytes received, on the wire.
    pub bytes: u64,
    /// One-way delay (arrival − `sent`) of [`Body::Probe`] packets.
    pub delay: DelayStats,
    /// Time between consecutive arrivals of the flow (any body).
    pub inter_arrival: DelayStats,
    /// RFC 3550 §6.4.1 interarrival jitter, in µs: a running mean of the
    /// change in one-way delay between consecutive probes, gain 1/16.
    pub jitter_us: f64,
    /// Sum of [`FlowStats::jitter_us`] after each probe that updated it: a
    /// receiver reports the running value (RTCP, RFC 3550 §6.4.1), and its
    /// last value says only how the flow ended, so a run is summarised by
    /// the mean of what it would have reported ([`FlowStats::jitter_mean_us`]).
    pub jitter_sum_us: f64,
    /// How many probes updated the jitter.
    pub jitter_updates: u64,
    /// Probes that arrived with a lower sequence number than one before.
    pub reordered: u64,
    /// Highest probe sequence number seen.
    pub highest_seq: Option<u64>,
    /// First arrival.
    pub first_arrival: Option<Instant>,
    /// Last arrival.
    pub last_arrival: Option<Instant>,
    /// Transit time (delay) of the previous probe, for the jitter.
    last_transit: Option<u64>,
}

impl FlowStats {
    /// Probes missing below the highest sequence number seen (a source
    /// numbers them from 0); duplicates would hide losses, but the network
    /// model never duplicates.
    pub fn lost(&self) -> u64 {
        self.highest_seq
            .map_or(0, |h| (h + 1).saturating_sub(self.packets))
    }

    /// The mean of the running RFC 3550 jitter over the flow's probes, µs
    /// (None before two probes arrived).
    pub fn jitter_mean_us(&self) -> Option<f64> {
        (self.jitter_updates > 0).then(|| self.jitter_sum_us / self.jitter_updates as f64)
    }

    /// Mean received rate in bits/s between the first and last arrival.
    pub fn rate_bps(&self) -> Option<f64> {
        let span = self.last_arrival?.saturating_since(self.first_arrival?);
        (!span.is_zero()).then(|| self.bytes as f64 * 8.0 / span.as_secs_f64())
    }
}

/// The receiving end of UDP cross-traffic flows; one sink may serve many.
#[derive(Clone, Debug, Default)]
pub struct UdpSink {
    flows: BTreeMap<FlowId, FlowStats>,
    keep_samples: bool,
}

impl UdpSink {
    /// A sink keeping only summaries.
    pub fn new() -> UdpSink {
        UdpSink::default()
    }

    /// A sink that also keeps every delay and inter-arrival sample (for
    /// quantiles and CDFs).
    pub fn keeping_samples() -> UdpSink {
        UdpSink {
            flows: BTreeMap::new(),
            keep_samples: true,
        }
    }

    /// What arrived of `flow`, if anything.
    pub fn flow(&self, flow: FlowId) -> Option<&FlowStats> {
        self.flows.get(&flow)
    }

    /// Every flow seen, in flow order.
    pub fn flows(&self) -> impl Iterator<Item = (FlowId, &FlowStats)> {
        self.flows.iter().map(|(f, s)| (*f, s))
    }

    /// Packets received over all flows.
    pub fn total_packets(&self) -> u64 {
        self.flows.values().map(|s| s.packets).sum()
    }

    /// Bytes received over all flows.
    pub fn total_bytes(&self) -> u64 {
        self.flows.values().map(|s| s.bytes).sum()
    }
}

impl Agent for UdpSink {
    fn on_packet(&mut self, now: Instant, packet: Packet) {
        let keep = self.keep_samples;
        let s = self.flows.entry(packet.flow).or_insert_with(|| FlowStats {
            delay: DelayStats::new(keep),
            inter_arrival: DelayStats::new(keep),
            ..FlowStats::default()
        });
        s.packets += 1;
        s.bytes += u64::from(packet.size);
        if let Some(last) = s.last_arrival {
            s.inter_arrival.record(now.saturating_since(last));
        }
        s.first_arrival.get_or_insert(now);
        s.last_arrival = Some(now);
        if let Body::Probe { seq, sent } = packet.body {
            let transit = now.saturating_since(sent);
            s.delay.record(transit);
            let transit = duration_micros(transit);
            if let Some(prev) = s.last_transit {
                let d = transit.abs_diff(prev) as f64;
                s.jitter_us += (d - s.jitter_us) / 16.0;
                s.jitter_sum_us += s.jitter_us;
                s.jitter_updates += 1;
            }
            s.last_transit = Some(transit);
            match s.highest_seq {
                Some(h) if seq < h => s.reordered += 1,
                _ => s.highest_seq = Some(seq),
            }
        }
    }

    fn on_timeout(&mut self, _now: Instant) {}

    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        None
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::HostId;

    fn probe(flow: u32, seq: u64, sent_us: u64, size: u32) -> Packet {
        Packet {
            src: HostId(1),
            dst: HostId(2),
            flow: FlowId(flow),
            size,
            body: Body::Probe {
                seq,
                sent: Instant::from_micros(sent_us),
            },
        }
    }

    fn at(us: u64) -> Instant {
        Instant::from_micros(us)
    }

    #[test]
    fn counts_delays_and_inter_arrivals_per_flow() {
        let mut sink = UdpSink::keeping_samples();
        // Flow 1: delays 10, 30, 20 ms; arrivals at 10, 35, 40 ms.
        sink.on_packet(at(10_000), probe(1, 0, 0, 500));
        sink.on_packet(at(35_000), probe(1, 1, 5_000, 500));
        sink.on_packet(at(40_000), probe(1, 2, 20_000, 500));
        sink.on_packet(at(41_000), probe(2, 0, 40_000, 100));
        assert_eq!(sink.total_packets(), 4);
        assert_eq!(sink.total_bytes(), 1600);
        assert_eq!(
            sink.flows().map(|(f, _)| f).collect::<Vec<_>>(),
            vec![FlowId(1), FlowId(2)]
        );
        let f = sink.flow(FlowId(1)).unwrap();
        assert_eq!((f.packets, f.bytes, f.lost(), f.reordered), (3, 1500, 0, 0));
        assert_eq!(f.delay.count, 3);
        assert_eq!(f.delay.min, Duration::from_millis(10));
        assert_eq!(f.delay.max, Duration::from_millis(30));
        assert_eq!(f.delay.mean(), Some(Duration::from_millis(20)));
        assert_eq!(
            f.delay.samples.as_deref(),
            Some(&[10_000, 30_000, 20_000][..])
        );
        assert_eq!(f.delay.quantile(0.5), Some(Duration::from_millis(20)));
        assert_eq!(f.delay.quantile(1.0), Some(Duration::from_millis(30)));
        assert_eq!(
            f.inter_arrival.samples.as_deref(),
            Some(&[25_000, 5_000][..])
        );
        // Jitter: |30-10| = 20 ms then |20-30| = 10 ms, gain 1/16.
        let j = 20_000.0 / 16.0;
        let j = j + (10_000.0 - j) / 16.0;
        assert!((f.jitter_us - j).abs() < 1e-9);
        // Its mean over the two updates.
        let mean = (20_000.0 / 16.0 + j) / 2.0;
        assert!((f.jitter_mean_us().unwrap() - mean).abs() < 1e-9);
        // 1500 bytes over the 30 ms between first and last arrival.
        assert!((f.rate_bps().unwrap() - 400_000.0).abs() < 1e-6);
        let g = sink.flow(FlowId(2)).unwrap();
        assert_eq!(
            (
                g.packets,
                g.inter_arrival.count,
                g.rate_bps(),
                g.jitter_mean_us()
            ),
            (1, 0, None, None)
        );
        assert_eq!(sink.flow(FlowId(3)), None);
    }

    #[test]
    fn losses_and_reordering_from_sequence_numbers() {
        let mut sink = UdpSink::new();
        for (i, seq) in [0, 1, 4, 3, 6].into_iter().enumerate() {
            sink.on_packet(at(1000 * i as u64), probe(1, seq, 0, 100));
        }
        let f = sink.flow(FlowId(1)).unwrap();
        assert_eq!(f.highest_seq, Some(6));
        assert_eq!(f.lost(), 2, "2 and 5 missing");
        assert_eq!(f.reordered, 1, "3 after 4");
        assert_eq!(f.delay.samples, None, "summaries only");
        assert_eq!(f.delay.quantile(0.5), None);
        assert_eq!(f.delay.max, Duration::from_millis(4));
    }

    #[test]
    fn never_transmits() {
        let mut sink = UdpSink::new();
        sink.on_packet(at(5), probe(1, 0, 0, 100));
        sink.on_timeout(at(6));
        assert_eq!(sink.poll_transmit(at(6)), None);
        assert_eq!(sink.poll_timeout(), None);
    }
}
