//! Scenario values with units, read from a string (`"8Mbit/s"`), with an
//! error that says what was expected. A value without a unit (`"5"`, or a
//! bare TOML number) is refused: see [`units::require_unit`].

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::units::{self, Quantity};

/// What TOML gives for a quantity.
#[derive(Deserialize)]
#[serde(untagged)]
enum Raw {
    Int(u64),
    Float(f64),
    Str(String),
}

impl Raw {
    fn text(&self) -> String {
        match self {
            Raw::Int(i) => i.to_string(),
            Raw::Float(f) => f.to_string(),
            Raw::Str(s) => s.clone(),
        }
    }

    /// The text, once it is known to carry a unit.
    fn with_unit(&self, what: Quantity) -> Result<String, String> {
        let t = self.text();
        units::require_unit(&t, what)?;
        Ok(t)
    }
}

/// A rate in bits per second (`"8Mbit/s"`, `"2MB/s"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Raw")]
pub struct Bitrate(pub u64);

impl TryFrom<Raw> for Bitrate {
    type Error = String;
    fn try_from(r: Raw) -> Result<Self, String> {
        units::bitrate(&r.with_unit(Quantity::Rate)?).map(Bitrate)
    }
}

/// A size in bytes (`"20MB"`, `"64KiB"`, `"1500B"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Raw")]
pub struct Bytes(pub u64);

impl TryFrom<Raw> for Bytes {
    type Error = String;
    fn try_from(r: Raw) -> Result<Self, String> {
        units::size(&r.with_unit(Quantity::Size)?).map(Bytes)
    }
}

/// A duration (`"250ms"`, `"1.5s"`, `"10min"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Raw")]
pub struct Dur(pub Duration);

impl TryFrom<Raw> for Dur {
    type Error = String;
    fn try_from(r: Raw) -> Result<Self, String> {
        units::duration(&r.with_unit(Quantity::Duration)?).map(Dur)
    }
}

/// A drop-tail queue's limit: `"1s"` / `"100ms"` (time at capacity),
/// `"64KB"` (bytes), or `"unlimited"`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "Raw")]
pub enum Queue {
    /// Time's worth of bytes at capacity.
    Time(Duration),
    /// Bytes.
    Bytes(u64),
    /// No limit.
    Unlimited,
}

impl TryFrom<Raw> for Queue {
    type Error = String;
    fn try_from(r: Raw) -> Result<Self, String> {
        let t = r.with_unit(Quantity::Queue)?;
        if t.trim() == "unlimited" {
            return Ok(Queue::Unlimited);
        }
        if let Raw::Str(s) = &r {
            let s = s.trim();
            if s.ends_with('s') && !s.ends_with("/s") {
                if let Ok(d) = units::duration(s) {
                    return Ok(Queue::Time(d));
                }
            }
        }
        units::size(&t).map(Queue::Bytes).map_err(|_| {
            format!("'{t}' is not a queue limit (e.g. \"1s\", \"100ms\", \"64KB\", \"unlimited\")")
        })
    }
}

/// A probability in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "f64")]
pub struct Probability(pub f64);

impl TryFrom<f64> for Probability {
    type Error = String;
    fn try_from(p: f64) -> Result<Self, String> {
        if (0.0..=1.0).contains(&p) {
            Ok(Probability(p))
        } else {
            Err(format!("{p} is not a probability (0 to 1)"))
        }
    }
}
