//! A live stream's chunks in a ring of a fixed number of slots: the
//! discard window (RFC 7574 §6.1.3, option 7) in memory. A chunk goes to
//! slot `index mod slots`, overwriting the chunk a window older; each slot
//! remembers which chunk it holds, so a chunk that left the window reads
//! as an error, never as the chunk that took its slot (libswift serves the
//! wrapped-around bytes in that case; we must not).

use std::io;

use super::Storage;
use crate::chunk::{ChunkIndex, ChunkSize};

/// Chunks of a live stream, the newest `slots` of them.
#[derive(Clone, Debug)]
pub struct LiveRing {
    chunk_size: usize,
    /// `slots · chunk_size` bytes.
    bytes: Vec<u8>,
    /// Per slot: the chunk it holds and its length.
    held: Vec<Option<(ChunkIndex, usize)>>,
}

impl LiveRing {
    /// A ring of `slots` chunks (at least one) of `chunk_size` bytes,
    /// allocated now: its memory does not grow with the stream.
    pub fn new(chunk_size: ChunkSize, slots: u64) -> Self {
        let slots = usize::try_from(slots.max(1)).unwrap_or(usize::MAX);
        let cs = chunk_size.bytes_usize();
        LiveRing {
            chunk_size: cs,
            bytes: vec![0; slots.saturating_mul(cs)],
            held: vec![None; slots],
        }
    }

    /// How many chunks the ring holds at most.
    pub fn slots(&self) -> u64 {
        self.held.len() as u64
    }

    fn slot(&self, chunk: ChunkIndex) -> usize {
        (chunk.0 % self.held.len() as u64) as usize
    }

    /// Whether `chunk` is in the ring.
    pub fn holds(&self, chunk: ChunkIndex) -> bool {
        self.held[self.slot(chunk)].is_some_and(|(c, _)| c == chunk)
    }
}

impl Storage for LiveRing {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> io::Result<usize> {
        let slot = self.slot(chunk);
        match self.held[slot] {
            Some((c, len)) if c == chunk => {
                let start = slot * self.chunk_size;
                let n = len.min(out.len());
                out[..n].copy_from_slice(&self.bytes[start..start + n]);
                Ok(n)
            }
            _ => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("chunk {} is outside the live discard window", chunk.0),
            )),
        }
    }

    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> io::Result<()> {
        if data.len() > self.chunk_size {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("chunk {} is longer than the chunk size", chunk.0),
            ));
        }
        let slot = self.slot(chunk);
        // An older chunk than the one in its slot left the window already.
        if self.held[slot].is_some_and(|(c, _)| c > chunk) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("chunk {} is older than the live discard window", chunk.0),
            ));
        }
        let start = slot * self.chunk_size;
        self.bytes[start..start + data.len()].copy_from_slice(data);
        self.held[slot] = Some((chunk, data.len()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(ring: &mut LiveRing, c: u64) -> io::Result<Vec<u8>> {
        let mut buf = [0u8; 8];
        let n = ring.read_chunk(ChunkIndex(c), &mut buf)?;
        Ok(buf[..n].to_vec())
    }

    #[test]
    fn a_chunk_that_left_the_window_is_never_served_as_another() {
        let mut ring = LiveRing::new(ChunkSize::new(8).unwrap(), 3);
        for c in 0..5u64 {
            ring.write_chunk(ChunkIndex(c), format!("c{c}").as_bytes())
                .unwrap();
        }
        assert_eq!(read(&mut ring, 4).unwrap(), b"c4");
        assert_eq!(read(&mut ring, 2).unwrap(), b"c2");
        // Chunk 1's slot holds chunk 4 now.
        assert_eq!(
            read(&mut ring, 1).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert!(!ring.holds(ChunkIndex(1)));
        assert!(ring.holds(ChunkIndex(4)));
        // Writing it again would overwrite a newer chunk: refused.
        assert!(ring.write_chunk(ChunkIndex(1), b"old").is_err());
        assert_eq!(read(&mut ring, 4).unwrap(), b"c4");
        // Never written: not found.
        assert!(read(&mut ring, 7).is_err());
        assert!(
            ring.write_chunk(ChunkIndex(9), &[0; 9]).is_err(),
            "too long"
        );
        assert_eq!(ring.slots(), 3);
    }

    #[test]
    fn a_short_chunk_reads_back_at_its_length() {
        let mut ring = LiveRing::new(ChunkSize::new(8).unwrap(), 2);
        ring.write_chunk(ChunkIndex(0), b"12345678").unwrap();
        ring.write_chunk(ChunkIndex(2), b"ab").unwrap();
        assert_eq!(read(&mut ring, 2).unwrap(), b"ab");
    }
}
