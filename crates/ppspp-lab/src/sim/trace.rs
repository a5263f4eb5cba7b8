//! The ordered event trace, hashed as it goes: two runs agree bit for bit
//! exactly when their trace hashes agree (to SHA-256's confidence).

use sha2::{Digest, Sha256};

/// What a trace record is.
#[derive(Clone, Copy, Debug)]
#[repr(u8)]
pub enum Kind {
    /// A packet reached its host.
    Deliver = 1,
    /// A peer joined.
    Join = 2,
    /// A peer left.
    Leave = 3,
    /// A peer completed its download.
    Complete = 4,
}

/// A running hash over fixed-size records, buffered so that hashing costs
/// little per event.
pub struct Trace {
    hasher: Sha256,
    buf: Vec<u8>,
    records: u64,
}

impl Default for Trace {
    fn default() -> Self {
        Trace {
            hasher: Sha256::new(),
            buf: Vec::with_capacity(1 << 16),
            records: 0,
        }
    }
}

impl Trace {
    /// Appends one record.
    pub fn record(&mut self, kind: Kind, at_us: u64, a: u32, b: u32, size: u32) {
        self.buf.push(kind as u8);
        self.buf.extend_from_slice(&at_us.to_le_bytes());
        self.buf.extend_from_slice(&a.to_le_bytes());
        self.buf.extend_from_slice(&b.to_le_bytes());
        self.buf.extend_from_slice(&size.to_le_bytes());
        self.records += 1;
        if self.buf.len() >= (1 << 16) - 32 {
            self.hasher.update(&self.buf);
            self.buf.clear();
        }
    }

    /// Records so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The hash of everything recorded, as hex.
    pub fn finish(mut self) -> String {
        self.hasher.update(&self.buf);
        hex::encode(self.hasher.finalize())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_and_content_matter() {
        let run = |swap: bool| {
            let mut t = Trace::default();
            let (x, y) = if swap { (2, 1) } else { (1, 2) };
            for i in 0..10_000u64 {
                t.record(Kind::Deliver, i, x, y, 1052);
            }
            t.finish()
        };
        assert_eq!(run(false), run(false));
        assert_ne!(run(false), run(true));
    }
}
