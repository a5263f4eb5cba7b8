//! Time as the core sees it: an [`Instant`] handed in by the driver.
//!
//! The core never reads a clock (architecture note, "The sans-IO boundary"):
//! the UDP driver passes wall-clock microseconds, the simulator its virtual
//! time. Spans are plain [`std::time::Duration`]s.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// A point in time, in microseconds since an epoch the driver chooses.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    /// The driver's epoch.
    pub const ZERO: Instant = Instant(0);
    /// The far future: "no deadline".
    pub const MAX: Instant = Instant(u64::MAX);

    /// The instant `micros` microseconds after the epoch.
    pub const fn from_micros(micros: u64) -> Instant {
        Instant(micros)
    }

    /// Microseconds since the epoch.
    pub const fn as_micros(self) -> u64 {
        self.0
    }

    /// Time since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration::from_micros(self.0.saturating_sub(earlier.0))
    }

    /// This instant plus `d`, saturating at [`Instant::MAX`].
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_micros(d)))
    }
}

/// A duration in whole microseconds, saturating.
pub fn duration_micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier minus a later instant is zero.
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_since(earlier)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}s", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_micros(1_500_000);
        assert_eq!(
            t + Duration::from_millis(500),
            Instant::from_micros(2_000_000)
        );
        assert_eq!(Instant::from_micros(10) - t, Duration::ZERO);
        assert_eq!(t - Instant::ZERO, Duration::from_millis(1500));
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(format!("{t:?}"), "1.500000s");
    }
}
