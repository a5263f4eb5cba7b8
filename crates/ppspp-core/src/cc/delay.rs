//! One-way delay bookkeeping for delay-based controllers (RFC 6817 §3.1).
//!
//! The receiver reports `delay = receive time − sender's timestamp` for each
//! DATA. The two clocks are not synchronised, so a sample is the true one-way
//! delay plus an unknown constant (which may make it negative). The queuing
//! delay is a difference of two such samples, so the constant cancels
//! (RFC 6817 §3.1.2):
//!
//! ```text
//! queuing_delay = FILTER(current_delays) − MIN(base_delays)
//! ```
//!
//! - the *current delay* is the minimum of the last `CURRENT_FILTER` samples,
//!   which removes the noise of single delayed datagrams (§3.1.2);
//! - the *base delay* is the minimum over `BASE_HISTORY` buckets of one
//!   minute each. A lower sample is adopted at once; a higher base (after a
//!   route change) only once the buckets holding the old minimum roll out of
//!   the history (§3.1.1). Buckets roll with the caller's `now`, and an idle
//!   period of many minutes expires old buckets at once, rather than one per
//!   sample as the RFC's pseudocode would.

use std::collections::VecDeque;
use std::time::Duration;

use crate::time::{duration_micros, Instant};

/// The minimum delay seen during one bucket of time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    start: Instant,
    min: i64,
}

/// The base and current one-way delay of a path (RFC 6817 §3.1).
#[derive(Clone, Debug)]
pub struct DelayEstimator {
    base_history: usize,
    bucket_micros: u64,
    buckets: VecDeque<Bucket>,
    current_filter: usize,
    current: VecDeque<i64>,
}

impl DelayEstimator {
    /// An estimator keeping `base_history` buckets of `bucket` each
    /// (RFC 6817: 10 of one minute) and filtering the current delay over the
    /// last `current_filter` samples (RFC 6817: about 4). Zero counts and a
    /// zero bucket length are raised to 1 (sample, bucket, µs).
    pub fn new(base_history: usize, bucket: Duration, current_filter: usize) -> Self {
        let base_history = base_history.max(1);
        let current_filter = current_filter.max(1);
        DelayEstimator {
            base_history,
            bucket_micros: duration_micros(bucket).max(1),
            buckets: VecDeque::with_capacity(base_history),
            current_filter,
            current: VecDeque::with_capacity(current_filter),
        }
    }

    /// Records a one-way delay sample in µs taken at `now` (RFC 6817 §2.4.2,
    /// `update_base_delay` and `update_current_delay`).
    pub fn on_sample(&mut self, now: Instant, delay: i64) {
        self.update_base(now, delay);
        if self.current.len() == self.current_filter {
            self.current.pop_front();
        }
        self.current.push_back(delay);
    }

    fn update_base(&mut self, now: Instant, delay: i64) {
        let interval = self.bucket_micros;
        let Some(last) = self.buckets.back_mut() else {
            self.buckets.push_back(Bucket {
                start: now,
                min: delay,
            });
            return;
        };
        let elapsed = now.as_micros().saturating_sub(last.start.as_micros());
        if elapsed < interval {
            last.min = last.min.min(delay);
            return;
        }
        // Start a new bucket, aligned on the old ones so that the history
        // spans whole intervals, and expire every bucket that began more than
        // `base_history` intervals before it.
        let start = last.start.as_micros() + elapsed / interval * interval;
        let span = interval.saturating_mul(self.base_history as u64);
        while let Some(first) = self.buckets.front() {
            if first.start.as_micros().saturating_add(span) <= start
                || self.buckets.len() >= self.base_history
            {
                self.buckets.pop_front();
            } else {
                break;
            }
        }
        self.buckets.push_back(Bucket {
            start: Instant::from_micros(start),
            min: delay,
        });
    }

    /// The base delay in µs (same unknown offset as the samples): the
    /// minimum over the history.
    pub fn base_delay(&self) -> Option<i64> {
        self.buckets.iter().map(|b| b.min).min()
    }

    /// The filtered current delay in µs: the minimum of the last samples.
    pub fn current_delay(&self) -> Option<i64> {
        self.current.iter().copied().min()
    }

    /// The estimated queuing delay, once a sample arrived. Never negative
    /// (after a long idle period the filter may still hold samples older
    /// than the base history).
    pub fn queuing_delay(&self) -> Option<Duration> {
        let current = self.current_delay()?;
        let base = self.base_delay()?;
        let micros = u64::try_from(current.saturating_sub(base)).unwrap_or(0);
        Some(Duration::from_micros(micros))
    }

    /// How many base-delay buckets are held.
    pub fn buckets(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: u64 = 60_000_000;

    fn at(micros: u64) -> Instant {
        Instant::from_micros(micros)
    }

    fn rfc() -> DelayEstimator {
        DelayEstimator::new(10, Duration::from_secs(60), 4)
    }

    #[test]
    fn empty_has_no_estimate() {
        let d = rfc();
        assert_eq!(d.base_delay(), None);
        assert_eq!(d.current_delay(), None);
        assert_eq!(d.queuing_delay(), None);
    }

    #[test]
    fn current_delay_is_the_minimum_of_the_last_four() {
        let mut d = rfc();
        for (i, v) in [50, 10, 70, 80, 90, 60].into_iter().enumerate() {
            d.on_sample(at(i as u64), v);
        }
        // Last four: 70, 80, 90, 60.
        assert_eq!(d.current_delay(), Some(60));
        assert_eq!(d.base_delay(), Some(10));
        assert_eq!(d.queuing_delay(), Some(Duration::from_micros(50)));
    }

    #[test]
    fn a_lower_base_is_adopted_at_once() {
        let mut d = rfc();
        d.on_sample(at(0), 30_000);
        d.on_sample(at(5 * MINUTE), 20_000);
        assert_eq!(d.base_delay(), Some(20_000));
        d.on_sample(at(5 * MINUTE + 1), 25_000);
        assert_eq!(d.base_delay(), Some(20_000));
    }

    #[test]
    fn a_higher_base_waits_for_the_history_to_roll_over() {
        let mut d = rfc();
        d.on_sample(at(0), 10_000);
        // A route change: every later sample is 40 ms higher.
        let mut t = 1_000_000;
        while t < 10 * MINUTE {
            d.on_sample(at(t), 50_000);
            assert_eq!(d.base_delay(), Some(10_000), "at {t} µs");
            t += 1_000_000;
        }
        assert_eq!(d.buckets(), 10);
        // The bucket of minute 0 leaves the history when minute 10 begins.
        d.on_sample(at(10 * MINUTE), 50_000);
        assert_eq!(d.base_delay(), Some(50_000));
        assert_eq!(d.buckets(), 10);
        assert_eq!(d.queuing_delay(), Some(Duration::ZERO));
    }

    #[test]
    fn a_long_idle_period_expires_the_whole_history() {
        let mut d = rfc();
        d.on_sample(at(0), 10_000);
        d.on_sample(at(3 * MINUTE), 12_000);
        d.on_sample(at(45 * MINUTE + 7), 30_000);
        assert_eq!(d.buckets(), 1);
        assert_eq!(d.base_delay(), Some(30_000));
        // The current filter still holds older, lower samples; the queuing
        // delay does not go negative.
        assert_eq!(d.queuing_delay(), Some(Duration::ZERO));
    }

    #[test]
    fn buckets_stay_aligned_and_bounded() {
        let mut d = DelayEstimator::new(3, Duration::from_secs(60), 1);
        d.on_sample(at(10), 100);
        d.on_sample(at(MINUTE + 20), 200);
        d.on_sample(at(2 * MINUTE + 10), 300);
        assert_eq!(d.buckets(), 3);
        assert_eq!(d.base_delay(), Some(100));
        // Minute 3 starts at 3·MINUTE + 10: until then we are in bucket 2.
        d.on_sample(at(3 * MINUTE + 9), 250);
        assert_eq!(d.base_delay(), Some(100));
        d.on_sample(at(3 * MINUTE + 10), 400);
        assert_eq!(d.base_delay(), Some(200));
        assert_eq!(d.buckets(), 3);
    }

    #[test]
    fn negative_and_offset_samples_only_differences_matter() {
        for offset in [0i64, 1_000_000_000, -1_000_000_000, i64::MIN / 4] {
            let mut d = rfc();
            for (i, v) in [25_000i64, 27_000, 40_000, 31_000, 29_000]
                .into_iter()
                .enumerate()
            {
                d.on_sample(at(i as u64 * 1000), v + offset);
            }
            assert_eq!(d.queuing_delay(), Some(Duration::from_micros(2_000)));
            assert_eq!(d.base_delay(), Some(25_000 + offset));
        }
    }

    #[test]
    fn degenerate_settings_are_raised() {
        let mut d = DelayEstimator::new(0, Duration::ZERO, 0);
        d.on_sample(at(0), 5);
        d.on_sample(at(1), 7);
        assert_eq!(d.current_delay(), Some(7));
        assert_eq!(d.base_delay(), Some(7));
    }
}
