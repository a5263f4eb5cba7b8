//! Choosing a congestion controller: a factory per algorithm, and the
//! choice an endpoint holds.
//!
//! An endpoint builds two controllers per channel (DATA it sends, and the
//! bytes it requested), so its configuration holds what builds them, not a
//! controller. Names are resolved where the user writes them (a command-line
//! flag, a scenario file): an unknown name is an error there, listing the
//! known ones, and the core never has to guess.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use super::{CongestionController, FixedWindowConfig, LedbatConfig};

/// The names [`CongestionControl`] parses, the default first.
pub const NAMES: &[&str] = &["ledbat", "fixed"];

/// Builds the controllers of one algorithm with its settings. Each
/// algorithm's file implements it for its settings type ([`LedbatConfig`],
/// [`FixedWindowConfig`]).
pub trait CongestionFactory: fmt::Debug + Send + Sync {
    /// The algorithm's name, as its controllers report it.
    fn name(&self) -> &'static str;

    /// A fresh controller for datagrams of `mss` bytes.
    fn build(&self, mss: u64) -> Box<dyn CongestionController>;
}

/// The congestion controller an endpoint gives its channels: a shared
/// [`CongestionFactory`]. [`FromStr`] takes the names in [`NAMES`] (each
/// algorithm with its default settings); [`CongestionControl::new`] takes
/// any factory, e.g. LEDBAT with another target delay. The default is
/// LEDBAT (RFC 7574 §8.16).
#[derive(Clone, Debug)]
pub struct CongestionControl {
    factory: Arc<dyn CongestionFactory>,
    /// How it was spelled when parsed (`ledbat:25ms`); its name otherwise.
    spelled: Option<Arc<str>>,
}

impl CongestionControl {
    /// The controllers `factory` builds.
    pub fn new(factory: impl CongestionFactory + 'static) -> Self {
        CongestionControl {
            factory: Arc::new(factory),
            spelled: None,
        }
    }

    /// The algorithm's name.
    pub fn name(&self) -> &'static str {
        self.factory.name()
    }

    /// A fresh controller for datagrams of `mss` bytes.
    pub fn build(&self, mss: u64) -> Box<dyn CongestionController> {
        self.factory.build(mss)
    }
}

impl Default for CongestionControl {
    /// LEDBAT with the RFC's parameters.
    fn default() -> Self {
        CongestionControl::new(LedbatConfig::default())
    }
}

impl fmt::Display for CongestionControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.spelled.as_deref().unwrap_or(self.name()))
    }
}

impl FromStr for CongestionControl {
    type Err = UnknownCongestionControl;

    /// The algorithm called `name` (one of [`NAMES`]) with its default
    /// settings; "fixed" is a window of
    /// [`FixedWindow::DEFAULT_SEGMENTS`](super::FixedWindow::DEFAULT_SEGMENTS)
    /// datagrams. `ledbat:<N>ms` is LEDBAT with a target queuing delay of
    /// N ms (1 to 1000) instead of RFC 6817's 100 ms: uTP lets users set
    /// 25 ms, LEDBAT++ uses 60 ms (`../docs` congestion notes).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        let unknown = || UnknownCongestionControl { name: name.into() };
        match name {
            "ledbat" => Ok(CongestionControl::new(LedbatConfig::default())),
            "fixed" => Ok(CongestionControl::new(FixedWindowConfig::default())),
            _ => {
                let ms = name
                    .strip_prefix("ledbat:")
                    .and_then(|t| t.strip_suffix("ms"))
                    .and_then(|n| n.parse::<u64>().ok())
                    .filter(|n| (1..=1000).contains(n))
                    .ok_or_else(unknown)?;
                let mut choice = CongestionControl::new(LedbatConfig {
                    target: std::time::Duration::from_millis(ms),
                    ..LedbatConfig::default()
                });
                choice.spelled = Some(name.into());
                Ok(choice)
            }
        }
    }
}

/// A congestion controller name that is none of [`NAMES`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown congestion controller '{name}' (known: {known}; ledbat:<N>ms sets LEDBAT's target)", known = NAMES.join(", "))]
pub struct UnknownCongestionControl {
    /// The name as given.
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::AckSample;

    #[test]
    fn every_name_builds_its_controller() {
        for &name in NAMES {
            let choice: CongestionControl = name.parse().expect(name);
            assert_eq!(choice.name(), name);
            assert_eq!(choice.to_string(), name);
            let cc = choice.build(1100);
            assert_eq!(cc.name(), name);
            assert!(cc.window() >= 1100);
        }
        let build = |name: &str, mss| name.parse::<CongestionControl>().unwrap().build(mss);
        assert_eq!(build("ledbat", 1100).window(), 2200);
        assert_eq!(build("fixed", 1000).window(), 64_000);
        assert_eq!(CongestionControl::default().name(), NAMES[0]);
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_known_ones() {
        for name in [
            "LEDBAT++",
            "",
            "cubic",
            "ledbat:",
            "ledbat:0ms",
            "ledbat:25",
            "ledbat:2s",
            "ledbat:1001ms",
            "fixed:25ms",
        ] {
            let e = name.parse::<CongestionControl>().unwrap_err();
            assert_eq!(e, UnknownCongestionControl { name: name.into() });
            assert_eq!(
                e.to_string(),
                format!(
                    "unknown congestion controller '{name}' (known: ledbat, fixed; \
                     ledbat:<N>ms sets LEDBAT's target)"
                )
            );
        }
    }

    #[test]
    fn ledbat_takes_its_target_after_a_colon() {
        let low: CongestionControl = "ledbat:25ms".parse().unwrap();
        assert_eq!(low.name(), "ledbat");
        assert_eq!(low.to_string(), "ledbat:25ms");
        // The target shows in how the controller answers a queue: 40 ms of
        // queuing is above 25 ms (the window shrinks) and below 100 ms (it
        // grows).
        let grows = |choice: &CongestionControl| {
            let mut cc = choice.build(1000);
            let t0 = crate::time::Instant::ZERO;
            let ms = std::time::Duration::from_millis;
            for i in 0..50u64 {
                let at = t0 + ms(10 * i);
                let flight = cc.window();
                cc.on_sent(at, 1000, flight);
                let sample = AckSample {
                    bytes: 1000,
                    one_way_delay: Some(if i == 0 { 10_000 } else { 50_000 }),
                    rtt: Some(ms(50)),
                    flight,
                };
                cc.on_ack(at + ms(50), &sample);
            }
            cc.window()
        };
        let standard: CongestionControl = "ledbat".parse().unwrap();
        assert!(
            grows(&standard) > grows(&low),
            "{} {}",
            grows(&standard),
            grows(&low)
        );
    }

    #[test]
    fn a_factory_with_other_settings_builds_with_them() {
        let slow = CongestionControl::new(LedbatConfig {
            init_cwnd: 5,
            ..LedbatConfig::default()
        });
        assert_eq!(slow.name(), "ledbat");
        assert_eq!(slow.build(1000).window(), 5000);
        let wide = CongestionControl::new(FixedWindowConfig { segments: 3 });
        assert_eq!(wide.build(1000).window(), 3000);
    }
}
