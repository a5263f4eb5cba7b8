//! libutp's retransmission timeout (`ack_packet` in `utp_internal.cpp`):
//! RFC 6298's smoothing (α = 1/8, β = 1/4) on samples of packets sent once
//! (Karn's rule is the caller's), RTO = max(RTT + 4·RTTVAR, 1 s), 3 s
//! before the first sample; the timer in use doubles on every expiry and
//! falls back to the RTO on the next acknowledgement. (BEP 29 writes the
//! floor as 500 ms; libutp uses 1000.)

use std::time::Duration;

use ppspp_core::time::duration_micros;

/// libutp's RTO before any sample (`conn->rto = 3000`), which also times
/// the ST_SYN (`retransmit_timeout = 3000` in `utp_connect`).
pub const INITIAL_RTO: Duration = Duration::from_secs(3);
/// libutp's floor: `rto = max(rtt + rtt_var * 4, 1000)`.
pub const MIN_RTO: Duration = Duration::from_secs(1);
/// A cap on the backed-off timer. libutp has none (it gives up on the
/// connection after 4 expiries, which the model does not); this keeps the
/// arithmetic finite.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(120);

/// The estimator and the timer length, in µs.
#[derive(Clone, Debug)]
pub struct UtpRto {
    rtt: Option<u64>,
    rtt_var: u64,
    rto: u64,
    /// The timer in use: the RTO, doubled by expiries (libutp's
    /// `retransmit_timeout`).
    timeout: u64,
}

impl Default for UtpRto {
    fn default() -> UtpRto {
        let rto = duration_micros(INITIAL_RTO);
        UtpRto {
            rtt: None,
            // libutp's initial `rtt_var = 800` ms; replaced by the first
            // sample.
            rtt_var: 800_000,
            rto,
            timeout: rto,
        }
    }
}

impl UtpRto {
    /// A round-trip sample of a packet sent once.
    pub fn sample(&mut self, rtt: Duration) {
        let r = duration_micros(rtt);
        match self.rtt {
            None => {
                self.rtt = Some(r);
                self.rtt_var = r / 2;
            }
            Some(srtt) => {
                self.rtt_var = (3 * self.rtt_var + srtt.abs_diff(r)) / 4;
                self.rtt = Some(srtt - srtt / 8 + r / 8);
            }
        }
        let rto = self.rtt.unwrap_or(r) + 4 * self.rtt_var;
        self.rto = rto.max(duration_micros(MIN_RTO));
    }

    /// A packet was acknowledged: the timer is the RTO again (libutp sets
    /// `retransmit_timeout = rto` in `ack_packet`).
    pub fn on_ack(&mut self) {
        self.timeout = self.rto;
    }

    /// The timer expired: it doubles.
    pub fn back_off(&mut self) {
        self.timeout = (self.timeout * 2).min(duration_micros(MAX_TIMEOUT));
    }

    /// The timer in use.
    pub fn timeout(&self) -> Duration {
        Duration::from_micros(self.timeout)
    }

    /// The RTO without back-off.
    pub fn rto(&self) -> Duration {
        Duration::from_micros(self.rto)
    }

    /// The smoothed RTT, once sampled.
    pub fn rtt(&self) -> Option<Duration> {
        self.rtt.map(Duration::from_micros)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn libutp_rto_with_its_floor_and_back_off() {
        let mut r = UtpRto::default();
        assert_eq!(r.timeout(), ms(3000));
        r.back_off();
        assert_eq!(r.timeout(), ms(6000));
        r.sample(ms(100));
        // 100 + 4·50 = 300, raised to the 1 s floor.
        assert_eq!(r.rto(), ms(1000));
        assert_eq!(r.timeout(), ms(6000), "backed off until an ACK");
        r.on_ack();
        assert_eq!(r.timeout(), ms(1000));
        for _ in 0..3 {
            r.sample(ms(500));
        }
        // rtt 100 → 150 → 193.75 → 232.03 ms, rtt_var 50 → 137.5 →
        // 190.6 → 219.5 ms: RTO 232.03 + 4 · 219.53 ms, above the floor.
        assert_eq!(r.rto(), Duration::from_micros(232_032 + 4 * 219_531));
        r.on_ack();
        let rto = r.timeout();
        r.back_off();
        assert_eq!(r.timeout(), rto * 2);
        for _ in 0..20 {
            r.back_off();
        }
        assert_eq!(r.timeout(), MAX_TIMEOUT);
    }
}
