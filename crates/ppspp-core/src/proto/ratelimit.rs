//! A token bucket for upload and download limits.

use std::time::Duration;

use crate::time::Instant;

/// Tokens are bytes; they refill at `rate` per second up to `burst`.
#[derive(Clone, Debug)]
pub struct TokenBucket {
    rate: u64,
    burst: u64,
    tokens: u64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket refilling at `rate` bytes per second, holding at most
    /// `burst` bytes.
    pub fn new(rate: u64, burst: u64, now: Instant) -> Self {
        TokenBucket {
            rate: rate.max(1),
            burst: burst.max(1),
            tokens: burst.max(1),
            last: now,
        }
    }

    fn refill(&mut self, now: Instant) {
        let micros = now.saturating_since(self.last).as_micros() as u64;
        let add = (u128::from(micros) * u128::from(self.rate) / 1_000_000) as u64;
        if add > 0 {
            self.tokens = self.tokens.saturating_add(add).min(self.burst);
            // Advance by the time the added tokens stand for, keeping the
            // remainder so slow rates still refill.
            let used = (u128::from(add) * 1_000_000 / u128::from(self.rate)) as u64;
            self.last = Instant::from_micros(self.last.as_micros() + used);
        }
        if self.tokens == self.burst {
            self.last = now;
        }
    }

    /// Takes `bytes` tokens if there are that many.
    pub fn try_take(&mut self, now: Instant, bytes: u64) -> bool {
        self.refill(now);
        if self.tokens >= bytes {
            self.tokens -= bytes;
            true
        } else {
            false
        }
    }

    /// Takes up to `bytes` tokens, stopping at zero: for costs that are only
    /// known after the fact.
    pub fn take_saturating(&mut self, now: Instant, bytes: u64) {
        self.refill(now);
        self.tokens = self.tokens.saturating_sub(bytes);
    }

    /// The tokens there at `now`.
    pub fn available(&mut self, now: Instant) -> u64 {
        self.refill(now);
        self.tokens
    }

    /// When `bytes` tokens will be there.
    pub fn ready_at(&self, bytes: u64) -> Instant {
        if self.tokens >= bytes {
            return self.last;
        }
        let missing = bytes.min(self.burst) - self.tokens.min(bytes);
        let wait = (u128::from(missing) * 1_000_000).div_ceil(u128::from(self.rate)) as u64;
        self.last + Duration::from_micros(wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refills_at_the_rate() {
        let t0 = Instant::from_micros(1_000_000);
        let mut b = TokenBucket::new(1000, 500, t0);
        assert!(b.try_take(t0, 500));
        assert!(!b.try_take(t0, 1));
        assert_eq!(b.ready_at(100), t0 + Duration::from_millis(100));
        assert!(!b.try_take(t0 + Duration::from_millis(99), 100));
        assert!(b.try_take(t0 + Duration::from_millis(100), 100));
        // Over 10 s at most rate·10 + burst bytes pass.
        let mut sent = 0;
        let mut t = t0 + Duration::from_millis(100);
        for _ in 0..10_000 {
            t += Duration::from_millis(1);
            while b.try_take(t, 7) {
                sent += 7;
            }
        }
        assert!((9_900..=10_500).contains(&sent), "{sent}");
    }
}
