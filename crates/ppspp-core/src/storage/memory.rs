//! An in-memory store, for tests and small swarms.

use std::io;

use super::Storage;
use crate::chunk::{ChunkIndex, ChunkSize};

/// Content held in a `Vec<u8>`; chunks not yet written read as zeros.
#[derive(Clone, Debug)]
pub struct MemoryStorage {
    chunk_size: ChunkSize,
    bytes: Vec<u8>,
}

impl MemoryStorage {
    /// A store seeded with the whole content.
    pub fn with_content(chunk_size: ChunkSize, content: Vec<u8>) -> Self {
        MemoryStorage {
            chunk_size,
            bytes: content,
        }
    }

    /// An empty store that grows as chunks are written.
    pub fn empty(chunk_size: ChunkSize) -> Self {
        MemoryStorage {
            chunk_size,
            bytes: Vec::new(),
        }
    }

    /// The bytes stored so far.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn offset(&self, chunk: ChunkIndex) -> io::Result<usize> {
        chunk
            .0
            .checked_mul(self.chunk_size.bytes_u64())
            .and_then(|o| usize::try_from(o).ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "chunk offset overflows"))
    }
}

impl Storage for MemoryStorage {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> io::Result<usize> {
        let start = self.offset(chunk)?;
        if start >= self.bytes.len() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "chunk past the end",
            ));
        }
        let end = (start + self.chunk_size.bytes_usize()).min(self.bytes.len());
        let n = end - start;
        out.get_mut(..n)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "buffer too small"))?
            .copy_from_slice(&self.bytes[start..end]);
        Ok(n)
    }

    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> io::Result<()> {
        let start = self.offset(chunk)?;
        let end = start + data.len();
        if self.bytes.len() < end {
            self.bytes.resize(end, 0);
        }
        self.bytes[start..end].copy_from_slice(data);
        Ok(())
    }

    fn set_content_len(&mut self, len: u64) -> io::Result<()> {
        let len = usize::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "content too large"))?;
        self.bytes.resize(len, 0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_was_written_and_the_short_last_chunk() {
        let cs = ChunkSize::new(4).unwrap();
        let mut s = MemoryStorage::empty(cs);
        s.write_chunk(ChunkIndex(1), b"efgh").unwrap();
        s.write_chunk(ChunkIndex(2), b"ij").unwrap();
        s.write_chunk(ChunkIndex(0), b"abcd").unwrap();
        assert_eq!(s.bytes(), b"abcdefghij");
        let mut buf = [0u8; 4];
        assert_eq!(s.read_chunk(ChunkIndex(2), &mut buf).unwrap(), 2);
        assert_eq!(&buf[..2], b"ij");
        assert!(s.read_chunk(ChunkIndex(3), &mut buf).is_err());
        assert!(s.read_chunk(ChunkIndex(u64::MAX), &mut buf).is_err());
    }
}
