//! Chunk specifications: how a message names chunks (RFC 7574 §4.3, §7.8).

use std::fmt;

use crate::bin::Bin;
use crate::chunk::{ByteRange, ChunkRange, ChunkSize};

use super::cursor::{Cursor, Writer};
use super::error::{DecodeErrorKind, EncodeError};
use super::{ChunkAddressing, DecodeError};

/// The chunks a message is about, in the form of the swarm's addressing
/// method: a bin, an inclusive chunk range, or an inclusive byte range.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkSpec {
    /// A bin (32- or 64-bit bins); may be [`Bin::NONE`].
    Bin(Bin),
    /// A chunk range (32- or 64-bit chunk ranges).
    Chunks(ChunkRange),
    /// A byte range (64-bit byte ranges).
    Bytes(ByteRange),
}

impl ChunkSpec {
    /// The chunks this specification covers, or `None` for [`Bin::NONE`] or
    /// bytes past [`crate::chunk::MAX_CHUNK_INDEX`] chunks.
    pub fn to_chunks(self, chunk_size: ChunkSize) -> Option<ChunkRange> {
        match self {
            ChunkSpec::Bin(b) => b.chunks(),
            ChunkSpec::Chunks(r) => Some(r),
            ChunkSpec::Bytes(b) => b.to_chunks(chunk_size),
        }
    }

    /// How many payload bytes a DATA for this specification carries when
    /// every chunk is `chunk_size` bytes (saturating; `None` for no bin).
    #[inline]
    pub(crate) fn payload_len(self, chunk_size: u32) -> Option<u64> {
        let chunks = match self {
            ChunkSpec::Bin(b) if b.is_none() => return None,
            ChunkSpec::Bin(b) => b.chunk_count(),
            ChunkSpec::Chunks(r) => r.len(),
            ChunkSpec::Bytes(b) => return Some((b.last() - b.first()).saturating_add(1)),
        };
        Some(chunks.saturating_mul(u64::from(chunk_size)))
    }

    #[inline]
    pub(crate) fn decode(
        cur: &mut Cursor<'_>,
        addressing: ChunkAddressing,
    ) -> Result<Self, DecodeError> {
        let at = cur.pos();
        let invalid = DecodeError {
            offset: at,
            kind: DecodeErrorKind::InvalidChunkSpec,
        };
        Ok(match addressing {
            ChunkAddressing::Bins32 => ChunkSpec::Bin(Bin::from_u32(cur.u32()?)),
            ChunkAddressing::Bins64 => ChunkSpec::Bin(Bin(cur.u64()?)),
            ChunkAddressing::ChunkRanges32 => {
                let (first, last) = (cur.u32()?, cur.u32()?);
                ChunkSpec::Chunks(
                    ChunkRange::new(u64::from(first), u64::from(last)).ok_or(invalid)?,
                )
            }
            ChunkAddressing::ChunkRanges64 => {
                let (first, last) = (cur.u64()?, cur.u64()?);
                ChunkSpec::Chunks(ChunkRange::new(first, last).ok_or(invalid)?)
            }
            ChunkAddressing::ByteRanges64 => {
                let (first, last) = (cur.u64()?, cur.u64()?);
                ChunkSpec::Bytes(ByteRange::new(first, last).ok_or(invalid)?)
            }
        })
    }

    /// The spec as written on the wire in `addressing` (what a signature
    /// over "the on-the-wire representation" covers, RFC 7574 §6.1).
    pub fn wire_bytes(&self, addressing: ChunkAddressing) -> Result<Vec<u8>, EncodeError> {
        let mut buf = [0u8; 16];
        let mut w = Writer::new(&mut buf);
        self.encode(&mut w, addressing)?;
        let len = w.pos();
        Ok(buf[..len].to_vec())
    }

    #[inline]
    pub(crate) fn encode(
        &self,
        w: &mut Writer<'_>,
        addressing: ChunkAddressing,
    ) -> Result<(), EncodeError> {
        let too_wide = EncodeError::ValueTooWide(addressing);
        let narrow = |v: u64| u32::try_from(v).map_err(|_| too_wide);
        match (addressing, self) {
            (ChunkAddressing::Bins32, ChunkSpec::Bin(b)) => w.u32(b.to_u32().ok_or(too_wide)?),
            (ChunkAddressing::Bins64, ChunkSpec::Bin(b)) => w.u64(b.raw()),
            (ChunkAddressing::ChunkRanges32, ChunkSpec::Chunks(r)) => {
                let (first, last) = (narrow(r.first().get())?, narrow(r.last().get())?);
                w.u32(first)?;
                w.u32(last)
            }
            (ChunkAddressing::ChunkRanges64, ChunkSpec::Chunks(r)) => {
                w.u64(r.first().get())?;
                w.u64(r.last().get())
            }
            (ChunkAddressing::ByteRanges64, ChunkSpec::Bytes(r)) => {
                w.u64(r.first())?;
                w.u64(r.last())
            }
            _ => Err(EncodeError::SpecMismatch(addressing)),
        }
    }
}

impl fmt::Debug for ChunkSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChunkSpec::Bin(b) => write!(f, "{b:?}"),
            ChunkSpec::Chunks(r) => write!(f, "chunks {r}"),
            ChunkSpec::Bytes(r) => write!(f, "bytes {}..={}", r.first(), r.last()),
        }
    }
}

impl From<Bin> for ChunkSpec {
    fn from(b: Bin) -> Self {
        ChunkSpec::Bin(b)
    }
}

impl From<ChunkRange> for ChunkSpec {
    fn from(r: ChunkRange) -> Self {
        ChunkSpec::Chunks(r)
    }
}

impl From<ByteRange> for ChunkSpec {
    fn from(r: ByteRange) -> Self {
        ChunkSpec::Bytes(r)
    }
}

impl ChunkAddressing {
    /// The chunk specifications, in this addressing method, that together
    /// name exactly the chunks of `range`: one range, or the fewest bins for
    /// bin addressing. Byte ranges need the content geometry, so they cover
    /// whole chunks of `chunk_size` clamped to `content_len`. Yields nothing
    /// that the method cannot express (e.g. chunks past 2^32 in 32-bit
    /// methods, or chunks past the content for byte ranges).
    pub fn specs_for(
        self,
        range: ChunkRange,
        chunk_size: ChunkSize,
        content_len: u64,
    ) -> impl Iterator<Item = ChunkSpec> {
        let limit: u64 = match self {
            ChunkAddressing::ChunkRanges32 => u64::from(u32::MAX),
            // A 32-bit bin's leaf is 2i < 2^32 − 1.
            ChunkAddressing::Bins32 => u64::from(u32::MAX >> 1),
            _ => u64::MAX,
        };
        let clamped = ChunkRange::new(range.first(), range.last().get().min(limit))
            .filter(|_| range.first().get() <= limit);
        let (bins, single) = match (self, clamped) {
            (_, None) => (None, None),
            (ChunkAddressing::Bins32 | ChunkAddressing::Bins64, Some(r)) => {
                (Some(r.bins().map(ChunkSpec::Bin)), None)
            }
            (ChunkAddressing::ByteRanges64, Some(r)) => (
                None,
                r.to_bytes(chunk_size, content_len).map(ChunkSpec::Bytes),
            ),
            (_, Some(r)) => (None, Some(ChunkSpec::Chunks(r))),
        };
        bins.into_iter().flatten().chain(single)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(spec: ChunkSpec, a: ChunkAddressing) -> ChunkSpec {
        let mut buf = [0u8; 16];
        let mut w = Writer::new(&mut buf);
        spec.encode(&mut w, a).unwrap();
        assert_eq!(w.pos(), a.spec_len());
        ChunkSpec::decode(&mut Cursor::new(&buf[..a.spec_len()], 0), a).unwrap()
    }

    #[test]
    fn each_method_round_trips() {
        let r = ChunkRange::new(3u64, 9u64).unwrap();
        assert_eq!(
            round_trip(Bin(11).into(), ChunkAddressing::Bins32),
            Bin(11).into()
        );
        assert_eq!(
            round_trip(Bin::NONE.into(), ChunkAddressing::Bins32),
            Bin::NONE.into()
        );
        assert_eq!(
            round_trip(Bin(1 << 40).into(), ChunkAddressing::Bins64),
            Bin(1 << 40).into()
        );
        assert_eq!(
            round_trip(r.into(), ChunkAddressing::ChunkRanges32),
            r.into()
        );
        assert_eq!(
            round_trip(r.into(), ChunkAddressing::ChunkRanges64),
            r.into()
        );
        let b = ByteRange::new(10, 5000).unwrap();
        assert_eq!(
            round_trip(b.into(), ChunkAddressing::ByteRanges64),
            b.into()
        );
    }

    #[test]
    fn mismatches_and_widths_are_errors() {
        let mut buf = [0u8; 16];
        let r = ChunkRange::new(0u64, 1u64 << 33).unwrap();
        let mut w = Writer::new(&mut buf);
        assert_eq!(
            ChunkSpec::Chunks(r).encode(&mut w, ChunkAddressing::ChunkRanges32),
            Err(EncodeError::ValueTooWide(ChunkAddressing::ChunkRanges32))
        );
        assert_eq!(
            ChunkSpec::Bin(Bin(1 << 33)).encode(&mut w, ChunkAddressing::Bins32),
            Err(EncodeError::ValueTooWide(ChunkAddressing::Bins32))
        );
        assert_eq!(
            ChunkSpec::Bin(Bin(1)).encode(&mut w, ChunkAddressing::ChunkRanges64),
            Err(EncodeError::SpecMismatch(ChunkAddressing::ChunkRanges64))
        );
    }

    #[test]
    fn reversed_and_huge_ranges_are_refused() {
        let reversed = [0, 0, 0, 5, 0, 0, 0, 4];
        let err = ChunkSpec::decode(
            &mut Cursor::new(&reversed, 0),
            ChunkAddressing::ChunkRanges32,
        )
        .unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::InvalidChunkSpec);
        let mut huge = [0u8; 16];
        huge[8..].copy_from_slice(&u64::MAX.to_be_bytes());
        let err = ChunkSpec::decode(&mut Cursor::new(&huge, 0), ChunkAddressing::ChunkRanges64)
            .unwrap_err();
        assert_eq!(err.kind, DecodeErrorKind::InvalidChunkSpec);
    }

    #[test]
    fn specs_for_each_method() {
        let cs = ChunkSize::DEFAULT;
        let r = ChunkRange::new(1u64, 6u64).unwrap();
        let bins: Vec<_> = ChunkAddressing::Bins32.specs_for(r, cs, 1 << 20).collect();
        assert_eq!(bins, [Bin(2), Bin(5), Bin(9), Bin(12)].map(ChunkSpec::Bin));
        let ranges: Vec<_> = ChunkAddressing::ChunkRanges32
            .specs_for(r, cs, 1 << 20)
            .collect();
        assert_eq!(ranges, [ChunkSpec::Chunks(r)]);
        let bytes: Vec<_> = ChunkAddressing::ByteRanges64
            .specs_for(r, cs, 3000)
            .collect();
        assert_eq!(
            bytes,
            [ChunkSpec::Bytes(ByteRange::new(1024, 2999).unwrap())]
        );
        let far = ChunkRange::new(1u64 << 32, (1u64 << 32) + 1).unwrap();
        assert_eq!(
            ChunkAddressing::ChunkRanges32
                .specs_for(far, cs, u64::MAX)
                .count(),
            0
        );
        assert_eq!(
            ChunkAddressing::ChunkRanges64
                .specs_for(far, cs, u64::MAX)
                .count(),
            1
        );
    }
}
