//! The delay signal of LEDBAT as libutp keeps it (`DelayHist` in
//! `utp_internal.cpp`): the one-way delays the receiver echoes are raw
//! (they include any clock offset); the base delay is the minimum seen over
//! the last 13 one-minute buckets, and the current queueing delay is the
//! minimum of the last 3 samples' excess over the base (RFC 6817's
//! CURRENT_FILTER and BASE_HISTORY, with libutp's sizes).

use std::time::Duration;

use ppspp_core::time::Instant;

/// libutp's `DELAY_BASE_HISTORY`: buckets of base delay kept.
pub const BASE_HISTORY: usize = 13;
/// libutp's `CUR_DELAY_SIZE`: samples the current-delay filter takes the
/// minimum of.
pub const CURRENT_FILTER: usize = 3;
/// How long one base-delay bucket lasts (libutp: 60 s).
pub const BUCKET: Duration = Duration::from_secs(60);

/// Base-delay history and current-delay filter, in µs.
#[derive(Clone, Debug)]
pub struct DelayHistory {
    /// The minimum of `base_hist`, or lower; `None` before any sample.
    base: Option<u64>,
    /// The lowest sample of each bucket.
    base_hist: [u64; BASE_HISTORY],
    /// The bucket being filled.
    idx: usize,
    /// When the current bucket began.
    bucket_start: Instant,
    /// The last samples' excess over the base when they came. libutp
    /// starts them at 0, so the first two readings are 0.
    current: [u64; CURRENT_FILTER],
    cur_idx: usize,
}

impl DelayHistory {
    /// An empty history whose first bucket begins at `now`.
    pub fn new(now: Instant) -> DelayHistory {
        DelayHistory {
            base: None,
            base_hist: [0; BASE_HISTORY],
            idx: 0,
            bucket_start: now,
            current: [0; CURRENT_FILTER],
            cur_idx: 0,
        }
    }

    /// Takes a one-way delay sample (µs) measured at `now`.
    pub fn add_sample(&mut self, sample: u64, now: Instant) {
        let base = match self.base {
            None => {
                // libutp: the first sample fills every bucket.
                self.base_hist = [sample; BASE_HISTORY];
                sample
            }
            Some(b) => b,
        };
        let bucket = &mut self.base_hist[self.idx];
        *bucket = (*bucket).min(sample);
        // A lower base is adopted at once.
        let base = base.min(sample);
        self.base = Some(base);
        self.current[self.cur_idx] = sample - base;
        self.cur_idx = (self.cur_idx + 1) % CURRENT_FILTER;
        if now.saturating_since(self.bucket_start) > BUCKET {
            // A new bucket starts with this sample, replacing the oldest;
            // only now can the base rise, to the minimum of what is kept.
            self.bucket_start = now;
            self.idx = (self.idx + 1) % BASE_HISTORY;
            self.base_hist[self.idx] = sample;
            self.base = self.base_hist.iter().copied().min();
        }
    }

    /// The current queueing delay: the minimum of the last
    /// [`CURRENT_FILTER`] samples above the base (µs).
    pub fn value(&self) -> u64 {
        self.current.iter().copied().min().unwrap_or(0)
    }

    /// The base delay, once there is a sample (µs).
    pub fn base(&self) -> Option<u64> {
        self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: u64) -> Instant {
        Instant::from_micros(s * 1_000_000)
    }

    #[test]
    fn a_lower_base_is_adopted_at_once_a_higher_one_after_the_history_rolls_over() {
        let mut h = DelayHistory::new(at(0));
        h.add_sample(50_000, at(0));
        assert_eq!(h.base(), Some(50_000));
        h.add_sample(40_000, at(1));
        assert_eq!(h.base(), Some(40_000), "lower: at once");
        // From now on the path's delay is 60 ms. A new bucket starts each
        // time more than a minute has passed since the last began.
        let mut t = 1;
        let mut steps = 0;
        while steps < BASE_HISTORY - 1 {
            t += 61;
            h.add_sample(60_000, at(t));
            steps += 1;
            assert_eq!(h.base(), Some(40_000), "step {steps}: 40 ms still kept");
        }
        // The 13th new bucket overwrites the one that held 40 ms.
        t += 61;
        h.add_sample(60_000, at(t));
        assert_eq!(h.base(), Some(60_000));
    }

    #[test]
    fn the_current_delay_is_the_minimum_of_the_last_three_samples() {
        let mut h = DelayHistory::new(at(0));
        h.add_sample(10_000, at(0));
        // The filter starts at zeros (libutp's `clear`).
        h.add_sample(30_000, at(0));
        assert_eq!(h.value(), 0);
        h.add_sample(25_000, at(0));
        // Excesses now 0, 20 ms, 15 ms.
        assert_eq!(h.value(), 0);
        h.add_sample(40_000, at(0));
        // 20, 15, 30 ms.
        assert_eq!(h.value(), 15_000);
        h.add_sample(50_000, at(0));
        h.add_sample(45_000, at(0));
        // 30, 40, 35 ms: the 15 ms sample has left the filter.
        assert_eq!(h.value(), 30_000);
    }
}
