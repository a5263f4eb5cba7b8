//! How late the node's timers fire: the wall clock when the runtime woke
//! the node for a deadline, minus the deadline. What a real OS adds to a
//! protocol's timing (scheduling, timer granularity, a busy runtime); the
//! lab's emulator reports it per peer (issue 27, "per-peer scheduling
//! lateness").

use std::time::Duration;

use hdrhistogram::Histogram;

/// The largest lateness recorded as itself (µs); later wakeups count as
/// this much. A minute: beyond that the node was stopped, not late.
const MAX_US: u64 = 60_000_000;

/// A node's timer lateness so far.
#[derive(Clone, Debug)]
pub struct TimerLateness {
    /// In µs, two significant digits (about 10 KB of `u32` counters: a
    /// thousand emulated nodes keep 10 MB of them).
    us: Histogram<u32>,
}

impl Default for TimerLateness {
    fn default() -> Self {
        TimerLateness {
            us: Histogram::new_with_bounds(1, MAX_US, 2).expect("bounds and precision are valid"),
        }
    }
}

impl TimerLateness {
    /// A timer set for some deadline fired `late` after it.
    pub fn record(&mut self, late: Duration) {
        let us = u64::try_from(late.as_micros()).unwrap_or(MAX_US);
        self.us.saturating_record(us.clamp(1, MAX_US));
    }

    /// Timer wakeups recorded.
    pub fn wakeups(&self) -> u64 {
        self.us.len()
    }

    /// The lateness (µs) at quantile `q` (0 with no wakeup yet).
    pub fn quantile_us(&self, q: f64) -> u64 {
        if self.us.is_empty() {
            0
        } else {
            self.us.value_at_quantile(q)
        }
    }

    /// The histogram, to pool several nodes' ([`hdrhistogram::Histogram::add`]).
    pub fn histogram(&self) -> &Histogram<u32> {
        &self.us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_follow_what_was_recorded() {
        let mut l = TimerLateness::default();
        assert_eq!((l.wakeups(), l.quantile_us(0.99)), (0, 0));
        for ms in 1..=100 {
            l.record(Duration::from_millis(ms));
        }
        // An hour late counts as the cap, not as nothing.
        l.record(Duration::from_secs(3600));
        assert_eq!(l.wakeups(), 101);
        let p50 = l.quantile_us(0.5);
        assert!((49_000..=52_000).contains(&p50), "{p50}");
        assert!(l.quantile_us(1.0) >= MAX_US * 99 / 100);
    }
}
