//! Where a live stream is cut for players: MPEG-TS packet boundaries and
//! HLS segments (RFC 8216), from chunk indices alone.
//!
//! `ppspp live` chunks its input from the input's first byte, so byte `b`
//! of the stream is byte `b mod cs` of chunk `b / cs`, and an MPEG-TS
//! input (ISO/IEC 13818-1: 188-byte packets, each starting with the sync
//! byte 0x47) has a packet at every multiple of 188. A response that
//! starts mid-stream starts at the first packet boundary in its first
//! chunk; a segment spans whole packets. Where the bytes say otherwise (a
//! source that is not TS from byte 0), the first sync byte that repeats
//! 188 bytes later is taken instead.

/// MPEG-TS packet length.
pub const TS_PACKET: u64 = 188;
/// The TS sync byte.
const SYNC: u8 = 0x47;

/// The offset in `data` (stream bytes from stream offset `at`) of the first
/// TS packet: where 188-byte packets from stream byte 0 put it, if the sync
/// byte is there; else the first sync byte followed by another 188 bytes
/// later; else 0 (not TS: serve as is).
pub fn packet_start(at: u64, data: &[u8]) -> usize {
    let nominal = ((TS_PACKET - at % TS_PACKET) % TS_PACKET) as usize;
    if data.get(nominal) == Some(&SYNC) {
        return nominal;
    }
    let p = TS_PACKET as usize;
    (0..data.len().saturating_sub(p))
        .find(|&i| data[i] == SYNC && data[i + p] == SYNC)
        .unwrap_or(0)
}

/// HLS segments of a live stream: segment `n` is the stream's bytes from
/// `start(n)` to `start(n + 1)`, whole TS packets of about `target` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segments {
    /// Bytes per segment before rounding to packets.
    pub target: u64,
    /// Bytes per chunk.
    pub chunk_size: u64,
}

impl Segments {
    /// Segments of about `seconds` of media at `bitrate_bps`, at least one
    /// packet.
    pub fn new(seconds: f64, bitrate_bps: u64, chunk_size: u64) -> Self {
        let target = (seconds * bitrate_bps as f64 / 8.0) as u64;
        Segments {
            target: target.max(TS_PACKET),
            chunk_size: chunk_size.max(1),
        }
    }

    /// The stream byte segment `n` starts at: the first packet boundary at
    /// or after `n` targets.
    pub fn start(self, n: u64) -> u64 {
        n.saturating_mul(self.target)
            .div_ceil(TS_PACKET)
            .saturating_mul(TS_PACKET)
    }

    /// The chunks holding segment `n`: first and one past the last
    /// (none for a segment past any stream: `n` comes from a request).
    pub fn chunks(self, n: u64) -> (u64, u64) {
        let first = self.start(n) / self.chunk_size;
        let end = self.start(n.saturating_add(1)).div_ceil(self.chunk_size);
        (first, end.max(first))
    }

    /// The first segment wholly at or after chunk `floor`.
    pub fn first_from(self, floor: u64) -> u64 {
        let byte = floor.saturating_mul(self.chunk_size);
        // The smallest n with start(n) >= byte.
        let mut n = byte / self.target;
        while self.start(n) < byte {
            n += 1;
        }
        n
    }

    /// How many segments lie wholly before chunk `end` (exclusive).
    pub fn complete_before(self, end: u64) -> u64 {
        let byte = end.saturating_mul(self.chunk_size);
        let mut n = byte / self.target;
        while n > 0 && self.start(n) > byte {
            n -= 1;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(packets: u64) -> Vec<u8> {
        (0..packets * TS_PACKET)
            .map(|i| {
                if i % TS_PACKET == 0 {
                    SYNC
                } else {
                    (i % 7) as u8
                }
            })
            .collect()
    }

    #[test]
    fn a_response_starts_at_the_packet_boundary_in_its_first_chunk() {
        let stream = ts(40);
        for at in [0u64, 1024, 2048, 3000] {
            let data = &stream[at as usize..];
            let o = packet_start(at, data);
            assert_eq!((at + o as u64) % TS_PACKET, 0, "at {at}");
            assert!(o < TS_PACKET as usize);
        }
        // Not aligned to byte 0 (e.g. a few bytes of junk first): found by
        // the repeat of the sync byte.
        let mut shifted = vec![1u8, 2, 3];
        shifted.extend(ts(10));
        assert_eq!(packet_start(0, &shifted), 3);
        // Not TS at all: served as is.
        assert_eq!(packet_start(5, &[0u8; 1000]), 0);
    }

    #[test]
    fn segments_are_whole_packets_back_to_back() {
        let s = Segments::new(2.0, 1_000_000, 1024);
        assert_eq!(s.target, 250_000);
        for n in 0..50 {
            assert_eq!(s.start(n) % TS_PACKET, 0);
            let len = s.start(n + 1) - s.start(n);
            assert!(len.abs_diff(s.target) < TS_PACKET, "{len}");
            let (first, end) = s.chunks(n);
            assert!(first * 1024 <= s.start(n) && s.start(n + 1) <= end * 1024);
        }
    }

    #[test]
    fn any_segment_number_has_bounds() {
        let s = Segments::new(2.0, 1_000_000, 1024);
        for n in [u64::MAX, u64::MAX - 1, u64::MAX / 250_000, 1 << 62] {
            let (first, end) = s.chunks(n);
            assert!(first <= end, "{n}");
        }
    }

    #[test]
    fn the_first_and_last_complete_segments_of_a_chunk_span() {
        let s = Segments::new(2.0, 1_000_000, 1024);
        let n = s.first_from(1000);
        assert!(s.start(n) >= 1000 * 1024 && s.start(n - 1) < 1000 * 1024);
        assert_eq!(s.first_from(0), 0);
        let c = s.complete_before(2000);
        assert!(s.start(c) <= 2000 * 1024 && s.start(c + 1) > 2000 * 1024);
        assert_eq!(s.complete_before(0), 0);
    }
}
