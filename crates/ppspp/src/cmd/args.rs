//! Value parsers shared by subcommands, so that bad values are refused by
//! clap with a usage error before anything runs.

use ppspp_core::{ChunkSize, HashFunction};
use ppspp_lab::units::UnitError;

/// Parse a chunk size in bytes: a plain number, or with a `k`/`KiB` suffix.
pub fn chunk_size(s: &str) -> Result<ChunkSize, String> {
    let t = s.trim();
    let (digits, scale) = match t.to_ascii_lowercase() {
        l if l.ends_with("kib") => (&t[..t.len() - 3], 1024),
        l if l.ends_with('k') => (&t[..t.len() - 1], 1024),
        _ => (t, 1),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of bytes (e.g. 1024 or 8KiB)"))?;
    ChunkSize::new(n.saturating_mul(scale)).map_err(|e| e.to_string())
}

/// Parse a Merkle hash function name.
pub fn hash_function(s: &str) -> Result<HashFunction, String> {
    HashFunction::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = HashFunction::ALL.iter().map(|f| f.name()).collect();
        format!(
            "unknown hash function '{s}' (expected one of: {})",
            names.join(", ")
        )
    })
}

/// Parse a rate into bytes per second: `2MB/s`, `500KiB/s`, `8Mbit/s`,
/// `1Gbps`, or a plain number of bytes per second (the lab's units).
pub fn rate(s: &str) -> Result<u64, UnitError> {
    ppspp_lab::units::rate(s)
}

/// Parse a size in bytes: `4MB`, `1MiB`, or a plain number of bytes (the
/// lab's units).
pub fn size(s: &str) -> Result<u64, UnitError> {
    ppspp_lab::units::size(s)
}

/// Parse a positive number of seconds (fractions allowed).
pub fn seconds(s: &str) -> Result<std::time::Duration, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if !(0.001..=86_400.0 * 365.0).contains(&v) {
        return Err(format!("'{s}' seconds is out of range"));
    }
    Ok(std::time::Duration::from_secs_f64(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_seconds() {
        // Rate syntax is tested with the lab's units; here only the wiring.
        assert_eq!(rate("8Mbit/s"), Ok(1_000_000));
        assert_eq!(seconds("0.5"), Ok(std::time::Duration::from_millis(500)));
        assert!(seconds("0").is_err());
        assert!(seconds("soon").is_err());
    }

    #[test]
    fn chunk_sizes() {
        assert_eq!(chunk_size("1024").unwrap().bytes(), 1024);
        assert_eq!(chunk_size("8KiB").unwrap().bytes(), 8192);
        assert_eq!(chunk_size("8k").unwrap().bytes(), 8192);
        assert!(chunk_size("0").unwrap_err().contains("at least 1"));
        assert!(chunk_size("1000000000").unwrap_err().contains("too large"));
        assert!(chunk_size("99999999999999999999999").is_err());
        assert!(chunk_size("-5").is_err());
        assert!(chunk_size("lots").is_err());
    }

    #[test]
    fn hash_functions() {
        assert_eq!(hash_function("sha1"), Ok(HashFunction::Sha1));
        assert_eq!(hash_function("SHA-256"), Ok(HashFunction::Sha256));
        assert!(hash_function("md5")
            .unwrap_err()
            .contains("sha1, sha224, sha256"));
    }
}
