//! Chunks against media time, in exact integer arithmetic.

use std::time::Duration;

use super::Bitrate;
use crate::chunk::ChunkSize;
use crate::time::duration_micros;

/// How long chunks last when played at a bitrate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Timing {
    /// Bits per chunk.
    chunk_bits: u128,
    /// Bits per second.
    bps: u128,
}

impl Timing {
    pub(crate) fn new(chunk_size: ChunkSize, bitrate: Bitrate) -> Timing {
        Timing {
            chunk_bits: u128::from(chunk_size.bytes_u64()) * 8,
            bps: u128::from(bitrate.bps()),
        }
    }

    /// Microseconds from the start of a chunk's playback to the start of
    /// the chunk `k` later, rounded up: a chunk is needed no earlier than
    /// its exact time.
    pub(crate) fn span_us(self, k: u64) -> u64 {
        let num = u128::from(k) * self.chunk_bits * 1_000_000;
        u64::try_from(num.div_ceil(self.bps)).unwrap_or(u64::MAX)
    }

    /// How many chunks start within `us` microseconds after a chunk's
    /// start, that one excluded: the offset of the chunk playing then.
    pub(crate) fn chunks_in_us(self, us: u64) -> u64 {
        let num = u128::from(us) * self.bps;
        u64::try_from(num / (self.chunk_bits * 1_000_000)).unwrap_or(u64::MAX)
    }

    /// Chunks needed to hold `d` of media, at least one.
    pub(crate) fn chunks_for(self, d: Duration) -> u64 {
        let num = u128::from(duration_micros(d)) * self.bps;
        let n = num.div_ceil(self.chunk_bits * 1_000_000);
        u64::try_from(n).unwrap_or(u64::MAX).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kilobyte_chunk_at_one_megabit_lasts_8192_microseconds() {
        let t = Timing::new(ChunkSize::DEFAULT, Bitrate::MBIT);
        assert_eq!(t.span_us(1), 8192);
        assert_eq!(t.span_us(125), 1_024_000);
        assert_eq!(t.chunks_in_us(8191), 0);
        assert_eq!(t.chunks_in_us(8192), 1);
        // Five seconds of 1 Mbit/s is 625,000 bytes: 610.35 chunks.
        assert_eq!(t.chunks_for(Duration::from_secs(5)), 611);
        assert_eq!(t.chunks_for(Duration::ZERO), 1);
    }

    #[test]
    fn spans_round_up_and_positions_round_down() {
        // 3 bits per µs against 8192-bit chunks: nothing divides evenly.
        let t = Timing::new(ChunkSize::DEFAULT, Bitrate(3_000_000));
        for k in 0..1000 {
            let s = t.span_us(k);
            assert_eq!(t.chunks_in_us(s), k, "chunk {k} starts at {s}");
            if s > 0 {
                assert_eq!(t.chunks_in_us(s - 1), k - 1);
            }
        }
    }
}
