//! Pacing: spread a window's worth of DATA over the round trip instead of
//! sending it at line rate, which would fill queues and blur the delay
//! signal LEDBAT steers by (RFC 6817 §4.2 leaves pacing open).
//!
//! A token bucket in bytes refilled at the pacing rate. Its depth lets a
//! burst through: at least ten datagrams, or two milliseconds at the rate,
//! because drivers cannot wake more precisely than that (tokio timers tick
//! in milliseconds) and a deeper burst costs less than a missed wake-up.

use std::time::Duration;

use crate::time::Instant;

/// Least burst, in datagrams.
const MIN_BURST: u64 = 10;
/// Burst the bucket holds, in time at the pacing rate.
const BURST_TIME: Duration = Duration::from_millis(2);

/// One channel's pacer.
#[derive(Clone, Debug)]
pub struct Pacer {
    tokens: u64,
    last: Instant,
}

impl Pacer {
    /// A full pacer (the first burst goes at once).
    pub fn new(now: Instant) -> Self {
        Pacer {
            tokens: u64::MAX,
            last: now,
        }
    }

    fn depth(rate: u64, mss: u64) -> u64 {
        let by_time = (u128::from(rate) * BURST_TIME.as_micros() / 1_000_000) as u64;
        by_time.max(MIN_BURST * mss)
    }

    fn refill(&mut self, now: Instant, rate: u64, mss: u64) {
        let micros = now.saturating_since(self.last).as_micros() as u64;
        let add = (u128::from(micros) * u128::from(rate) / 1_000_000) as u64;
        self.tokens = self.tokens.saturating_add(add).min(Self::depth(rate, mss));
        self.last = now;
    }

    /// When a datagram of `bytes` may go, at `rate` bytes per second
    /// (`None`: unpaced). `now` or earlier means at once.
    pub fn ready_at(&mut self, now: Instant, bytes: u64, rate: Option<u64>, mss: u64) -> Instant {
        let Some(rate) = rate.filter(|r| *r > 0) else {
            return now;
        };
        self.refill(now, rate, mss);
        if self.tokens >= bytes {
            return now;
        }
        let wait = (u128::from(bytes - self.tokens) * 1_000_000).div_ceil(u128::from(rate)) as u64;
        now + Duration::from_micros(wait)
    }

    /// A datagram of `bytes` went out.
    pub fn on_sent(&mut self, bytes: u64) {
        self.tokens = self.tokens.saturating_sub(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bursts_then_paces() {
        let t0 = Instant::from_micros(1_000_000);
        let mss = 1000;
        let rate = 1_000_000; // 1 MB/s: 2 ms is 2000 bytes, so the burst is 10 datagrams.
        let mut p = Pacer::new(t0);
        let mut sent = 0;
        while p.ready_at(t0, mss, Some(rate), mss) <= t0 {
            p.on_sent(mss);
            sent += 1;
        }
        assert_eq!(sent, 10);
        let next = p.ready_at(t0, mss, Some(rate), mss);
        assert_eq!(next, t0 + Duration::from_millis(1));
        // Over one second at the rate about rate bytes pass (plus the burst).
        let mut t = t0;
        let mut bytes = 0;
        while t < t0 + Duration::from_secs(1) {
            // As the sender does: send only when ready, else wait till then.
            let ready = p.ready_at(t, mss, Some(rate), mss);
            if ready > t {
                t = ready;
                continue;
            }
            p.on_sent(mss);
            bytes += mss;
        }
        assert!((990_000..=1_011_000).contains(&bytes), "{bytes}");
        assert_eq!(p.ready_at(t, mss, None, mss), t);
    }
}
