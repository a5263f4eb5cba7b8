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
pub struct CongestionControl(Arc<dyn CongestionFactory>);

impl CongestionControl {
    /// The controllers `factory` builds.
    pub fn new(factory: impl CongestionFactory + 'static) -> Self {
        CongestionControl(Arc::new(factory))
    }

    /// The algorithm's name.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// A fresh controller for datagrams of `mss` bytes.
    pub fn build(&self, mss: u64) -> Box<dyn CongestionController> {
        self.0.build(mss)
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
        f.write_str(self.name())
    }
}

impl FromStr for CongestionControl {
    type Err = UnknownCongestionControl;

    /// The algorithm called `name` (one of [`NAMES`]) with its default
    /// settings; "fixed" is a window of
    /// [`FixedWindow::DEFAULT_SEGMENTS`](super::FixedWindow::DEFAULT_SEGMENTS)
    /// datagrams.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "ledbat" => Ok(CongestionControl::new(LedbatConfig::default())),
            "fixed" => Ok(CongestionControl::new(FixedWindowConfig::default())),
            _ => Err(UnknownCongestionControl { name: name.into() }),
        }
    }
}

/// A congestion controller name that is none of [`NAMES`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown congestion controller '{name}' (known: {known})", known = NAMES.join(", "))]
pub struct UnknownCongestionControl {
    /// The name as given.
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

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
        for name in ["LEDBAT++", "", "cubic"] {
            let e = name.parse::<CongestionControl>().unwrap_err();
            assert_eq!(e, UnknownCongestionControl { name: name.into() });
            assert_eq!(
                e.to_string(),
                format!("unknown congestion controller '{name}' (known: ledbat, fixed)")
            );
        }
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
