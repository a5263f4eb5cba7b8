//! The ordered event trace, hashed as it goes: two runs agree bit for bit
//! exactly when their trace hashes agree (to SHA-256's confidence).
//!
//! Partitions of a simulation collect their records of a window of virtual
//! time apart; [`Trace::absorb`] puts them in one canonical order (by time,
//! then host, each host's records in its own order) before hashing, so the
//! hash does not depend on how the hosts were split.

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

/// One record, waiting for its window to be hashed.
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// Virtual microseconds.
    pub at_us: u64,
    /// The host it happened at.
    pub host: u32,
    /// What happened.
    pub kind: Kind,
    /// First operand (a packet's source, a peer).
    pub a: u32,
    /// Second operand (a packet's destination).
    pub b: u32,
    /// Bytes (a packet's size).
    pub size: u32,
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

    /// Hashes one window's records (taking them) in canonical order: by
    /// time, then host, and each host's records in the order given.
    pub fn absorb(&mut self, window: &mut Vec<Record>) {
        window.sort_by_key(|r| (r.at_us, r.host));
        for r in window.drain(..) {
            self.record(r.kind, r.at_us, r.a, r.b, r.size);
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

    #[test]
    fn absorb_orders_by_time_then_host_keeping_each_hosts_order() {
        let rec = |at_us, host, size| Record {
            at_us,
            host,
            kind: Kind::Deliver,
            a: 0,
            b: host,
            size,
        };
        // Two partitions' buffers, concatenated in either order.
        let p0 = [rec(5, 2, 1), rec(5, 2, 2), rec(9, 0, 3)];
        let p1 = [rec(1, 1, 4), rec(5, 1, 5)];
        let hash = |parts: [&[Record]; 2]| {
            let mut t = Trace::default();
            let mut w: Vec<Record> = parts.concat();
            t.absorb(&mut w);
            assert!(w.is_empty());
            t.finish()
        };
        let mut by_hand = Trace::default();
        for r in [p1[0], p1[1], p0[0], p0[1], p0[2]] {
            by_hand.record(r.kind, r.at_us, r.a, r.b, r.size);
        }
        let expected = by_hand.finish();
        assert_eq!(hash([&p0, &p1]), expected);
        assert_eq!(hash([&p1, &p0]), expected);
        // A host's own order matters.
        let swapped = [rec(5, 2, 2), rec(5, 2, 1), rec(9, 0, 3)];
        assert_ne!(hash([&swapped, &p1]), expected);
    }
}
