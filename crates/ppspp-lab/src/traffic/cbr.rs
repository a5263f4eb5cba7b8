//! A constant-bit-rate UDP source (experiment E4's video-like flow: 750 kb/s
//! in 500-byte packets, one every 5.33 ms).
//!
//! The n-th packet is due at `start + round(n · size · 8 / rate)` seconds,
//! computed afresh for every packet in integer arithmetic, so the schedule
//! never drifts the way adding a rounded interval again and again would.

use std::collections::VecDeque;

use ppspp_core::time::Instant;

use crate::agent::Agent;
use crate::packet::{Body, FlowId, HostId, Packet};

/// What a [`CbrSource`] sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CbrConfig {
    /// Sending host.
    pub src: HostId,
    /// Receiving host.
    pub dst: HostId,
    /// The flow its packets carry.
    pub flow: FlowId,
    /// Bits per second on the wire (headers included, as links count).
    pub rate_bps: u64,
    /// Bytes per packet on the wire, headers included.
    pub size: u32,
    /// When the first packet goes out.
    pub start: Instant,
    /// No packet is due at or after this instant; `None` sends for ever.
    pub stop: Option<Instant>,
}

impl CbrConfig {
    /// A flow of `rate_bps` in `size`-byte packets from `start`, for ever.
    pub fn new(
        src: HostId,
        dst: HostId,
        flow: FlowId,
        rate_bps: u64,
        size: u32,
        start: Instant,
    ) -> CbrConfig {
        CbrConfig {
            src,
            dst,
            flow,
            rate_bps,
            size,
            start,
            stop: None,
        }
    }
}

/// A constant-bit-rate UDP source: sends [`Body::Probe`] packets on a fixed
/// schedule and ignores whatever it receives.
#[derive(Clone, Debug)]
pub struct CbrSource {
    config: CbrConfig,
    /// Index of the next packet to schedule (also its sequence number).
    next: u64,
    /// Packets due but not yet drained by the engine.
    out: VecDeque<Packet>,
    packets_sent: u64,
    bytes_sent: u64,
}

impl CbrSource {
    /// A source following `config`.
    ///
    /// # Panics
    /// If the rate or the packet size is zero: such a flow has no schedule.
    pub fn new(config: CbrConfig) -> CbrSource {
        assert!(config.rate_bps > 0, "CBR rate must be positive");
        assert!(config.size > 0, "CBR packet size must be positive");
        CbrSource {
            config,
            next: 0,
            out: VecDeque::new(),
            packets_sent: 0,
            bytes_sent: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &CbrConfig {
        &self.config
    }

    /// When packet `n` is due: exact integer arithmetic, rounded to the
    /// nearest microsecond, independent of the packets before it.
    pub fn send_time(&self, n: u64) -> Instant {
        let bits = u128::from(n) * u128::from(self.config.size) * 8;
        let rate = u128::from(self.config.rate_bps);
        let micros = (bits * 1_000_000 + rate / 2) / rate;
        let offset = u64::try_from(micros).unwrap_or(u64::MAX);
        Instant::from_micros(self.config.start.as_micros().saturating_add(offset))
    }

    /// When the next packet is due, unless the flow has stopped.
    fn next_due(&self) -> Option<Instant> {
        let at = self.send_time(self.next);
        match self.config.stop {
            Some(stop) if at >= stop => None,
            _ => Some(at),
        }
    }

    /// Queues every packet due by `now`. A late caller gets the missed
    /// packets at once, stamped with the time they actually leave.
    fn generate(&mut self, now: Instant) {
        while let Some(at) = self.next_due() {
            if at > now {
                break;
            }
            self.out.push_back(Packet {
                src: self.config.src,
                dst: self.config.dst,
                flow: self.config.flow,
                size: self.config.size,
                body: Body::Probe {
                    seq: self.next,
                    sent: now,
                },
            });
            self.next += 1;
        }
    }

    /// Packets handed to the network so far.
    pub fn packets_sent(&self) -> u64 {
        self.packets_sent
    }

    /// Bytes (on the wire) handed to the network so far.
    pub fn bytes_sent(&self) -> u64 {
        self.bytes_sent
    }
}

impl Agent for CbrSource {
    fn on_packet(&mut self, _now: Instant, _packet: Packet) {}

    fn on_timeout(&mut self, now: Instant) {
        self.generate(now);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.generate(now);
        let packet = self.out.pop_front()?;
        self.packets_sent += 1;
        self.bytes_sent += u64::from(packet.size);
        Some(packet)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if self.out.is_empty() {
            self.next_due()
        } else {
            // Packets are waiting for the engine to drain them: ask again
            // at once rather than skip past them.
            self.out.front().map(|p| match p.body {
                Body::Probe { sent, .. } => sent,
                _ => unreachable!("a CBR source only queues probes"),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e4(start: Instant, stop: Option<Instant>) -> CbrSource {
        let mut c = CbrConfig::new(HostId(1), HostId(2), FlowId(7), 750_000, 500, start);
        c.stop = stop;
        CbrSource::new(c)
    }

    /// Drives `src` the way the engine does, until `end`; returns the
    /// (send time, seq) of every packet.
    fn run(src: &mut CbrSource, end: Instant) -> Vec<(Instant, u64)> {
        let mut sent = Vec::new();
        while let Some(at) = src.poll_timeout() {
            if at > end {
                break;
            }
            src.on_timeout(at);
            while let Some(p) = src.poll_transmit(at) {
                assert_eq!(
                    (p.src, p.dst, p.flow, p.size),
                    (HostId(1), HostId(2), FlowId(7), 500)
                );
                match p.body {
                    Body::Probe { seq, sent: s } => sent.push((s, seq)),
                    other => panic!("unexpected body {other:?}"),
                }
            }
        }
        sent
    }

    #[test]
    fn e4_schedule_is_exact_and_does_not_drift() {
        let start = Instant::from_micros(1_000_000);
        let mut src = e4(start, None);
        // 4000 bits at 750 kb/s: 5333.33 µs. Packet 3 is due at exactly
        // 16 ms; packet 1 at 5333 µs, packet 2 at 10667 µs (rounded).
        let sent = run(&mut src, Instant::from_micros(1_016_000));
        let times: Vec<u64> = sent
            .iter()
            .map(|(t, _)| t.as_micros() - 1_000_000)
            .collect();
        assert_eq!(times, vec![0, 5333, 10667, 16000]);
        assert_eq!(
            sent.iter().map(|s| s.1).collect::<Vec<_>>(),
            vec![0, 1, 2, 3]
        );
        // After 1000 s the n-th packet is still exactly on time (adding a
        // rounded 5333 µs each time would be 62.5 ms early by then).
        assert_eq!(
            src.send_time(187_500),
            Instant::from_micros(1_000_000 + 1_000_000_000)
        );
    }

    #[test]
    fn rate_and_counts_over_ten_seconds() {
        let mut src = e4(Instant::ZERO, Some(Instant::from_micros(10_000_000)));
        let sent = run(&mut src, Instant::from_micros(20_000_000));
        // 10 s at 187.5 packets/s: packets 0..=1874 are due before 10 s.
        assert_eq!(sent.len(), 1875);
        assert_eq!(src.packets_sent(), 1875);
        assert_eq!(src.bytes_sent(), 1875 * 500);
        assert!(sent.iter().all(|(t, _)| t.as_micros() < 10_000_000));
        assert_eq!(src.poll_timeout(), None, "stopped for good");
    }

    #[test]
    fn stop_is_exclusive_and_nothing_before_start() {
        // Packet 3 is due at exactly 16 ms: a stop there excludes it.
        let start = Instant::from_micros(500);
        let mut src = e4(start, Some(Instant::from_micros(16_500)));
        assert_eq!(src.poll_transmit(Instant::from_micros(499)), None);
        assert_eq!(src.poll_timeout(), Some(start));
        let sent = run(&mut src, Instant::MAX);
        assert_eq!(sent.len(), 3);
    }

    #[test]
    fn a_late_caller_gets_the_missed_packets_at_once() {
        let mut src = e4(Instant::ZERO, None);
        let late = Instant::from_micros(16_000);
        let mut seqs = Vec::new();
        while let Some(p) = src.poll_transmit(late) {
            if let Body::Probe { seq, sent } = p.body {
                assert_eq!(sent, late);
                seqs.push(seq);
            }
        }
        assert_eq!(seqs, vec![0, 1, 2, 3]);
        assert_eq!(src.poll_timeout(), Some(Instant::from_micros(21_333)));
    }
}
