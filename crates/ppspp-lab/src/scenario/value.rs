//! Scenario values with units, read from a string (`"8Mbit/s"`), with an
//! error that says what was expected. A value without a unit (`"5"`, or a
//! bare TOML number) is refused: see [`units::require_unit`].

use std::fmt::Display;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use crate::units::{self, Quantity, UnitError};

/// A scenario value that could not be read (serde shows its message with
/// the file's line).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A quantity with a missing or wrong unit, or out of range.
    #[error(transparent)]
    Unit(#[from] UnitError),
    /// Not a queue limit.
    #[error(
        "'{0}' is not a queue limit (e.g. \"1s\", \"100ms\", \"64KB\", \"300 packets\", \"unlimited\")"
    )]
    NotAQueueLimit(String),
    /// Not in [0, 1].
    #[error("{0} is not a probability (0 to 1)")]
    NotAProbability(f64),
}

/// Reads a policy by its name (a picker, a congestion controller): the
/// error of an unknown name, which lists the known ones, becomes the
/// file's error at that value.
pub(super) fn by_name<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    let name = String::deserialize(d)?;
    name.parse().map_err(serde::de::Error::custom)
}

/// As [`by_name`], for a policy that may be left out.
pub(super) fn by_name_opt<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    by_name(d).map(Some)
}

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
    fn with_unit(&self, what: Quantity) -> Result<String, UnitError> {
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
    type Error = ValueError;
    fn try_from(r: Raw) -> Result<Self, ValueError> {
        Ok(Bitrate(units::bitrate(&r.with_unit(Quantity::Rate)?)?))
    }
}

/// A size in bytes (`"20MB"`, `"64KiB"`, `"1500B"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Raw")]
pub struct Bytes(pub u64);

impl TryFrom<Raw> for Bytes {
    type Error = ValueError;
    fn try_from(r: Raw) -> Result<Self, ValueError> {
        Ok(Bytes(units::size(&r.with_unit(Quantity::Size)?)?))
    }
}

/// A duration (`"250ms"`, `"1.5s"`, `"10min"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(try_from = "Raw")]
pub struct Dur(pub Duration);

impl TryFrom<Raw> for Dur {
    type Error = ValueError;
    fn try_from(r: Raw) -> Result<Self, ValueError> {
        Ok(Dur(units::duration(&r.with_unit(Quantity::Duration)?)?))
    }
}

/// A drop-tail queue's limit: `"1s"` / `"100ms"` (time at capacity),
/// `"64KB"` (bytes), `"300 packets"`, or `"unlimited"`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(try_from = "Raw")]
pub enum Queue {
    /// Time's worth of bytes at capacity.
    Time(Duration),
    /// Bytes.
    Bytes(u64),
    /// Packets, whatever their size (`"300 packets"`, `"300pkt"`).
    Packets(u32),
    /// No limit.
    Unlimited,
}

impl TryFrom<Raw> for Queue {
    type Error = ValueError;
    fn try_from(r: Raw) -> Result<Self, ValueError> {
        let t = r.with_unit(Quantity::Queue)?;
        if t.trim() == "unlimited" {
            return Ok(Queue::Unlimited);
        }
        if let Raw::Str(s) = &r {
            let s = s.trim();
            let count = ["packets", "packet", "pkts", "pkt"]
                .iter()
                .find_map(|unit| s.strip_suffix(unit));
            if let Some(n) = count {
                return match n.trim().parse::<u32>() {
                    Ok(n) if n > 0 => Ok(Queue::Packets(n)),
                    _ => Err(ValueError::NotAQueueLimit(t)),
                };
            }
            if s.ends_with('s') && !s.ends_with("/s") {
                if let Ok(d) = units::duration(s) {
                    return Ok(Queue::Time(d));
                }
            }
        }
        units::size(&t)
            .map(Queue::Bytes)
            .map_err(|_| ValueError::NotAQueueLimit(t))
    }
}

/// A probability in [0, 1].
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize)]
#[serde(try_from = "f64")]
pub struct Probability(pub f64);

impl TryFrom<f64> for Probability {
    type Error = ValueError;
    fn try_from(p: f64) -> Result<Self, ValueError> {
        if (0.0..=1.0).contains(&p) {
            Ok(Probability(p))
        } else {
            Err(ValueError::NotAProbability(p))
        }
    }
}
