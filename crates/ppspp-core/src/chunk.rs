//! Chunks, chunk ranges, byte ranges and the chunk size (RFC 7574 §4).
//!
//! Content is cut into fixed-size chunks numbered from 0; only the last chunk
//! may be shorter. Chunk ranges are inclusive on both ends, exactly as the
//! "chunk ranges" addressing methods put them on the wire (RFC 7574 §4.3).

use std::fmt;
use std::num::NonZeroU32;

use thiserror::Error;

/// The largest chunk index any content may have.
///
/// Leaf `i` is bin `2i` (RFC 7574 §4.2), and a 64-bit bin must stay below the
/// all-ones "no bin" value, so chunks are numbered below 2^63.
pub const MAX_CHUNK_INDEX: u64 = (1 << 63) - 1;

/// The index of one chunk of content (RFC 7574 §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ChunkIndex(pub u64);

impl ChunkIndex {
    /// The raw index.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for ChunkIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl From<u64> for ChunkIndex {
    fn from(i: u64) -> Self {
        ChunkIndex(i)
    }
}

/// A non-empty, inclusive range of chunks `first..=last`.
///
/// The constructor enforces `first <= last <= MAX_CHUNK_INDEX`, so every
/// `ChunkRange` can be decomposed into bins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChunkRange {
    first: ChunkIndex,
    last: ChunkIndex,
}

impl ChunkRange {
    /// The range `first..=last`, or `None` when it is reversed or reaches past
    /// [`MAX_CHUNK_INDEX`].
    #[inline]
    pub fn new(first: impl Into<ChunkIndex>, last: impl Into<ChunkIndex>) -> Option<Self> {
        let (first, last) = (first.into(), last.into());
        (first <= last && last.0 <= MAX_CHUNK_INDEX).then_some(ChunkRange { first, last })
    }

    /// The range holding just `chunk`, or `None` past [`MAX_CHUNK_INDEX`].
    pub fn single(chunk: impl Into<ChunkIndex>) -> Option<Self> {
        let chunk = chunk.into();
        Self::new(chunk, chunk)
    }

    /// The `count` chunks starting at `first`; `None` when `count` is zero or
    /// the range would pass [`MAX_CHUNK_INDEX`].
    pub fn with_len(first: impl Into<ChunkIndex>, count: u64) -> Option<Self> {
        let first = first.into();
        let last = first.0.checked_add(count.checked_sub(1)?)?;
        Self::new(first, ChunkIndex(last))
    }

    /// First chunk of the range.
    pub const fn first(self) -> ChunkIndex {
        self.first
    }

    /// Last chunk of the range (inclusive).
    pub const fn last(self) -> ChunkIndex {
        self.last
    }

    /// Number of chunks in the range (at least 1, at most 2^63).
    #[inline]
    pub const fn len(self) -> u64 {
        self.last.0 - self.first.0 + 1
    }

    /// Always false: a `ChunkRange` holds at least one chunk.
    pub const fn is_empty(self) -> bool {
        false
    }

    /// Whether `chunk` lies in the range.
    pub fn contains(self, chunk: ChunkIndex) -> bool {
        self.first <= chunk && chunk <= self.last
    }

    /// The part of this range that overlaps `other`, if any.
    pub fn intersect(self, other: ChunkRange) -> Option<ChunkRange> {
        ChunkRange::new(self.first.max(other.first), self.last.min(other.last))
    }

    /// The fewest bins that together cover exactly this range, left to right
    /// (RFC 7574 §4.2: any range is a union of at most 2·log2(len) bins).
    pub fn bins(self) -> crate::bin::RangeBins {
        crate::bin::RangeBins::new(self)
    }

    /// The bytes these chunks occupy in content of `content_len` bytes cut
    /// into `chunk_size` chunks, clamped to the content; `None` when the range
    /// starts at or past the end of the content.
    pub fn to_bytes(self, chunk_size: ChunkSize, content_len: u64) -> Option<ByteRange> {
        let cs = chunk_size.bytes_u64();
        let first = self.first.0.checked_mul(cs)?;
        if first >= content_len {
            return None;
        }
        let end = self
            .last
            .0
            .saturating_add(1)
            .saturating_mul(cs)
            .min(content_len);
        ByteRange::new(first, end - 1)
    }
}

impl fmt::Display for ChunkRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..={}", self.first.0, self.last.0)
    }
}

/// A non-empty, inclusive range of bytes `first..=last` (the "64-bit byte
/// ranges" addressing method, RFC 7574 §4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteRange {
    first: u64,
    last: u64,
}

impl ByteRange {
    /// The range `first..=last`, or `None` when reversed.
    pub fn new(first: u64, last: u64) -> Option<Self> {
        (first <= last).then_some(ByteRange { first, last })
    }

    /// First byte offset.
    pub const fn first(self) -> u64 {
        self.first
    }

    /// Last byte offset (inclusive).
    pub const fn last(self) -> u64 {
        self.last
    }

    /// The chunks that hold any of these bytes, or `None` when the bytes lie
    /// past [`MAX_CHUNK_INDEX`] chunks (only possible with tiny chunks).
    pub fn to_chunks(self, chunk_size: ChunkSize) -> Option<ChunkRange> {
        let cs = chunk_size.bytes_u64();
        ChunkRange::new(self.first / cs, self.last / cs)
    }
}

/// The largest chunk size we accept: the largest power of two whose DATA
/// message, with its headers, still fits in one UDP datagram (65,507 bytes).
pub const MAX_CHUNK_SIZE: u32 = 32 * 1024;

/// The size of every chunk but the last, in bytes (1 ..= [`MAX_CHUNK_SIZE`]).
///
/// RFC 7574 §8.1 recommends 1024 bytes, which is the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ChunkSize(NonZeroU32);

/// Why a number is not a usable chunk size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum ChunkSizeError {
    /// Zero bytes.
    #[error("chunk size must be at least 1 byte")]
    Zero,
    /// More than [`MAX_CHUNK_SIZE`] bytes.
    #[error("chunk size {0} is too large: a chunk must fit in one UDP datagram (at most {MAX_CHUNK_SIZE} bytes)")]
    TooLarge(u64),
}

impl ChunkSize {
    /// RFC 7574 §8.1's recommended 1024-byte chunks.
    pub const DEFAULT: ChunkSize = ChunkSize(match NonZeroU32::new(1024) {
        Some(n) => n,
        None => unreachable!(),
    });

    /// A checked chunk size.
    pub fn new(bytes: u64) -> Result<Self, ChunkSizeError> {
        if bytes == 0 {
            return Err(ChunkSizeError::Zero);
        }
        if bytes > u64::from(MAX_CHUNK_SIZE) {
            return Err(ChunkSizeError::TooLarge(bytes));
        }
        // Both bounds were checked above, so neither conversion can fail.
        let n = u32::try_from(bytes).map_err(|_| ChunkSizeError::TooLarge(bytes))?;
        NonZeroU32::new(n)
            .map(ChunkSize)
            .ok_or(ChunkSizeError::Zero)
    }

    /// The size in bytes.
    pub const fn bytes(self) -> u32 {
        self.0.get()
    }

    /// The size in bytes, widened for offset arithmetic.
    pub const fn bytes_u64(self) -> u64 {
        self.0.get() as u64
    }

    /// The size as a `usize`, for slicing buffers.
    pub const fn bytes_usize(self) -> usize {
        self.0.get() as usize
    }

    /// How many chunks `content_len` bytes occupy (the last may be short).
    pub const fn chunks_in(self, content_len: u64) -> u64 {
        content_len.div_ceil(self.bytes_u64())
    }
}

impl Default for ChunkSize {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl fmt::Display for ChunkSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_range_rejects_reversed_and_oversized() {
        assert!(ChunkRange::new(3u64, 2u64).is_none());
        assert!(ChunkRange::new(0u64, MAX_CHUNK_INDEX + 1).is_none());
        let all = ChunkRange::new(0u64, MAX_CHUNK_INDEX).unwrap();
        assert_eq!(all.len(), 1 << 63);
        assert!(ChunkRange::with_len(5u64, 0).is_none());
        assert_eq!(ChunkRange::with_len(5u64, 3), ChunkRange::new(5u64, 7u64));
    }

    #[test]
    fn intersect_overlapping_and_disjoint() {
        let a = ChunkRange::new(2u64, 10u64).unwrap();
        let b = ChunkRange::new(8u64, 20u64).unwrap();
        assert_eq!(a.intersect(b), ChunkRange::new(8u64, 10u64));
        let c = ChunkRange::new(11u64, 12u64).unwrap();
        assert_eq!(a.intersect(c), None);
    }

    #[test]
    fn chunk_to_byte_ranges_clamp_to_content() {
        let cs = ChunkSize::new(1024).unwrap();
        // 3000 bytes: chunks 0, 1 full, chunk 2 holds 952 bytes.
        let r = ChunkRange::new(1u64, 5u64).unwrap();
        assert_eq!(r.to_bytes(cs, 3000), ByteRange::new(1024, 2999));
        assert_eq!(ChunkRange::single(3u64).unwrap().to_bytes(cs, 3000), None);
        assert_eq!(
            ChunkRange::single(0u64).unwrap().to_bytes(cs, 3000),
            ByteRange::new(0, 1023)
        );
    }

    #[test]
    fn byte_to_chunk_ranges_cover_partial_chunks() {
        let cs = ChunkSize::new(1024).unwrap();
        let b = ByteRange::new(1000, 2048).unwrap();
        assert_eq!(b.to_chunks(cs), ChunkRange::new(0u64, 2u64));
        let one = ChunkSize::new(1).unwrap();
        assert_eq!(ByteRange::new(0, u64::MAX).unwrap().to_chunks(one), None);
    }

    #[test]
    fn chunk_size_bounds() {
        assert_eq!(ChunkSize::new(0), Err(ChunkSizeError::Zero));
        assert_eq!(
            ChunkSize::new(u64::from(MAX_CHUNK_SIZE) + 1),
            Err(ChunkSizeError::TooLarge(u64::from(MAX_CHUNK_SIZE) + 1))
        );
        assert_eq!(ChunkSize::new(1).unwrap().bytes(), 1);
        assert_eq!(ChunkSize::DEFAULT.bytes(), 1024);
        assert_eq!(ChunkSize::DEFAULT.chunks_in(3000), 3);
        assert_eq!(ChunkSize::DEFAULT.chunks_in(0), 0);
        assert_eq!(ChunkSize::DEFAULT.chunks_in(1024), 1);
    }
}
