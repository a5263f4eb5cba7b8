//! A Pareto on/off UDP source, after ns-2's `Application/Traffic/Pareto`
//! (`POO_Traffic`), the bursty cross traffic of experiment E5.
//!
//! During ON the source sends fixed-size packets at the burst rate; ON and
//! OFF lengths are Pareto with the given means and shape (scale = mean ·
//! (shape − 1) / shape, so shape > 1 for a finite mean; 1.5 gives the
//! heavy tails that make aggregate traffic self-similar). As in ns-2, an ON
//! period is drawn as a whole number of packets, `max(1, round(X))` with
//! `X` Pareto of mean `mean_on / interval` packets; unlike ns-2 that mean is
//! not rounded first, so a mean ON time below one packet interval is the
//! only case where the long-run rate departs from
//! `burst · on / (on + off)`. ON lasts `n · interval` (the last packet's
//! slot included), then OFF, then the next burst.

use std::collections::VecDeque;
use std::time::Duration;

use ppspp_core::time::Instant;
use rand::rngs::Xoshiro256PlusPlus;
use rand_distr::{Distribution, Pareto};

use crate::agent::Agent;
use crate::packet::{Body, FlowId, HostId, Packet};

/// What a [`ParetoOnOff`] source sends.
#[derive(Clone, Debug, PartialEq)]
pub struct OnOffConfig {
    /// Sending host.
    pub src: HostId,
    /// Receiving host.
    pub dst: HostId,
    /// The flow its packets carry.
    pub flow: FlowId,
    /// Bits per second on the wire while ON.
    pub burst_rate_bps: u64,
    /// Bytes per packet on the wire, headers included.
    pub size: u32,
    /// Mean length of an ON period.
    pub mean_on: Duration,
    /// Mean length of an OFF period (zero: always ON).
    pub mean_off: Duration,
    /// Pareto shape of both (ns-2's default and E5's: 1.5); must exceed 1.
    pub shape: f64,
    /// When the first ON period begins.
    pub start: Instant,
    /// No packet is sent at or after this instant; `None` for ever.
    pub stop: Option<Instant>,
}

/// A Pareto on/off UDP source sending [`Body::Probe`] packets.
#[derive(Clone, Debug)]
pub struct ParetoOnOff {
    config: OnOffConfig,
    rng: Xoshiro256PlusPlus,
    /// Pareto of the ON length in packets.
    on: Pareto<f64>,
    /// Pareto of the OFF length in µs; `None` when `mean_off` is zero.
    off: Option<Pareto<f64>>,
    /// When the current burst began.
    burst_start: Instant,
    /// Packets in the current burst.
    burst_len: u64,
    /// Index within the burst of the next packet.
    in_burst: u64,
    /// Sequence number of the next packet.
    seq: u64,
    out: VecDeque<Packet>,
    packets_sent: u64,
    bytes_sent: u64,
    bursts: u64,
    /// Every OFF period drawn so far, as `[from, to)`.
    #[cfg(test)]
    offs: Vec<(Instant, Instant)>,
}

impl ParetoOnOff {
    /// A source following `config`, drawing from `rng` (give each flow its
    /// own stream: [`crate::rng::rng`] with [`crate::rng::Stream::Flow`]).
    ///
    /// # Panics
    /// If the rate, the size or the mean ON time is zero, or the shape is
    /// not above 1 (the mean would be infinite).
    pub fn new(config: OnOffConfig, rng: Xoshiro256PlusPlus) -> ParetoOnOff {
        assert!(
            config.burst_rate_bps > 0 && config.size > 0,
            "on/off rate and size must be positive"
        );
        assert!(
            config.shape > 1.0,
            "Pareto shape must exceed 1 for a finite mean"
        );
        assert!(!config.mean_on.is_zero(), "mean ON time must be positive");
        let factor = (config.shape - 1.0) / config.shape;
        let interval_s = f64::from(config.size) * 8.0 / config.burst_rate_bps as f64;
        let mean_packets = config.mean_on.as_secs_f64() / interval_s;
        let on =
            Pareto::new(mean_packets * factor, config.shape).expect("positive scale and shape");
        let off = (!config.mean_off.is_zero()).then(|| {
            let mean_us = config.mean_off.as_secs_f64() * 1e6;
            Pareto::new(mean_us * factor, config.shape).expect("positive scale and shape")
        });
        let mut source = ParetoOnOff {
            burst_start: config.start,
            config,
            rng,
            on,
            off,
            burst_len: 0,
            in_burst: 0,
            seq: 0,
            out: VecDeque::new(),
            packets_sent: 0,
            bytes_sent: 0,
            bursts: 0,
            #[cfg(test)]
            offs: Vec::new(),
        };
        source.draw_burst();
        source
    }

    /// The configuration.
    pub fn config(&self) -> &OnOffConfig {
        &self.config
    }

    /// Offset of packet `k` of a burst from the burst's start: exact
    /// integer arithmetic, rounded to the microsecond, so bursts of any
    /// length keep the burst rate without drift.
    fn offset(&self, k: u64) -> u64 {
        let bits = u128::from(k) * u128::from(self.config.size) * 8;
        let rate = u128::from(self.config.burst_rate_bps);
        u64::try_from((bits * 1_000_000 + rate / 2) / rate).unwrap_or(u64::MAX)
    }

    fn draw_burst(&mut self) {
        let x = self.on.sample(&mut self.rng).round();
        // `as` saturates: a tail draw beyond u64 is simply a very long ON.
        self.burst_len = (x as u64).max(1);
        self.in_burst = 0;
        self.bursts += 1;
    }

    /// When the next packet is due, unless the flow has stopped.
    fn next_due(&self) -> Option<Instant> {
        let at = Instant::from_micros(
            self.burst_start
                .as_micros()
                .saturating_add(self.offset(self.in_burst)),
        );
        match self.config.stop {
            Some(stop) if at >= stop => None,
            _ => Some(at),
        }
    }

    /// Queues every packet due by `now`, drawing OFF and ON periods as
    /// bursts end.
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
                    seq: self.seq,
                    sent: now,
                },
            });
            self.seq += 1;
            self.in_burst += 1;
            if self.in_burst == self.burst_len {
                // ON ends after the last packet's slot; OFF follows.
                let on_end = self
                    .burst_start
                    .as_micros()
                    .saturating_add(self.offset(self.burst_len));
                let off_us = match &self.off {
                    Some(off) => off.sample(&mut self.rng).round() as u64,
                    None => 0,
                };
                self.burst_start = Instant::from_micros(on_end.saturating_add(off_us));
                #[cfg(test)]
                self.offs
                    .push((Instant::from_micros(on_end), self.burst_start));
                self.draw_burst();
            }
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

    /// ON periods begun so far (the current one included).
    pub fn bursts(&self) -> u64 {
        self.bursts
    }
}

impl Agent for ParetoOnOff {
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
        match self.out.front() {
            Some(Packet {
                body: Body::Probe { sent, .. },
                ..
            }) => Some(*sent),
            _ => self.next_due(),
        }
    }
}

#[cfg(test)]
#[path = "onoff_tests.rs"]
mod tests;
