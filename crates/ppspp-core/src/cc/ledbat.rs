//! LEDBAT, Low Extra Delay Background Transport (RFC 6817), the congestion
//! control RFC 7574 §8.16 requires for PPSPP over UDP.
//!
//! LEDBAT keeps the queue it builds at the bottleneck near `TARGET` and
//! yields to TCP: it grows the window while the measured queuing delay is
//! below target and shrinks it, in proportion, above (RFC 6817 §2.4.2):
//!
//! ```text
//! queuing_delay = FILTER(current_delays) − MIN(base_delays)
//! off_target    = (TARGET − queuing_delay) / TARGET
//! cwnd         += GAIN · off_target · bytes_newly_acked · MSS / cwnd
//! cwnd          = min(cwnd, flightsize + ALLOWED_INCREASE · MSS)   (growth only, see on_ack)
//! cwnd          = max(cwnd, MIN_CWND · MSS)
//! ```
//!
//! At zero queuing delay that is one MSS more per window of ACKs (one round
//! trip), like TCP's congestion avoidance; at twice the target, one MSS less.
//! Losses halve the window at most once per round trip, never below
//! `MIN_CWND`; a retransmission timeout drops it to one MSS (RFC 6817 §2.4.2,
//! "if no ACKs are received within a CTO": `cwnd = 1 · MSS`).
//!
//! # Slow start (our choice)
//! RFC 6817 gives only `INIT_CWND` and leaves how to ramp up open. Growing by
//! one MSS per round trip from 2 MSS takes seconds to fill even a modest path
//! (10 Mbit/s × 50 ms is 57 datagrams of 1100 bytes: ≈ 55 round trips, about
//! 3 s, and much longer at higher rates), which matters for PPSPP's many short
//! channels. So, unless [`LedbatConfig::slow_start`] is off, a channel starts
//! in slow start: the window grows by the bytes acknowledged (doubling per
//! round trip) until the queuing delay exceeds `TARGET / 2`, a loss, or, after
//! a timeout, half the window the timeout found. Half the target, because the
//! delay signal is a round trip late and the window doubles meanwhile, so the
//! queue overshoots what the exiting ACK reported (libutp and libtorrent leave
//! slow start near the target itself, LEDBAT++ at ¾ of it).
//!
//! The cost: at exit the queue is already about `TARGET + base RTT` (on a
//! 50 ms path with a 100 ms target, ≈ 150 ms), and LEDBAT's linear decrease
//! works the excess off with a time constant of `TARGET · RTT · capacity /
//! MSS` (≈ 17 s at 10 Mbit/s), against a ramp-up that would otherwise take
//! as long from below. `tests/ledbat_bottleneck.rs` measures both.
//!
//! # Pacing
//! [`pacing_rate`](CongestionController::pacing_rate) spreads a window over
//! 0.8 of a round trip (`cwnd / srtt × 1.25`): fast enough that the window,
//! not the pacer, limits the rate and the ACK clock keeps working, slow enough
//! to avoid line-rate bursts that would inflate the very delay samples LEDBAT
//! steers by. In slow start the gain is 2, otherwise the pacer would cap the
//! doubling at ×1.25 per round trip (Linux TCP uses the same two gains, 2 and
//! 1.2).

use std::time::Duration;

use super::delay::DelayEstimator;
use super::rtt::RttEstimator;
use super::{AckSample, CongestionController, CongestionFactory};
use crate::time::{duration_micros, Instant};

/// LEDBAT's parameters (RFC 6817 §2.5; defaults are the RFC's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LedbatConfig {
    /// The queuing delay to aim for; RFC 6817 §2.5 caps it at 100 ms, the
    /// value BEP 29, libutp, libtorrent and ns-3 use (`ledbat:<N>ms`
    /// chooses another).
    ///
    /// A lower target on live viewers' uplinks does not shorten a live
    /// hop: `live-500` with 200 viewers for 180 s, seed 1 (`--set
    /// peers.viewers.congestion=ledbat:Nms`), continuity / lag p50 / lag
    /// p95 / delivery p50: 100 ms 0.9945 / 4.85 / 7.89 / 2.08 s, 50 ms
    /// 0.987 / 5.1 / 8.0 / 2.11 s, 25 ms 0.979 / 5.6 / 7.8 / 2.16 s. Most
    /// of a hop is the HAVE's and the REQUEST's trip, not the queue
    /// (`bench/live_hops.py`).
    pub target: Duration,
    /// How fast the window reacts; at most 1 (RFC 6817 §2.5), so LEDBAT
    /// never ramps up faster than TCP.
    pub gain: f64,
    /// Buckets of base-delay minima kept (RFC 6817 §2.5: 10).
    pub base_history: usize,
    /// The length of one base-delay bucket (RFC 6817 §3.1.1: one minute).
    pub base_bucket: Duration,
    /// Samples the current delay is the minimum of (RFC 6817 §3.1.2: ~4).
    pub current_filter: usize,
    /// The initial window in MSS (RFC 6817 §2.5: 2).
    pub init_cwnd: u64,
    /// The smallest window after a loss or in steady state, in MSS
    /// (RFC 6817 §2.5: 2). A timeout still goes down to 1 MSS.
    pub min_cwnd: u64,
    /// How far the window may exceed the bytes in flight, in MSS
    /// (RFC 6817 §2.5: 1; must be positive, 0 counts as 1).
    pub allowed_increase: u64,
    /// Whether to ramp up in slow start (see the module notes; on by default).
    pub slow_start: bool,
    /// Pacing gain over `cwnd / srtt` outside slow start.
    pub pacing_gain: f64,
    /// Pacing gain over `cwnd / srtt` during slow start.
    pub slow_start_pacing_gain: f64,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig {
            target: Duration::from_millis(100),
            gain: 1.0,
            base_history: 10,
            base_bucket: Duration::from_secs(60),
            current_filter: 4,
            init_cwnd: 2,
            min_cwnd: 2,
            allowed_increase: 1,
            slow_start: true,
            pacing_gain: 1.25,
            slow_start_pacing_gain: 2.0,
        }
    }
}

/// A LEDBAT controller for one direction of one channel (RFC 6817).
#[derive(Clone, Debug)]
pub struct Ledbat {
    config: LedbatConfig,
    mss: f64,
    /// Window in bytes; fractional so that the small per-ACK steps add up.
    cwnd: f64,
    /// Slow start ends at this window (infinite until a timeout sets it).
    ssthresh: f64,
    in_slow_start: bool,
    delays: DelayEstimator,
    rtt: RttEstimator,
    /// When the window was last cut for a loss or timeout.
    last_cut: Option<Instant>,
    /// The largest flight reported in the current and the previous period of
    /// one round trip, for the ALLOWED_INCREASE cap (see `on_ack`).
    flight_peak: FlightPeak,
}

/// The largest flight over roughly the last round trip: the maximum over
/// the current period of one smoothed RTT and the one before it.
#[derive(Clone, Copy, Debug, Default)]
struct FlightPeak {
    start: Option<Instant>,
    current: u64,
    previous: u64,
}

impl FlightPeak {
    /// Records `flight` at `now`; returns the peak over the last one to two
    /// periods of `period`.
    fn update(&mut self, now: Instant, flight: u64, period: Duration) -> u64 {
        match self.start {
            Some(start) if now.saturating_since(start) < period => {
                self.current = self.current.max(flight);
            }
            Some(start) if now.saturating_since(start) < period * 2 => {
                self.previous = self.current;
                self.current = flight;
                self.start = Some(now);
            }
            // The first sample, or a gap of two periods or more: older
            // peaks say nothing about the last round trip.
            _ => {
                self.previous = 0;
                self.current = flight;
                self.start = Some(now);
            }
        }
        self.current.max(self.previous)
    }
}

impl CongestionFactory for LedbatConfig {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn build(&self, mss: u64) -> Box<dyn CongestionController> {
        Box::new(Ledbat::new(mss, *self))
    }
}

/// How long "one round trip" lasts before any RTT sample, for the
/// once-per-round-trip loss rule: RFC 6298's initial timeout.
const RTT_BEFORE_SAMPLES: Duration = Duration::from_secs(1);

impl Ledbat {
    /// A controller for datagrams of `mss` bytes (for PPSPP, a DATA datagram:
    /// a chunk plus headers). An `mss` of 0 counts as 1, a zero target as
    /// 1 µs, and the window counts of `config` as at least 1.
    pub fn new(mss: u64, config: LedbatConfig) -> Self {
        let mut config = config;
        config.target = config.target.max(Duration::from_micros(1));
        config.init_cwnd = config.init_cwnd.max(1);
        config.min_cwnd = config.min_cwnd.max(1);
        config.allowed_increase = config.allowed_increase.max(1);
        let mss = mss.max(1) as f64;
        Ledbat {
            delays: DelayEstimator::new(
                config.base_history,
                config.base_bucket,
                config.current_filter,
            ),
            cwnd: config.init_cwnd as f64 * mss,
            ssthresh: f64::INFINITY,
            in_slow_start: config.slow_start,
            rtt: RttEstimator::default(),
            last_cut: None,
            flight_peak: FlightPeak::default(),
            mss,
            config,
        }
    }

    /// The parameters in use (after the adjustments [`Ledbat::new`] makes).
    pub fn config(&self) -> &LedbatConfig {
        &self.config
    }

    /// Whether the controller is in slow start.
    pub fn in_slow_start(&self) -> bool {
        self.in_slow_start
    }

    /// The current queuing delay estimate (RFC 6817 §3.1.2), once a delay
    /// sample arrived.
    pub fn queuing_delay(&self) -> Option<Duration> {
        self.delays.queuing_delay()
    }

    /// The one-way delay bookkeeping (base and current delay).
    pub fn delays(&self) -> &DelayEstimator {
        &self.delays
    }

    /// The smoothed round-trip time this controller has seen.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }

    fn min_window(&self) -> f64 {
        self.config.min_cwnd as f64 * self.mss
    }

    /// RFC 6817 §2.4.2: grow by `bytes` in slow start, else by the LEDBAT
    /// rule, for one ACK with queuing delay `qd`.
    fn grow(&mut self, qd: Duration, bytes: f64) {
        let target = duration_micros(self.config.target) as f64;
        let qd = duration_micros(qd) as f64;
        if self.in_slow_start {
            if qd > target / 2.0 {
                self.in_slow_start = false;
            } else {
                self.cwnd = (self.cwnd + bytes).min(self.ssthresh.max(self.cwnd));
                if self.cwnd >= self.ssthresh {
                    self.in_slow_start = false;
                }
                return;
            }
        }
        let off_target = (target - qd) / target;
        self.cwnd += self.config.gain * off_target * bytes * self.mss / self.cwnd;
    }

    /// Whether the window was cut (for a loss or a timeout) less than a round
    /// trip ago, so that a new loss belongs to the same congestion event.
    fn cut_recently(&self, now: Instant) -> bool {
        let round_trip = self.rtt.srtt().unwrap_or(RTT_BEFORE_SAMPLES);
        self.last_cut
            .is_some_and(|last| now.saturating_since(last) < round_trip)
    }
}

impl CongestionController for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }

    fn window(&self) -> u64 {
        self.cwnd as u64
    }

    fn on_sent(&mut self, _now: Instant, _bytes: u64, _flight: u64) {
        // The flight size that matters arrives with each ACK.
    }

    fn on_ack(&mut self, now: Instant, ack: &AckSample) {
        if let Some(rtt) = ack.rtt {
            self.rtt.on_sample(rtt);
        }
        // Without a delay sample there is no signal to steer by: the window
        // neither grows nor shrinks (RFC 6817 §2.4.2 updates the window only
        // together with the delay estimate).
        let Some(delay) = ack.one_way_delay else {
            return;
        };
        self.delays.on_sample(now, delay);
        let qd = self.delays.queuing_delay().unwrap_or(Duration::ZERO);
        let before = self.cwnd;
        self.grow(qd, ack.bytes as f64);
        // RFC 6817 §2.4.2: the window may exceed the flight by at most
        // ALLOWED_INCREASE·MSS, so an application-limited sender does not
        // build a window it never tested. Unlike the RFC's pseudocode, the
        // cap only stops growth; it does not shrink the window of a sender
        // that is not filling it (the spirit of RFC 7661): in PPSPP the
        // flight is often limited by the other side's requests, and a
        // collapsing cap would pin both windows near a few MSS. Delay above
        // target still shrinks the window through `grow`, and never below
        // MIN_CWND.
        //
        // "The flight" is the largest flight of the last round trip, not the
        // one at this ACK (RFC 7661's pipeACK and the maxFS of
        // draft-ietf-ccwg-ratelimited-increase measure the tested window
        // over time the same way): a window-limited flight dips within every round trip —
        // the receiver's request window refills in batches, ACKs and paced
        // bursts arrive in clumps — and a cap on the flight at each ACK
        // let the window grow only on the few ACKs that came at a peak,
        // slowing LEDBAT's growth many times over (measured in the lab's
        // ledbat-vs-tcp scenario: the queue stalled at 55 ms of a 100 ms
        // target, and the window came back after TCP at 2 MSS per second
        // instead of one per round trip).
        let period = self.rtt.srtt().unwrap_or(RTT_BEFORE_SAMPLES);
        let tested = self.flight_peak.update(now, ack.flight, period);
        let allowed = tested as f64 + self.config.allowed_increase as f64 * self.mss;
        if self.cwnd > before {
            self.cwnd = self.cwnd.min(allowed.max(before));
        }
        self.cwnd = self.cwnd.max(self.min_window());
    }

    fn on_loss(&mut self, now: Instant, _bytes: u64) {
        // RFC 6817 §2.4.2 "on data loss": halve, at most once per round trip
        // (later losses of the same round trip are the same event, and so are
        // losses right after a timeout), never below MIN_CWND. A loss ends
        // slow start.
        if self.cut_recently(now) {
            return;
        }
        self.cwnd = self.cwnd.min((self.cwnd / 2.0).max(self.min_window()));
        self.in_slow_start = false;
        self.last_cut = Some(now);
    }

    fn on_timeout(&mut self, now: Instant) {
        // RFC 6817 §2.4.2: no ACK within the congestion timeout means extreme
        // congestion or a changed path: restart from one MSS. Slow start (if
        // enabled) brings the window back to half of what it was, then LEDBAT
        // takes over, as TCP does after a timeout (RFC 5681 §3.1).
        self.ssthresh = (self.cwnd / 2.0).max(self.min_window());
        self.cwnd = self.mss;
        self.in_slow_start = self.config.slow_start;
        self.last_cut = Some(now);
    }

    fn pacing_rate(&self, srtt: Duration) -> Option<u64> {
        if srtt.is_zero() {
            return None;
        }
        let gain = if self.in_slow_start {
            self.config.slow_start_pacing_gain
        } else {
            self.config.pacing_gain
        };
        Some((self.cwnd * gain / srtt.as_secs_f64()) as u64)
    }

    fn queuing_delay(&self) -> Option<Duration> {
        self.delays.queuing_delay()
    }
}

#[cfg(test)]
mod tests;
