//! Round-trip time estimation and the retransmission timeout (RFC 6298).
//!
//! The protocol keeps one [`RttEstimator`] per channel to time out DATA it
//! sent and REQUESTs it is waiting on; congestion controllers keep their own
//! to know how long "one round trip" is.
//!
//! Karn's rule (RFC 6298 §3) is the caller's business: samples must come from
//! DATA that was sent once, never from retransmitted data whose ACK is
//! ambiguous.
//!
//! # The lower bound of the timeout
//! RFC 6298 §2.4 asks for a 1 s minimum. That is far too long for a LAN or
//! loopback, where a lost datagram would stall a channel for thousands of round
//! trips. We follow what deployed stacks do instead: the variance term of
//! `RTO = SRTT + max(G, 4·RTTVAR)` never drops below 200 ms ([`RttConfig::min_margin`]),
//! which is Linux's behaviour (its RTTVAR is floored at `TCP_RTO_MIN` = 200 ms)
//! and libswift's (`ack_timeout = rtt_avg + 4·max(dev_avg, MIN_DEV)` with
//! `MIN_DEV` = 50 ms). On loopback the timeout is thus ≈ 200 ms, on a 50 ms path
//! ≈ 250 ms, and a path whose delay varies gets its 4·RTTVAR as RFC 6298 says.
//! [`RttConfig::min_rto`] (200 ms) bounds the result once more for
//! configurations with a smaller margin.

use std::time::Duration;

use crate::time::duration_micros;

/// Settings of an [`RttEstimator`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttConfig {
    /// The timeout before any sample (RFC 6298 §2.1: 1 s).
    pub initial_rto: Duration,
    /// The smallest timeout (200 ms by default; see the module notes for why
    /// not RFC 6298 §2.4's 1 s).
    pub min_rto: Duration,
    /// The largest timeout, backoff included (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// The floor of the variance term: `RTO = SRTT + max(min_margin,
    /// 4·RTTVAR)`. RFC 6298 §2.3 puts the clock granularity `G` here; 200 ms
    /// by default, as Linux and libswift effectively do.
    pub min_margin: Duration,
}

impl Default for RttConfig {
    fn default() -> Self {
        RttConfig {
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            min_margin: Duration::from_millis(200),
        }
    }
}

/// After this many consecutive backoffs the next sample restarts the
/// estimate instead of being averaged in (RFC 6298 §5: SRTT and RTTVAR are
/// likely bogus by then, e.g. after a route change).
const RESTART_AFTER_BACKOFFS: u32 = 3;

/// Smoothed round-trip time, its variation and the retransmission timeout
/// (RFC 6298 §2), with exponential backoff (§5.5). All arithmetic is in
/// integer microseconds, so results are identical on every platform.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    config: RttConfig,
    /// SRTT and RTTVAR in µs, once a sample arrived.
    smoothed: Option<(u64, u64)>,
    latest: Option<u64>,
    min: Option<u64>,
    /// Consecutive timeouts since the last sample.
    backoff: u32,
}

impl Default for RttEstimator {
    fn default() -> Self {
        RttEstimator::new(RttConfig::default())
    }
}

impl RttEstimator {
    /// An estimator without samples: [`rto`](Self::rto) is
    /// [`RttConfig::initial_rto`] until the first one.
    pub fn new(config: RttConfig) -> Self {
        RttEstimator {
            config,
            smoothed: None,
            latest: None,
            min: None,
            backoff: 0,
        }
    }

    /// The settings in use.
    pub fn config(&self) -> &RttConfig {
        &self.config
    }

    /// A new round-trip sample arrived; clears any backoff (RFC 6298 §5.7:
    /// the timeout is recomputed from the estimate).
    pub fn on_sample(&mut self, rtt: Duration) {
        let r = duration_micros(rtt);
        self.latest = Some(r);
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
        self.smoothed = match self.smoothed {
            // RFC 6298 §2.3: RTTVAR first, from the old SRTT; α = 1/8, β = 1/4.
            Some((srtt, rttvar)) if self.backoff < RESTART_AFTER_BACKOFFS => {
                let rttvar = (3 * u128::from(rttvar) + u128::from(srtt.abs_diff(r))) / 4;
                let srtt = (7 * u128::from(srtt) + u128::from(r)) / 8;
                Some((saturate(srtt), saturate(rttvar)))
            }
            // RFC 6298 §2.2: the first sample (or a restart after repeated
            // backoffs).
            _ => Some((r, r / 2)),
        };
        self.backoff = 0;
    }

    /// The retransmission timer expired: double the timeout (RFC 6298 §5.5),
    /// up to [`RttConfig::max_rto`].
    pub fn on_timeout(&mut self) {
        self.backoff = self.backoff.saturating_add(1);
    }

    /// The current retransmission timeout, backoff included.
    pub fn rto(&self) -> Duration {
        let factor = 1u32.checked_shl(self.backoff).unwrap_or(u32::MAX);
        self.base_rto()
            .saturating_mul(factor)
            .min(self.config.max_rto)
    }

    /// The timeout the estimate alone gives, `SRTT + max(G, 4·RTTVAR)`
    /// (RFC 6298 §2.3), without backoff: how long an answer normally takes
    /// at most, for decisions that must not wait out a backoff.
    pub fn base_rto(&self) -> Duration {
        let base = match self.smoothed {
            None => self.config.initial_rto,
            Some((srtt, rttvar)) => {
                let margin = duration_micros(self.config.min_margin).max(rttvar.saturating_mul(4));
                Duration::from_micros(srtt.saturating_add(margin))
            }
        };
        base.max(self.config.min_rto).min(self.config.max_rto)
    }

    /// The smoothed round-trip time, once a sample arrived.
    pub fn srtt(&self) -> Option<Duration> {
        self.smoothed.map(|(s, _)| Duration::from_micros(s))
    }

    /// The round-trip time variation, once a sample arrived.
    pub fn rttvar(&self) -> Option<Duration> {
        self.smoothed.map(|(_, v)| Duration::from_micros(v))
    }

    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest.map(Duration::from_micros)
    }

    /// The smallest sample seen.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min.map(Duration::from_micros)
    }

    /// Consecutive timeouts since the last sample.
    pub fn backoff_count(&self) -> u32 {
        self.backoff
    }
}

fn saturate(v: u128) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn initial_timeout_is_one_second() {
        let e = RttEstimator::default();
        assert_eq!(e.rto(), ms(1000));
        assert_eq!(e.srtt(), None);
        assert_eq!(e.rttvar(), None);
    }

    #[test]
    fn first_sample_sets_srtt_and_half_variance() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), Some(ms(50)));
        // 100 + max(200, 4·50) = 300 ms.
        assert_eq!(e.rto(), ms(300));
    }

    #[test]
    fn later_samples_are_smoothed_per_rfc6298() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(100));
        e.on_sample(ms(180));
        // RTTVAR = 3/4·50 + 1/4·|100 − 180| = 57.5; SRTT = 7/8·100 + 1/8·180 = 110.
        assert_eq!(e.rttvar(), Some(Duration::from_micros(57_500)));
        assert_eq!(e.srtt(), Some(ms(110)));
        assert_eq!(e.rto(), ms(110 + 230));
        assert_eq!(e.latest(), Some(ms(180)));
        assert_eq!(e.min_rtt(), Some(ms(100)));
    }

    #[test]
    fn steady_path_converges_to_srtt_plus_margin() {
        let mut e = RttEstimator::default();
        for _ in 0..200 {
            e.on_sample(ms(40));
        }
        assert_eq!(e.srtt(), Some(ms(40)));
        assert_eq!(e.rto(), ms(240));
    }

    #[test]
    fn loopback_timeout_is_the_minimum() {
        let mut e = RttEstimator::default();
        for _ in 0..50 {
            e.on_sample(Duration::from_micros(30));
        }
        assert_eq!(e.rto(), Duration::from_micros(200_030));
        let mut tight = RttEstimator::new(RttConfig {
            min_margin: Duration::from_micros(1),
            ..RttConfig::default()
        });
        for _ in 0..50 {
            tight.on_sample(Duration::from_micros(30));
        }
        assert_eq!(tight.rto(), ms(200));
    }

    #[test]
    fn timeouts_double_up_to_the_maximum_and_a_sample_resets() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(100));
        e.on_timeout();
        assert_eq!(e.rto(), ms(600));
        e.on_timeout();
        assert_eq!(e.rto(), ms(1200));
        for _ in 0..40 {
            e.on_timeout();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        assert_eq!(e.backoff_count(), 42);
        // The base timeout ignores the backoff.
        assert_eq!(e.base_rto(), ms(300));
        e.on_sample(ms(400));
        assert_eq!(e.backoff_count(), 0);
        // The sample after many backoffs restarts the estimate rather than
        // being averaged in (which would give 137.5 ms).
        assert_eq!(e.srtt(), Some(ms(400)));
        assert_eq!(e.rttvar(), Some(ms(200)));
        assert_eq!(e.rto(), ms(1200));
    }

    #[test]
    fn a_sample_after_one_backoff_is_averaged() {
        let mut e = RttEstimator::default();
        e.on_sample(ms(100));
        e.on_timeout();
        e.on_sample(ms(180));
        assert_eq!(e.srtt(), Some(ms(110)));
    }

    #[test]
    fn huge_samples_saturate() {
        let mut e = RttEstimator::default();
        e.on_sample(Duration::MAX);
        e.on_sample(Duration::MAX);
        assert_eq!(e.rto(), Duration::from_secs(60));
    }
}
