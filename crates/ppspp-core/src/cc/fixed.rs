//! A constant window: no congestion control at all.
//!
//! For tests that want a predictable sender and for the lab's baselines
//! ("what would an uncontrolled sender with this window do?"). It ignores
//! every signal, and never paces.

use std::time::Duration;

use super::{AckSample, CongestionController, CongestionFactory};
use crate::time::Instant;

/// A controller whose window never changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedWindow {
    window: u64,
}

impl FixedWindow {
    /// The window "fixed" has by default ([`FixedWindowConfig::default`]),
    /// in MSS: 64 datagrams (≈ 70 KB of 1100-byte DATA) fill 10 Mbit/s ×
    /// 56 ms.
    pub const DEFAULT_SEGMENTS: u64 = 64;

    /// A controller allowing `window` bytes in flight (at least 1).
    pub fn new(window: u64) -> Self {
        FixedWindow {
            window: window.max(1),
        }
    }
}

/// Builds [`FixedWindow`]s sized in datagrams, whatever their size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedWindowConfig {
    /// The window in MSS.
    pub segments: u64,
}

impl Default for FixedWindowConfig {
    /// [`FixedWindow::DEFAULT_SEGMENTS`].
    fn default() -> Self {
        FixedWindowConfig {
            segments: FixedWindow::DEFAULT_SEGMENTS,
        }
    }
}

impl CongestionFactory for FixedWindowConfig {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn build(&self, mss: u64) -> Box<dyn CongestionController> {
        Box::new(FixedWindow::new(mss.saturating_mul(self.segments)))
    }
}

impl CongestionController for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed"
    }

    fn window(&self) -> u64 {
        self.window
    }

    fn on_sent(&mut self, _now: Instant, _bytes: u64, _flight: u64) {}

    fn on_ack(&mut self, _now: Instant, _ack: &AckSample) {}

    fn on_loss(&mut self, _now: Instant, _bytes: u64) {}

    fn on_timeout(&mut self, _now: Instant) {}

    fn pacing_rate(&self, _srtt: Duration) -> Option<u64> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_moves_the_window() {
        let mut cc = FixedWindow::new(10_000);
        let t = Instant::from_micros(5);
        cc.on_sent(t, 1100, 1100);
        cc.on_ack(
            t,
            &AckSample {
                bytes: 1100,
                one_way_delay: Some(1_000_000),
                rtt: Some(Duration::from_millis(10)),
                flight: 1100,
            },
        );
        assert_eq!(cc.window(), 10_000);
        cc.on_loss(t, 1100);
        cc.on_timeout(t);
        assert_eq!(cc.window(), 10_000);
        assert_eq!(cc.pacing_rate(Duration::from_millis(10)), None);
        assert_eq!(cc.name(), "fixed");
        assert_eq!(FixedWindow::new(0).window(), 1);
    }
}
