//! Fewer system calls per chunk: reads fetch whole aligned blocks and keep a
//! few of them (a seeder serves neighbouring chunks in a row), and writes of
//! consecutive chunks are gathered into one positioned write (chunks mostly
//! arrive in runs). At 1 KiB chunks a syscall per chunk costs more than the
//! protocol work around it.

use std::fs::File;
use std::io;

use crate::pio::{read_full_at, write_all_at};

/// Bytes per cached read block.
pub(crate) const BLOCK: u64 = 256 * 1024;
/// Blocks kept.
const BLOCKS: usize = 4;
/// Bytes gathered before a write goes out.
const WRITE_BATCH: usize = 256 * 1024;

/// Recently read blocks, most recent first.
#[derive(Debug, Default)]
pub(crate) struct ReadCache {
    blocks: Vec<(u64, Vec<u8>)>,
}

impl ReadCache {
    /// Copies `out.len()` bytes at `offset` (within the content) into `out`;
    /// returns how many exist there (fewer at the end of the file).
    pub(crate) fn read(&mut self, file: &File, offset: u64, out: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < out.len() {
            let at = offset + done as u64;
            let block = at / BLOCK;
            let data = self.block(file, block)?;
            let within = (at - block * BLOCK) as usize;
            if within >= data.len() {
                break; // Past the end of the file.
            }
            let n = (data.len() - within).min(out.len() - done);
            out[done..done + n].copy_from_slice(&data[within..within + n]);
            done += n;
        }
        Ok(done)
    }

    fn block(&mut self, file: &File, index: u64) -> io::Result<&[u8]> {
        if let Some(pos) = self.blocks.iter().position(|(i, _)| *i == index) {
            let hit = self.blocks.remove(pos);
            self.blocks.insert(0, hit);
        } else {
            let mut buf = if self.blocks.len() >= BLOCKS {
                self.blocks.pop().map(|(_, b)| b).unwrap_or_default()
            } else {
                Vec::new()
            };
            buf.resize(BLOCK as usize, 0);
            let n = read_full_at(file, &mut buf, index * BLOCK)?;
            buf.truncate(n);
            self.blocks.insert(0, (index, buf));
        }
        Ok(&self.blocks[0].1)
    }

    /// Forgets cached bytes in `offset .. offset + len` (they were written).
    pub(crate) fn invalidate(&mut self, offset: u64, len: u64) {
        let (first, last) = (offset / BLOCK, (offset + len.max(1) - 1) / BLOCK);
        self.blocks.retain(|(i, _)| *i < first || *i > last);
    }
}

/// Consecutive writes not yet issued.
#[derive(Debug, Default)]
pub(crate) struct WriteBatch {
    start: u64,
    buf: Vec<u8>,
}

impl WriteBatch {
    /// Adds `data` at `offset`; writes out the batch first when `data` does
    /// not continue it, and after when it is full.
    pub(crate) fn write(&mut self, file: &File, offset: u64, data: &[u8]) -> io::Result<()> {
        if !self.buf.is_empty() && offset != self.start + self.buf.len() as u64 {
            self.flush(file)?;
        }
        if self.buf.is_empty() {
            self.start = offset;
        }
        self.buf.extend_from_slice(data);
        if self.buf.len() >= WRITE_BATCH {
            self.flush(file)?;
        }
        Ok(())
    }

    /// Whether pending bytes overlap `offset .. offset + len`.
    pub(crate) fn overlaps(&self, offset: u64, len: u64) -> bool {
        !self.buf.is_empty()
            && offset < self.start + self.buf.len() as u64
            && self.start < offset + len
    }

    /// Issues the pending write. (Blocks cached before the write were
    /// invalidated when the bytes were gathered.)
    pub(crate) fn flush(&mut self, file: &File) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let result = write_all_at(file, &self.buf, self.start);
        self.buf.clear();
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_reads_and_batched_writes_match_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let data: Vec<u8> = (0..(3 * BLOCK as usize + 1000))
            .map(|i| (i % 253) as u8)
            .collect();
        std::fs::write(&path, &data).unwrap();
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let mut cache = ReadCache::default();
        // Reads across block boundaries and past the end.
        for (off, len) in [
            (0u64, 10usize),
            (BLOCK - 5, 10),
            (3 * BLOCK + 990, 50),
            (2 * BLOCK + 7, 1024),
        ] {
            let mut out = vec![0u8; len];
            let n = cache.read(&file, off, &mut out).unwrap();
            let end = (off as usize + len).min(data.len());
            assert_eq!(&out[..n], &data[off as usize..end]);
        }
        // Batched writes land where they belong, in and out of order.
        let mut batch = WriteBatch::default();
        batch.write(&file, 100, b"abc").unwrap();
        batch.write(&file, 103, b"def").unwrap();
        assert!(batch.overlaps(104, 1));
        assert!(!batch.overlaps(106, 10));
        batch.write(&file, 50, b"xy").unwrap();
        batch.flush(&file).unwrap();
        cache.invalidate(50, 60);
        let mut out = [0u8; 6];
        cache.read(&file, 100, &mut out).unwrap();
        assert_eq!(&out, b"abcdef");
        cache.read(&file, 50, &mut out[..2]).unwrap();
        assert_eq!(&out[..2], b"xy");
    }
}
