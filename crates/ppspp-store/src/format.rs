//! The checkpoint file format, version 2 (described in the crate
//! documentation): streamed encoding and checked decoding.
//!
//! The body is written in one pass, in bounded pieces, so a checkpoint of a
//! million-chunk download is never held in memory whole; what is only known
//! at the end — the node count, and the content file's length and
//! modification time after it has been flushed — goes in a fixed trailer
//! before the checksum.

use std::io::{self, Write};

use ppspp_core::{Bin, Binmap, ChunkRange, ChunkSize, Hash, HashFunction, PartialTree};
pub(crate) use sha2::{Digest, Sha256};
use thiserror::Error;

const MAGIC: &[u8; 8] = b"PPSPPCKP";
/// The format version written; others are refused.
pub(crate) const VERSION: u16 = 2;
/// The checksum: SHA-256 over everything before it.
const CHECKSUM: HashFunction = HashFunction::Sha256;
const CHECKSUM_LEN: usize = 32;
/// Bytes before the root hash.
const FIXED_LEN: usize = 8 + 2 + 1 + 1 + 4 + 8 + 8;
/// The trailer: node count, file length, mtime flag, mtime.
pub(crate) const TRAILER_LEN: usize = 8 + 8 + 1 + 16;

const FLAG_CHUNK_COUNT: u8 = 1;
const FLAG_CONTENT_LEN: u8 = 2;

/// Why a checkpoint file was not usable.
#[derive(Debug, Error, PartialEq, Eq)]
pub(crate) enum FormatError {
    #[error("too short to be a checkpoint")]
    Truncated,
    #[error("not a ppspp checkpoint (bad magic)")]
    Magic,
    #[error("format version {0}, this build reads version {VERSION}")]
    Version(u16),
    #[error("checksum mismatch (damaged file)")]
    Checksum,
    #[error("corrupt field: {0}")]
    Corrupt(&'static str),
}

/// The fixed part of a checkpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub hash_fn: HashFunction,
    pub root: Hash,
    pub chunk_size: ChunkSize,
    pub chunk_count: Option<u64>,
    pub content_len: Option<u64>,
    /// The content file's length when the checkpoint was written.
    pub file_len: u64,
    /// Its modification time (ns since the Unix epoch), when available.
    pub mtime_ns: Option<i128>,
}

/// Encodes a checkpoint of `have` and `tree`'s trusted frontier. `header`
/// gives the file facts; its size fields should match `tree`.
/// Streams the body of a checkpoint of `have` and `tree`'s trusted
/// frontier into `out` (everything before the trailer); returns the number
/// of nodes written, for the trailer. The header's file facts are not part
/// of the body.
pub(crate) fn encode_body(
    out: &mut impl Write,
    header: &Header,
    have: &Binmap,
    tree: &PartialTree,
) -> io::Result<u64> {
    let flag = |on: bool, bit: u8| if on { bit } else { 0 };
    let flags = flag(header.chunk_count.is_some(), FLAG_CHUNK_COUNT)
        | flag(header.content_len.is_some(), FLAG_CONTENT_LEN);
    let mut head = Vec::with_capacity(FIXED_LEN + 64);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.push(header.hash_fn.code());
    head.push(flags);
    head.extend_from_slice(&header.chunk_size.bytes().to_le_bytes());
    head.extend_from_slice(&header.chunk_count.unwrap_or(0).to_le_bytes());
    head.extend_from_slice(&header.content_len.unwrap_or(0).to_le_bytes());
    head.extend_from_slice(header.root.as_bytes());
    out.write_all(&head)?;

    let mut buf = Vec::with_capacity(64);
    let runs = have.filled_runs().count() as u64;
    put_varint(&mut buf, runs);
    let mut next = 0u64;
    for run in have.filled_runs() {
        put_varint(&mut buf, run.first().0 - next);
        put_varint(&mut buf, run.len() - 1);
        out.write_all(&buf)?;
        buf.clear();
        next = run.last().0 + 1;
    }
    out.write_all(&buf)?;

    let mut count = 0u64;
    let mut prev = 0u64;
    if header.chunk_count.is_some() {
        for (bin, hash) in tree.trusted_frontier() {
            buf.clear();
            put_varint(&mut buf, zigzag(bin.0.wrapping_sub(prev)));
            buf.extend_from_slice(hash.as_bytes());
            out.write_all(&buf)?;
            prev = bin.0;
            count += 1;
        }
    }
    Ok(count)
}

/// The trailer that follows the body: what is only known once the body is
/// written and the content file flushed.
pub(crate) fn trailer(nodes: u64, file_len: u64, mtime_ns: Option<i128>) -> [u8; TRAILER_LEN] {
    let mut t = [0u8; TRAILER_LEN];
    t[..8].copy_from_slice(&nodes.to_le_bytes());
    t[8..16].copy_from_slice(&file_len.to_le_bytes());
    t[16] = u8::from(mtime_ns.is_some());
    t[17..].copy_from_slice(&mtime_ns.unwrap_or(0).to_le_bytes());
    t
}

/// The checksum of everything before it.
pub(crate) fn checksum() -> Sha256 {
    Sha256::new()
}

/// A whole checkpoint in memory (for tests and small swarms).
#[cfg(test)]
pub(crate) fn encode(header: &Header, have: &Binmap, tree: &PartialTree) -> Vec<u8> {
    let mut out = Vec::new();
    let nodes = encode_body(&mut out, header, have, tree).expect("writing to memory");
    out.extend_from_slice(&trailer(nodes, header.file_len, header.mtime_ns));
    let sum = CHECKSUM.digest(&out);
    out.extend_from_slice(sum.as_bytes());
    out
}

/// A checked checkpoint: header, verified chunks, and the saved nodes still
/// to be decoded (lazily, so they are never all held in memory twice).
pub(crate) struct Decoded<'a> {
    pub header: Header,
    pub have: Binmap,
    pub nodes: Nodes<'a>,
}

/// Decodes `bytes`, checking the checksum first.
pub(crate) fn decode(bytes: &[u8]) -> Result<Decoded<'_>, FormatError> {
    if bytes.len() < FIXED_LEN + TRAILER_LEN + CHECKSUM_LEN {
        return Err(FormatError::Truncated);
    }
    if &bytes[..8] != MAGIC {
        return Err(FormatError::Magic);
    }
    let version = u16::from_le_bytes([bytes[8], bytes[9]]);
    if version != VERSION {
        return Err(FormatError::Version(version));
    }
    let (body, sum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    if CHECKSUM.digest(body).as_bytes() != sum {
        return Err(FormatError::Checksum);
    }
    let (body, tail) = body.split_at(body.len() - TRAILER_LEN);
    let mut t = Reader {
        bytes: tail,
        pos: 0,
    };
    let node_count = t.u64()?;
    let file_len = t.u64()?;
    let has_mtime = match t.u8()? {
        0 => false,
        1 => true,
        _ => return Err(FormatError::Corrupt("mtime flag")),
    };
    let mtime_ns = i128::from_le_bytes(t.take(16)?.try_into().map_err(|_| FormatError::Truncated)?);
    let mut r = Reader {
        bytes: body,
        pos: 10,
    };
    let hash_fn = HashFunction::from_code(r.u8()?).ok_or(FormatError::Corrupt("hash function"))?;
    let flags = r.u8()?;
    if flags & !(FLAG_CHUNK_COUNT | FLAG_CONTENT_LEN) != 0 {
        return Err(FormatError::Corrupt("flags"));
    }
    let chunk_size =
        ChunkSize::new(u64::from(r.u32()?)).map_err(|_| FormatError::Corrupt("chunk size"))?;
    let chunk_count = r.u64()?;
    let content_len = r.u64()?;
    let root = Hash::from_slice(r.take(hash_fn.len())?);
    let header = Header {
        hash_fn,
        root,
        chunk_size,
        chunk_count: (flags & FLAG_CHUNK_COUNT != 0).then_some(chunk_count),
        content_len: (flags & FLAG_CONTENT_LEN != 0).then_some(content_len),
        file_len,
        mtime_ns: has_mtime.then_some(mtime_ns),
    };

    let mut have = Binmap::new();
    let runs = r.varint()?;
    let mut next = 0u64;
    for _ in 0..runs {
        let first = next
            .checked_add(r.varint()?)
            .ok_or(FormatError::Corrupt("runs"))?;
        let len = r
            .varint()?
            .checked_add(1)
            .ok_or(FormatError::Corrupt("runs"))?;
        let run = ChunkRange::with_len(first, len).ok_or(FormatError::Corrupt("runs"))?;
        have.set(run);
        next = run
            .last()
            .0
            .checked_add(1)
            .ok_or(FormatError::Corrupt("runs"))?;
    }
    Ok(Decoded {
        header,
        have,
        nodes: Nodes {
            r,
            remaining: node_count,
            hash_len: hash_fn.len(),
            prev: 0,
            error: None,
        },
    })
}

/// The saved nodes, decoded as they are consumed. Decoding stops at the
/// first malformed node; [`Nodes::finish`] tells whether all went well.
pub(crate) struct Nodes<'a> {
    r: Reader<'a>,
    remaining: u64,
    hash_len: usize,
    prev: u64,
    error: Option<FormatError>,
}

impl Nodes<'_> {
    /// After iterating: an error when a node was malformed, fewer nodes
    /// were present than announced, or bytes follow the last one.
    pub(crate) fn finish(self) -> Result<(), FormatError> {
        match self.error {
            Some(e) => Err(e),
            None if self.remaining != 0 => Err(FormatError::Corrupt("node count")),
            None if self.r.pos != self.r.bytes.len() => Err(FormatError::Corrupt("trailing bytes")),
            None => Ok(()),
        }
    }

    fn decode_one(&mut self) -> Result<(Bin, Hash), FormatError> {
        let delta = unzigzag(self.r.varint()?);
        let bin = self.prev.wrapping_add(delta);
        let hash = Hash::from_slice(self.r.take(self.hash_len)?);
        self.prev = bin;
        Ok((Bin(bin), hash))
    }
}

impl Iterator for Nodes<'_> {
    type Item = (Bin, Hash);

    fn next(&mut self) -> Option<(Bin, Hash)> {
        if self.remaining == 0 || self.error.is_some() {
            return None;
        }
        match self.decode_one() {
            Ok(node) => {
                self.remaining -= 1;
                Some(node)
            }
            Err(e) => {
                self.error = Some(e);
                None
            }
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FormatError> {
        let end = self.pos.checked_add(n).ok_or(FormatError::Truncated)?;
        let s = self
            .bytes
            .get(self.pos..end)
            .ok_or(FormatError::Truncated)?;
        self.pos = end;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, FormatError> {
        Ok(self.take(1)?[0])
    }

    fn u32(&mut self) -> Result<u32, FormatError> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, FormatError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    /// An LEB128 varint of at most 10 bytes that fits in 64 bits.
    fn varint(&mut self) -> Result<u64, FormatError> {
        let mut value = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7f);
            if i == 9 && bits > 1 {
                return Err(FormatError::Corrupt("varint"));
            }
            value |= bits << (7 * i);
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(FormatError::Corrupt("varint"))
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A wrapped difference as a small unsigned number when it is small either
/// way: 0, −1, 1, −2, … ↦ 0, 1, 2, 3, …
fn zigzag(delta: u64) -> u64 {
    let d = delta as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(z: u64) -> u64 {
    ((z >> 1) as i64 ^ -((z & 1) as i64)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use ppspp_core::{ChunkIndex, MerkleTree};

    fn sample() -> (Header, Binmap, PartialTree) {
        let f = HashFunction::Sha256;
        let cs = ChunkSize::new(8).unwrap();
        let data: Vec<u8> = (0..100u8).collect();
        let tree = MerkleTree::from_bytes(&data, cs, f).unwrap();
        let mut rx = PartialTree::new(f, tree.root(), cs).unwrap();
        rx.accept_peaks(&tree.peaks()).unwrap();
        let mut have = Binmap::new();
        for c in [12u64, 3, 4, 9] {
            for (b, h) in tree.uncles(ChunkIndex(c), |_| false) {
                rx.accept_uncle(b, h).unwrap();
            }
            let start = c as usize * 8;
            rx.verify_chunk(ChunkIndex(c), &data[start..(start + 8).min(100)])
                .unwrap();
            have.set_chunk(ChunkIndex(c));
        }
        let header = Header {
            hash_fn: f,
            root: tree.root(),
            chunk_size: cs,
            chunk_count: rx.proven_chunk_count(),
            content_len: rx.content_len(),
            file_len: 12345,
            mtime_ns: Some(-1_700_000_000_123_456_789),
        };
        (header, have, rx)
    }

    #[test]
    fn streamed_body_trailer_and_checksum_make_the_whole() {
        let (header, have, tree) = sample();
        let mut out = Vec::new();
        let nodes = encode_body(&mut out, &header, &have, &tree).unwrap();
        out.extend_from_slice(&trailer(nodes, header.file_len, header.mtime_ns));
        let mut sum = checksum();
        sum.update(&out);
        out.extend_from_slice(&sum.finalize());
        assert_eq!(out, encode(&header, &have, &tree));
        assert_eq!(decode(&out).unwrap().header, header);
    }

    #[test]
    fn round_trips() {
        let (header, have, rx) = sample();
        let bytes = encode(&header, &have, &rx);
        let decoded = decode(&bytes).unwrap();
        assert_eq!(decoded.header, header);
        assert_eq!(decoded.have, have);
        let mut nodes = decoded.nodes;
        let got: Vec<_> = nodes.by_ref().collect();
        assert_eq!(got, rx.trusted_frontier().collect::<Vec<_>>());
        assert!(!got.is_empty());
        assert_eq!(nodes.finish(), Ok(()));

        let bare = Header {
            chunk_count: None,
            content_len: None,
            mtime_ns: None,
            ..header
        };
        let bytes = encode(&bare, &Binmap::new(), &rx);
        let decoded = decode(&bytes).unwrap();
        assert_eq!(decoded.header, bare);
        assert_eq!(decoded.nodes.count(), 0);
    }

    #[test]
    fn any_flipped_byte_or_truncation_is_refused() {
        let (header, have, rx) = sample();
        let bytes = encode(&header, &have, &rx);
        for i in 0..bytes.len() {
            let mut bad = bytes.clone();
            bad[i] ^= 0x01;
            let err = decode(&bad).err();
            let expect = match i {
                0..=7 => FormatError::Magic,
                8..=9 => FormatError::Version(u16::from_le_bytes([bad[8], bad[9]])),
                _ => FormatError::Checksum,
            };
            assert_eq!(err, Some(expect), "byte {i}");
        }
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "length {len}");
        }
    }

    #[test]
    fn varints_and_zigzag_round_trip() {
        for v in [0, 1, 127, 128, 300, u64::MAX >> 1, u64::MAX - 1, u64::MAX] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert!(out.len() <= 10);
            let mut r = Reader {
                bytes: &out,
                pos: 0,
            };
            assert_eq!(r.varint(), Ok(v));
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(u64::MAX), 1); // −1
        assert_eq!(zigzag(1), 2);
        let mut r = Reader {
            bytes: &[0xff; 10],
            pos: 0,
        };
        assert_eq!(r.varint(), Err(FormatError::Corrupt("varint")));
        let mut r = Reader {
            bytes: &[0x80; 3],
            pos: 0,
        };
        assert_eq!(r.varint(), Err(FormatError::Truncated));
    }
}
