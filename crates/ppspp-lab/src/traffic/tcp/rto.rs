//! The retransmission timeout of RFC 6298: SRTT and RTTVAR smoothed from
//! RTT samples, RTO = SRTT + max(G, 4·RTTVAR) clamped to [min, max], doubled
//! on every expiry until the next sample.

use std::time::Duration;

use ppspp_core::time::duration_micros;

/// The bounds and starting point of the RTO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtoConfig {
    /// RTO before the first sample (RFC 6298 §2.1: 1 s).
    pub initial: Duration,
    /// Lower bound. RFC 6298 §2.4 says 1 s; the default is Linux's 200 ms
    /// (`TCP_RTO_MIN`), which is what competing bulk flows actually use.
    pub min: Duration,
    /// Upper bound (RFC 6298 §2.5 allows any of at least 60 s).
    pub max: Duration,
    /// Clock granularity G of RFC 6298 §2: keeps the RTO above SRTT when
    /// the RTT never varies, as it may not in a simulator.
    pub granularity: Duration,
}

impl Default for RtoConfig {
    fn default() -> RtoConfig {
        RtoConfig {
            initial: Duration::from_secs(1),
            min: Duration::from_millis(200),
            max: Duration::from_secs(60),
            granularity: Duration::from_millis(1),
        }
    }
}

/// RFC 6298's estimator, in whole microseconds.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    config: RtoConfig,
    srtt: Option<u64>,
    rttvar: u64,
    rto: u64,
}

impl RtoEstimator {
    /// An estimator with no sample yet: RTO is `config.initial`.
    pub fn new(config: RtoConfig) -> RtoEstimator {
        RtoEstimator {
            rto: duration_micros(config.initial),
            config,
            srtt: None,
            rttvar: 0,
        }
    }

    /// Takes an RTT measurement (RFC 6298 §2.2 for the first, §2.3 after,
    /// with α = 1/8 and β = 1/4) and recomputes the RTO, which also ends
    /// any back-off.
    pub fn sample(&mut self, rtt: Duration) {
        let r = duration_micros(rtt);
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // RTTVAR first: it uses the SRTT from before this sample.
                self.rttvar = (3 * self.rttvar + srtt.abs_diff(r)) / 4;
                self.srtt = Some((7 * srtt + r) / 8);
            }
        }
        let g = duration_micros(self.config.granularity);
        let rto = self.srtt.unwrap_or(r) + g.max(4 * self.rttvar);
        self.rto = self.clamp(rto);
    }

    /// The timer expired: double the RTO (RFC 6298 §5.5), up to the max.
    pub fn back_off(&mut self) {
        self.rto = self.clamp(self.rto.saturating_mul(2));
    }

    fn clamp(&self, rto: u64) -> u64 {
        rto.clamp(
            duration_micros(self.config.min),
            duration_micros(self.config.max),
        )
    }

    /// The current RTO.
    pub fn rto(&self) -> Duration {
        Duration::from_micros(self.rto)
    }

    /// The smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt.map(Duration::from_micros)
    }

    /// The RTT variation.
    pub fn rttvar(&self) -> Duration {
        Duration::from_micros(self.rttvar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn rfc6298_smoothing() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        assert_eq!((e.rto(), e.srtt()), (ms(1000), None));
        e.sample(ms(100));
        // SRTT 100, RTTVAR 50, RTO 100 + 4·50.
        assert_eq!(
            (e.srtt(), e.rttvar(), e.rto()),
            (Some(ms(100)), ms(50), ms(300))
        );
        e.sample(ms(180));
        // RTTVAR = 3/4·50 + 1/4·80 = 57.5; SRTT = 7/8·100 + 1/8·180 = 110.
        assert_eq!(e.rttvar(), Duration::from_micros(57_500));
        assert_eq!(e.srtt(), Some(ms(110)));
        assert_eq!(e.rto(), ms(340));
    }

    #[test]
    fn bounds_and_back_off() {
        let mut e = RtoEstimator::new(RtoConfig::default());
        e.sample(ms(10));
        // 10 + 4·5 = 30 ms, raised to the 200 ms minimum.
        assert_eq!(e.rto(), ms(200));
        for _ in 0..3 {
            e.sample(ms(10));
        }
        e.back_off();
        assert_eq!(e.rto(), ms(400));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), ms(60_000), "capped at the max");
        e.sample(ms(10));
        assert_eq!(e.rto(), ms(200), "a sample ends the back-off");
        let mut rfc = RtoEstimator::new(RtoConfig {
            min: ms(1000),
            ..RtoConfig::default()
        });
        rfc.sample(ms(10));
        assert_eq!(rfc.rto(), ms(1000));
    }

    #[test]
    fn granularity_keeps_rto_above_a_constant_rtt() {
        let mut e = RtoEstimator::new(RtoConfig {
            min: Duration::ZERO,
            ..RtoConfig::default()
        });
        for _ in 0..200 {
            e.sample(ms(500));
        }
        assert_eq!(e.rttvar(), Duration::ZERO);
        assert_eq!(e.rto(), ms(501));
    }
}
