//! Quantities written the way people write them: `8Mbit/s`, `2MB/s`,
//! `20MB`, `1KiB`, `250ms`, `1.5s`, `10min`. Shared by the CLI and the
//! scenario files. Decimal prefixes are powers of 1000, binary ones (KiB,
//! MiB, GiB) powers of 1024.

use std::time::Duration;

/// A quantity that could not be read; the message says what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    /// Not a number with a rate unit.
    #[error("'{0}' is not a rate (e.g. 2MB/s, 500KiB/s, 8Mbit/s)")]
    NotARate(String),
    /// A rate in bytes per second outside what [`rate`] takes.
    #[error("rate '{0}' is out of range (1 B/s to 10 TB/s)")]
    RateOutOfRange(String),
    /// A rate in bits per second outside what [`bitrate`] takes.
    #[error("rate '{0}' is out of range (1 bit/s to 100 Tbit/s)")]
    BitrateOutOfRange(String),
    /// Not a number with a byte unit.
    #[error("'{0}' is not a size (e.g. 1500B, 64KB, 20MB, 1GiB)")]
    NotASize(String),
    /// A size that is no whole number of bytes (or too large for one).
    #[error("size '{0}' is not a whole number of bytes")]
    NotWholeBytes(String),
    /// Not a number with a time unit.
    #[error("'{0}' is not a duration (e.g. 250ms, 1.5s, 10min)")]
    NotADuration(String),
    /// A duration beyond what [`duration`] takes.
    #[error("duration '{0}' is out of range")]
    DurationOutOfRange(String),
    /// A bare number where a scenario needs the unit ([`require_unit`]).
    #[error("{}", needs_unit(*.what, .number))]
    NeedsUnit {
        /// The kind of quantity expected.
        what: Quantity,
        /// The number as written.
        number: String,
    },
}

/// What [`UnitError::NeedsUnit`] says: two spellings with the number given.
fn needs_unit(what: Quantity, n: &str) -> String {
    match what {
        Quantity::Duration => format!("a duration needs a unit, e.g. \"{n}ms\" or \"{n}s\""),
        Quantity::Size => format!("a size needs a unit, e.g. \"{n}B\" or \"{n}KiB\""),
        Quantity::Rate => format!("a rate needs a unit, e.g. \"{n}Mbit/s\" or \"{n}kB/s\""),
        Quantity::Queue => format!(
            "a queue limit needs a unit, e.g. \"{n}ms\" (time at capacity) or \"{n}B\" (bytes)"
        ),
    }
}

/// Splits `"12.5MB"` into `(12.5, "MB")`.
fn number_and_unit(s: &str) -> Option<(f64, &str)> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let v: f64 = num.parse().ok()?;
    v.is_finite().then_some((v, unit.trim()))
}

/// Scale of a byte (or bit) unit, and whether it counts bits.
fn byte_unit(unit: &str) -> Option<(f64, bool)> {
    Some(match unit {
        "" | "B" => (1.0, false),
        "k" | "K" | "kB" | "KB" => (1e3, false),
        "M" | "MB" => (1e6, false),
        "G" | "GB" => (1e9, false),
        "KiB" => (1024.0, false),
        "MiB" => (1024.0 * 1024.0, false),
        "GiB" => (1024.0 * 1024.0 * 1024.0, false),
        "bit" | "b" => (1.0, true),
        "kbit" | "Kbit" | "kb" | "Kb" => (1e3, true),
        "Mbit" | "Mb" => (1e6, true),
        "Gbit" | "Gb" => (1e9, true),
        _ => return None,
    })
}

/// A rate as `(value × unit scale, counts bits)`, or why not.
fn parse_rate(s: &str) -> Result<(f64, bool), UnitError> {
    let t = s.trim();
    let bad = || UnitError::NotARate(s.into());
    let body = t
        .strip_suffix("/s")
        .or_else(|| t.strip_suffix("ps"))
        .unwrap_or(t);
    let (value, unit) = number_and_unit(body).ok_or_else(bad)?;
    let (scale, bits) = byte_unit(unit).ok_or_else(bad)?;
    Ok((value * scale, bits))
}

/// A rate in bytes per second: `2MB/s`, `500KiB/s`, `8Mbit/s`, `1Gbps`, or
/// a plain number of bytes per second.
pub fn rate(s: &str) -> Result<u64, UnitError> {
    let (v, bits) = parse_rate(s)?;
    let bytes = if bits { v / 8.0 } else { v };
    if !bytes.is_finite() || !(1.0..=1e13).contains(&bytes) {
        return Err(UnitError::RateOutOfRange(s.into()));
    }
    Ok(bytes.round() as u64)
}

/// A rate in bits per second (same syntax as [`rate`]).
pub fn bitrate(s: &str) -> Result<u64, UnitError> {
    let (v, bits) = parse_rate(s)?;
    let b = if bits { v } else { v * 8.0 };
    if !b.is_finite() || !(1.0..=1e14).contains(&b) {
        return Err(UnitError::BitrateOutOfRange(s.into()));
    }
    Ok(b.round() as u64)
}

/// A size in bytes: `20MB`, `1KiB`, `1500`.
pub fn size(s: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::NotASize(s.into());
    let (value, unit) = number_and_unit(s).ok_or_else(bad)?;
    let (scale, bits) = byte_unit(unit).ok_or_else(bad)?;
    if bits {
        return Err(bad());
    }
    let b = value * scale;
    if !(0.0..=1.8e19).contains(&b) || b.fract() != 0.0 {
        return Err(UnitError::NotWholeBytes(s.into()));
    }
    Ok(b as u64)
}

/// A duration: `250ms`, `1.5s`, `10min`, `2h`, `100us` (a plain number is
/// seconds here; scenario files refuse it, see [`require_unit`]).
pub fn duration(s: &str) -> Result<Duration, UnitError> {
    let bad = || UnitError::NotADuration(s.into());
    let (value, unit) = number_and_unit(s).ok_or_else(bad)?;
    let secs = match unit {
        "" | "s" => value,
        "ms" => value / 1e3,
        "us" | "µs" => value / 1e6,
        "min" | "m" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(bad()),
    };
    if !(0.0..=1e9).contains(&secs) {
        return Err(UnitError::DurationOutOfRange(s.into()));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// The kinds of quantity [`require_unit`] checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// A time span (`5ms`, `5s`).
    Duration,
    /// A number of bytes (`5B`, `5KiB`).
    Size,
    /// Bits or bytes per second (`5Mbit/s`, `5MB/s`).
    Rate,
    /// A queue limit: time at capacity or bytes.
    Queue,
}

/// Refuses a bare number (`"5"`, or `5` in TOML) where a quantity of kind
/// `what` is expected. A plain number parses above (as seconds, bytes or
/// bytes per second), but in a scenario it is too easy to misread — a
/// `delay = "5"` meant as 5 ms ran as 5 s — so scenario files must say the
/// unit. The error suggests two spellings with the number given.
pub fn require_unit(s: &str, what: Quantity) -> Result<(), UnitError> {
    let t = s.trim();
    let body = match what {
        Quantity::Rate => t
            .strip_suffix("/s")
            .or_else(|| t.strip_suffix("ps"))
            .unwrap_or(t),
        _ => t,
    };
    match number_and_unit(body) {
        Some((_, "")) => {}
        // Not a number at all, or one with a unit: the parser decides.
        _ => return Ok(()),
    }
    Err(UnitError::NeedsUnit {
        what,
        number: body.trim().into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates() {
        assert_eq!(rate("2MB/s"), Ok(2_000_000));
        assert_eq!(rate("8Mbit/s"), Ok(1_000_000));
        assert_eq!(rate("500KiB/s"), Ok(512_000));
        assert_eq!(rate("1Gbps"), Ok(125_000_000));
        assert_eq!(rate("1000"), Ok(1000));
        assert!(rate("fast").is_err());
        assert!(rate("0MB/s").is_err());
        assert_eq!(bitrate("1.2Mbit/s"), Ok(1_200_000));
        assert_eq!(bitrate("750kbit/s"), Ok(750_000));
        assert_eq!(bitrate("1MB/s"), Ok(8_000_000));
        assert!(bitrate("1 apple/s").is_err());
    }

    #[test]
    fn sizes_and_durations() {
        assert_eq!(size("20MB"), Ok(20_000_000));
        assert_eq!(size("1KiB"), Ok(1024));
        assert_eq!(size("1500"), Ok(1500));
        assert!(size("8Mbit").is_err());
        assert!(size("1.5B").is_err());
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration("10min"), Ok(Duration::from_secs(600)));
        assert_eq!(duration("3"), Ok(Duration::from_secs(3)));
        assert!(duration("soon").is_err());
        assert!(duration("5 fortnights").is_err());
    }

    #[test]
    fn bare_numbers_need_a_unit() {
        let e = require_unit("5", Quantity::Duration).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a duration needs a unit, e.g. \"5ms\" or \"5s\""
        );
        assert!(require_unit(" 1.5 ", Quantity::Duration).is_err());
        assert!(require_unit("7500000", Quantity::Size)
            .unwrap_err()
            .to_string()
            .contains("\"7500000B\""));
        // "1000/s" says per second but not of what.
        assert!(require_unit("1000/s", Quantity::Rate).is_err());
        assert!(require_unit("500", Quantity::Queue).is_err());
        for ok in [
            "5ms", "1.5s", "20MB", "1KiB", "8Mbit/s", "1Gbps", "soon", "",
        ] {
            assert_eq!(require_unit(ok, Quantity::Rate), Ok(()), "{ok}");
            assert_eq!(require_unit(ok, Quantity::Duration), Ok(()), "{ok}");
        }
    }

    #[test]
    fn each_error_says_what_was_expected() {
        let cases = [
            (
                rate("fast").unwrap_err(),
                "'fast' is not a rate (e.g. 2MB/s, 500KiB/s, 8Mbit/s)",
            ),
            (
                rate("0MB/s").unwrap_err(),
                "rate '0MB/s' is out of range (1 B/s to 10 TB/s)",
            ),
            (
                bitrate("0bit/s").unwrap_err(),
                "rate '0bit/s' is out of range (1 bit/s to 100 Tbit/s)",
            ),
            (
                size("8Mbit").unwrap_err(),
                "'8Mbit' is not a size (e.g. 1500B, 64KB, 20MB, 1GiB)",
            ),
            (
                size("1.5B").unwrap_err(),
                "size '1.5B' is not a whole number of bytes",
            ),
            (
                duration("soon").unwrap_err(),
                "'soon' is not a duration (e.g. 250ms, 1.5s, 10min)",
            ),
            (
                duration("2000000000s").unwrap_err(),
                "duration '2000000000s' is out of range",
            ),
            (
                require_unit("64", Quantity::Size).unwrap_err(),
                "a size needs a unit, e.g. \"64B\" or \"64KiB\"",
            ),
            (
                require_unit("8/s", Quantity::Rate).unwrap_err(),
                "a rate needs a unit, e.g. \"8Mbit/s\" or \"8kB/s\"",
            ),
            (
                require_unit("500", Quantity::Queue).unwrap_err(),
                "a queue limit needs a unit, e.g. \"500ms\" (time at capacity) or \"500B\" (bytes)",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.to_string(), want);
        }
        assert_eq!(
            require_unit("5", Quantity::Duration),
            Err(UnitError::NeedsUnit {
                what: Quantity::Duration,
                number: "5".into()
            })
        );
    }
}
