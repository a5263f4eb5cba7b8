//! Streaming builders: read content once, in large blocks (a power-of-two
//! number of chunks, ~4 MiB), so memory stays bounded whatever the content
//! size.
//!
//! Each block is an aligned subtree, hashed (leaves and interior, see
//! [`hash_chunks_into`]) straight into its contiguous slice of the flat node
//! array. A [`PeakStack`] merges block roots in order; the last, partial
//! block contributes its own peaks; finally the peaks are climbed to the
//! root with zero padding ([`root_from_peaks`]).
//!
//! Sequentially ([`Parallelism::Sequential`], the default) the calling
//! thread reads and hashes in turn. In parallel, a reader thread fills
//! blocks into a bounded channel, so reading overlaps hashing, and each
//! block is hashed on every core.

use std::io::{self, Read};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread;

use super::build::{hash_at, hash_chunks_into, Parallelism, PeakStack};
use super::peaks::{peak_bins, MAX_CHUNKS};
use super::{flat_bytes, root_from_peaks, slot_mut, MerkleError, MerkleTree};
use crate::bin::Bin;
use crate::chunk::ChunkSize;
use crate::hash::{Hash, HashFunction};

/// The largest block, in chunks: bounds the per-block node buffer
/// (`2^17` hashes) when chunks are tiny.
const MAX_BLOCK_CHUNKS: usize = 1 << 16;

/// Tuning of the streaming builders ([`MerkleTree::from_reader_with`],
/// [`root_from_reader_with`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildOptions {
    /// Target bytes per read block; rounded down to a power-of-two number of
    /// chunks (at least one chunk, at most 2^16 chunks). Default 4 MiB.
    pub block_bytes: usize,
    /// Blocks the reader thread may read ahead of the hashers, when
    /// building in parallel. Default 2.
    pub queue_depth: usize,
    /// Whether to use threads. Default [`Parallelism::Sequential`]: the
    /// core spawns none unless its caller asks.
    pub parallelism: Parallelism,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            block_bytes: 4 << 20,
            queue_depth: 2,
            parallelism: Parallelism::Sequential,
        }
    }
}

impl BuildOptions {
    /// The defaults, hashing on every core with a reader thread ahead:
    /// what a command that hashes a whole file wants.
    pub fn parallel() -> Self {
        BuildOptions {
            parallelism: Parallelism::Parallel,
            ..BuildOptions::default()
        }
    }
}

impl BuildOptions {
    /// Chunks per block: a power of two, so that every block but the last
    /// is an aligned complete subtree.
    fn block_chunks(&self, chunk_size: ChunkSize) -> usize {
        let want = (self.block_bytes / chunk_size.bytes_usize()).clamp(1, MAX_BLOCK_CHUNKS);
        1 << (usize::BITS - 1 - want.leading_zeros())
    }
}

/// What `ppspp hash` reports: the root (swarm id) and the content's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RootInfo {
    /// The Merkle root hash (RFC 7574 §5.1).
    pub root: Hash,
    /// The number of chunks.
    pub chunk_count: u64,
    /// The content length in bytes.
    pub content_len: u64,
}

/// The root of the content read from `reader`, without keeping the tree:
/// O(log N) memory besides a few blocks in flight. Default
/// [`BuildOptions`].
pub fn root_from_reader<R: Read + Send>(
    reader: R,
    chunk_size: ChunkSize,
    hash_fn: HashFunction,
) -> Result<RootInfo, MerkleError> {
    root_from_reader_with(reader, chunk_size, hash_fn, &BuildOptions::default())
}

/// [`root_from_reader`] with explicit [`BuildOptions`].
pub fn root_from_reader_with<R: Read + Send>(
    reader: R,
    chunk_size: ChunkSize,
    hash_fn: HashFunction,
    options: &BuildOptions,
) -> Result<RootInfo, MerkleError> {
    let cs = chunk_size.bytes_usize();
    let hl = hash_fn.len();
    let mut scratch = Vec::new();
    let mut stack = PeakStack::new(hash_fn);
    let mut chunks = 0u64;
    let mut content_len = 0u64;
    let block_bytes = options.block_chunks(chunk_size) * cs;
    let par = options.parallelism;
    for_each_block(reader, block_bytes, options, |block| {
        let m = block.len().div_ceil(cs);
        let first = chunks;
        chunks = checked_total(chunks, m)?;
        let len = (2 * m - 1) * hl;
        scratch.resize(len, 0);
        let nodes = &mut scratch[..len];
        hash_chunks_into(hash_fn, cs, block, nodes, par);
        for local in peak_bins(m as u64) {
            let hash = hash_at(nodes, hash_fn, local);
            stack.push(shift(local, first), hash, |_, _| {});
        }
        content_len += block.len() as u64;
        Ok(())
    })?;
    if chunks == 0 {
        return Err(MerkleError::EmptyContent);
    }
    let root =
        root_from_peaks(hash_fn, &stack.into_peaks()).ok_or(MerkleError::TooLarge { chunks })?;
    Ok(RootInfo {
        root,
        chunk_count: chunks,
        content_len,
    })
}

impl MerkleTree {
    /// The tree of the content read from `reader` to its end, read and
    /// hashed on the calling thread. Default [`BuildOptions`];
    /// [`BuildOptions::parallel`] for every core.
    ///
    /// Fails with [`MerkleError::EmptyContent`] for zero bytes and
    /// [`MerkleError::Io`] when reading fails.
    pub fn from_reader<R: Read + Send>(
        reader: R,
        chunk_size: ChunkSize,
        hash_fn: HashFunction,
    ) -> Result<MerkleTree, MerkleError> {
        Self::from_reader_with(reader, chunk_size, hash_fn, &BuildOptions::default())
    }

    /// [`MerkleTree::from_reader`] with explicit [`BuildOptions`].
    pub fn from_reader_with<R: Read + Send>(
        reader: R,
        chunk_size: ChunkSize,
        hash_fn: HashFunction,
        options: &BuildOptions,
    ) -> Result<MerkleTree, MerkleError> {
        let cs = chunk_size.bytes_usize();
        let hl = hash_fn.len();
        let mut filled: Vec<u8> = Vec::new();
        let mut stack = PeakStack::new(hash_fn);
        let mut chunks = 0u64;
        let mut content_len = 0u64;
        let block_bytes = options.block_chunks(chunk_size) * cs;
        let par = options.parallelism;
        for_each_block(reader, block_bytes, options, |block| {
            let m = block.len().div_ceil(cs);
            let first = chunks;
            chunks = checked_total(chunks, m)?;
            // Block j of K chunks owns bins 2jK .. 2jK + 2K − 2, contiguous;
            // bin 2jK + 2K − 1 after it belongs to a higher node that the
            // merge fills once later blocks arrive.
            let start = filled.len();
            let len = (2 * m - 1) * hl;
            filled
                .try_reserve(len + hl)
                .map_err(|_| MerkleError::TooLarge { chunks })?;
            filled.resize(start + len, 0);
            hash_chunks_into(hash_fn, cs, block, &mut filled[start..], par);
            for local in peak_bins(m as u64) {
                let hash = hash_at(&filled[start..], hash_fn, local);
                // Parents merged here are filled nodes left of this block,
                // in slots that already exist.
                stack.push(shift(local, first), hash, |bin, h| {
                    if let Some(s) = slot_mut(&mut filled, hl, bin.0) {
                        s.copy_from_slice(h.as_bytes());
                    }
                });
            }
            filled.resize(start + len + hl, 0);
            content_len += block.len() as u64;
            Ok(())
        })?;
        if chunks == 0 {
            return Err(MerkleError::EmptyContent);
        }
        // Drop the slot after the last block: bins stop at 2N − 2.
        filled.truncate(flat_bytes(chunks, hl).ok_or(MerkleError::TooLarge { chunks })?);
        Self::assemble(hash_fn, chunk_size, content_len, chunks, filled)
    }
}

/// `done + m` chunks, or `TooLarge` past 2^63 chunks (no 64-bit bins).
fn checked_total(done: u64, m: usize) -> Result<u64, MerkleError> {
    let total = done.saturating_add(m as u64);
    if total > MAX_CHUNKS {
        return Err(MerkleError::TooLarge { chunks: total });
    }
    Ok(total)
}

/// Moves a bin of an aligned subtree numbered locally (its first chunk at
/// 0) to the subtree starting at chunk `first`: every bin shifts by
/// `2·first`. The caller checked that `first` plus the subtree's chunks
/// stays within 2^63.
fn shift(local: Bin, first: u64) -> Bin {
    Bin(local.0 + 2 * first)
}

/// Reads `reader` in blocks of `block_bytes` and hands every block, in
/// order, to `consume`; on a helper thread that reads ahead when `options`
/// ask for parallelism. Every block but the last is full.
fn for_each_block<R: Read + Send>(
    mut reader: R,
    block_bytes: usize,
    options: &BuildOptions,
    mut consume: impl FnMut(&[u8]) -> Result<(), MerkleError>,
) -> Result<(), MerkleError> {
    if options.parallelism == Parallelism::Sequential {
        let mut buf = vec![0u8; block_bytes];
        loop {
            let n = fill(&mut reader, &mut buf)?;
            if n > 0 {
                consume(&buf[..n])?;
            }
            if n < block_bytes {
                return Ok(());
            }
        }
    }
    let (tx, rx) = mpsc::sync_channel(options.queue_depth.max(1));
    let (recycle_tx, recycle_rx) = mpsc::channel();
    thread::scope(|s| {
        s.spawn(move || read_blocks(reader, block_bytes, tx, recycle_rx));
        // Owning the receiver in this closure drops it on an early return,
        // which unblocks the reader before the scope joins it.
        let rx: Receiver<io::Result<Vec<u8>>> = rx;
        for msg in rx.iter() {
            let block = msg?;
            consume(&block)?;
            // Reuse the buffer; the reader may already be gone, that's fine.
            let _ = recycle_tx.send(block);
        }
        Ok(())
    })
}

/// The reader thread: fills blocks (recycled when possible), stops after a
/// short block, at end of input, on error, or when the consumer has gone.
fn read_blocks<R: Read>(
    mut reader: R,
    block_bytes: usize,
    tx: SyncSender<io::Result<Vec<u8>>>,
    recycle: Receiver<Vec<u8>>,
) {
    loop {
        let mut buf = recycle.try_recv().unwrap_or_default();
        buf.resize(block_bytes, 0);
        match fill(&mut reader, &mut buf) {
            Ok(n) => {
                buf.truncate(n);
                if n > 0 && tx.send(Ok(buf)).is_err() {
                    return;
                }
                if n < block_bytes {
                    return;
                }
            }
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
}

/// Reads until `buf` is full or the input ends, however short the reads;
/// returns the bytes read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) if n <= buf.len() - filled => filled += n,
            Ok(_) => {
                return Err(io::Error::other(
                    "reader returned more bytes than asked for",
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(test)]
mod tests {
    use super::*;

    const F: HashFunction = HashFunction::Sha1;

    /// Returns 1–7 bytes per call and an `Interrupted` error now and then.
    struct Dribble<'a> {
        data: &'a [u8],
        calls: usize,
    }

    impl Read for Dribble<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.calls += 1;
            if self.calls.is_multiple_of(5) {
                return Err(io::ErrorKind::Interrupted.into());
            }
            let n = (self.calls % 7 + 1).min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// Fails after `ok` bytes.
    struct Broken {
        ok: usize,
    }

    impl Read for Broken {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.ok == 0 {
                return Err(io::Error::other("disk on fire"));
            }
            let n = self.ok.min(buf.len());
            buf[..n].fill(1);
            self.ok -= n;
            Ok(n)
        }
    }

    fn check(len: usize, chunk: u64, block_chunks: usize, parallelism: Parallelism) {
        let data: Vec<u8> = (0..len).map(|i| (i * 7 % 253) as u8).collect();
        let cs = ChunkSize::new(chunk).unwrap();
        let opts = BuildOptions {
            block_bytes: block_chunks * chunk as usize,
            queue_depth: 1,
            parallelism,
        };
        let expect = MerkleTree::from_bytes(&data, cs, F).unwrap();
        let reader = Dribble {
            data: &data,
            calls: 0,
        };
        let got = MerkleTree::from_reader_with(reader, cs, F, &opts).unwrap();
        assert_eq!(
            got.root(),
            expect.root(),
            "len {len} chunk {chunk} block {block_chunks}"
        );
        assert_eq!(got.filled, expect.filled);
        assert_eq!(got.spine, expect.spine);
        assert_eq!(got.content_len(), len as u64);
        let reader = Dribble {
            data: &data,
            calls: 0,
        };
        let info = root_from_reader_with(reader, cs, F, &opts).unwrap();
        assert_eq!(info.root, expect.root());
        assert_eq!(info.chunk_count, expect.chunk_count());
    }

    #[test]
    fn edge_sizes_with_short_reads_and_small_blocks() {
        for par in [Parallelism::Sequential, Parallelism::Parallel] {
            for block in [1, 2, 4, 8] {
                check(1, 16, block, par); // one chunk of one byte
                check(16, 16, block, par); // one full chunk
                check(16 * 8, 16, block, par); // 2^3 chunks
                check(16 * 8 + 1, 16, block, par); // 2^3 + 1 chunks, last of 1 byte
                check(16 * 9 - 1, 16, block, par);
                check(16 * 32, 16, block, par); // exactly a multiple of the block
            }
        }
    }

    #[test]
    fn block_sizes_are_powers_of_two() {
        let opts = BuildOptions::default();
        assert_eq!(opts.block_chunks(ChunkSize::DEFAULT), 4096);
        assert_eq!(opts.block_chunks(ChunkSize::new(1000).unwrap()), 4096);
        assert_eq!(
            opts.block_chunks(ChunkSize::new(1).unwrap()),
            MAX_BLOCK_CHUNKS
        );
        let tiny = BuildOptions {
            block_bytes: 0,
            queue_depth: 0,
            parallelism: Parallelism::Parallel,
        };
        assert_eq!(tiny.block_chunks(ChunkSize::DEFAULT), 1);
        let data = [5u8; 3000];
        let t = MerkleTree::from_reader_with(&data[..], ChunkSize::DEFAULT, F, &tiny).unwrap();
        let expect = MerkleTree::from_bytes(&data, ChunkSize::DEFAULT, F).unwrap();
        assert_eq!(t.root(), expect.root());
    }

    #[test]
    fn sequential_builds_spawn_no_thread() {
        // A reader that notes the thread it is read on: the calling one.
        struct OnThread<'a> {
            data: &'a [u8],
            seen: Vec<thread::ThreadId>,
        }
        impl Read for OnThread<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.seen.push(thread::current().id());
                self.data.read(buf)
            }
        }
        let data = vec![3u8; 10_000];
        let opts = BuildOptions {
            block_bytes: 1024,
            ..BuildOptions::default()
        };
        let mut r = OnThread {
            data: &data,
            seen: Vec::new(),
        };
        MerkleTree::from_reader_with(&mut r, ChunkSize::new(64).unwrap(), F, &opts).unwrap();
        assert!(r.seen.len() > 1);
        assert!(r.seen.iter().all(|t| *t == thread::current().id()));
    }

    #[test]
    fn read_errors_are_reported() {
        for parallelism in [Parallelism::Sequential, Parallelism::Parallel] {
            let opts = BuildOptions {
                block_bytes: 64,
                queue_depth: 1,
                parallelism,
            };
            for ok in [0, 10, 64, 1000] {
                let cs = ChunkSize::new(16).unwrap();
                let r = MerkleTree::from_reader_with(Broken { ok }, cs, F, &opts);
                assert!(matches!(r, Err(MerkleError::Io(_))), "after {ok} bytes");
                let r = root_from_reader_with(Broken { ok }, cs, F, &opts);
                assert!(matches!(r, Err(MerkleError::Io(_))));
            }
        }
    }
}
