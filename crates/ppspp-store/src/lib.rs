//! File-backed content storage for ppspp swarms, with crash-safe resume.
//!
//! [`FileStorage`] implements the core's
//! [`Storage`](ppspp_core::storage::Storage) trait over one content file at
//! `PATH`. A download also keeps a checkpoint at `PATH.ppspp` (see
//! [`format`](crate#checkpoint-format)): the chunks verified and stored, and
//! the receiver's trusted Merkle hashes, so that a restarted process resumes
//! without re-downloading or re-hashing what it already verified.
//!
//! # Crash safety
//! Chunks are written to the content file as they verify. A checkpoint is
//! encoded on the caller's thread and streamed in pieces to a background
//! writer, which writes `PATH.ppspp.tmp`, then flushes the content file to
//! disk, appends the trailer and checksum, flushes, renames over
//! `PATH.ppspp` and flushes the directory. So a checkpoint never claims data
//! that is not on disk, the protocol loop never waits for the disk, a crash
//! loses at most the chunks verified since the last checkpoint (they are
//! fetched again), and a crash while checkpointing leaves the previous
//! checkpoint in place. While one checkpoint is being written a routine one
//! is skipped; an urgent one (download complete, shutting down) waits, and
//! dropping the storage waits for the last.
//!
//! [`probe_download`] tells, without changing anything, whether a path
//! holds a download of a given swarm (a content file with its checkpoint)
//! or a file that is not one, so that a caller can refuse to overwrite it.
//!
//! # Disagreement
//! On [`FileStorage::open_download`] a checkpoint is ignored (fresh start,
//! content file kept, a warning in [`Resume::warning`]) when it is damaged,
//! of another version or of another swarm. When the content file's length
//! or modification time differs from what the checkpoint recorded, someone
//! (or a crash after later writes) touched it: every chunk the checkpoint
//! claims is hashed again against the restored tree's trusted leaf hashes,
//! and those that fail are dropped ([`Resume::rehashed`],
//! [`Resume::dropped`]); the outcome is checkpointed at once. Otherwise the
//! checkpoint is trusted as it is, without reading the content. A crash
//! between checkpoints also leaves the file newer than its checkpoint, so
//! resuming after one costs a re-hash of what the checkpoint claims.
//!
//! # Checkpoint format
//! Version 2; integers little-endian unless marked as varints (LEB128).
//! What is only known at the end sits in a fixed trailer, so the body is
//! written in one streamed pass:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `PPSPPCKP` |
//! | 2 | version (2) |
//! | 1 | hash function (RFC 7574 §7.6 option-4 code) |
//! | 1 | flags: bit 0 chunk count known, bit 1 content length known |
//! | 4 | chunk size in bytes |
//! | 8 | chunk count (0 when unknown) |
//! | 8 | content length (0 when unknown) |
//! | hash length | the root hash (swarm id) |
//! | varint + runs | verified chunks: run count, then per run the gap from the end of the previous run and the length − 1 (varints) |
//! | nodes | trusted Merkle nodes (the frontier, see [`PartialTree::trusted_frontier`](ppspp_core::PartialTree::trusted_frontier)): per node the zigzag difference from the previous bin (varint) and the hash, up to the trailer |
//! | 8 | trailer: node count |
//! | 8 | the content file's length when its data was flushed |
//! | 1 | 1 when a modification time follows, else 0 |
//! | 16 | its modification time, signed nanoseconds since the Unix epoch |
//! | 32 | SHA-256 of everything before |
//!
//! Size: about `hash_len + 1` bytes per saved node, i.e. about
//! `N·(hash_len + 1)` for a complete download of N chunks, plus a few bytes
//! per run of verified chunks; it is never held in memory whole.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod buffer;
mod error;
mod file;
mod format;
mod open;
mod pio;
mod probe;
mod writer;

pub use error::StoreError;
pub use file::{checkpoint_path, checkpoint_tmp_path, FileStorage};
pub use probe::{probe_download, Existing};

use ppspp_core::{Binmap, ChunkSize, Hash, HashFunction, PartialTree};

/// What identifies a swarm's content and how it is cut, as known before the
/// download starts (from the swarm id and its metadata).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwarmMeta {
    /// The Merkle root hash: the swarm id (RFC 7574 §5.1).
    pub root: Hash,
    /// The Merkle hash function (RFC 7574 §7.6).
    pub hash_fn: HashFunction,
    /// The chunk size.
    pub chunk_size: ChunkSize,
    /// The content length in bytes, when the metadata carries it.
    pub content_len: Option<u64>,
    /// The number of chunks, when known without the length.
    pub chunk_count: Option<u64>,
}

impl SwarmMeta {
    /// A swarm known by its root only: the size comes from peak hashes.
    pub fn new(hash_fn: HashFunction, root: Hash, chunk_size: ChunkSize) -> Self {
        SwarmMeta {
            root,
            hash_fn,
            chunk_size,
            content_len: None,
            chunk_count: None,
        }
    }

    /// The same swarm with a known content length.
    pub fn with_content_len(mut self, len: u64) -> Self {
        self.content_len = Some(len);
        self
    }

    /// The same swarm with a known chunk count.
    pub fn with_chunk_count(mut self, chunk_count: u64) -> Self {
        self.chunk_count = Some(chunk_count);
        self
    }

    /// The chunk count implied by the metadata, if any; an error when the
    /// content length and the chunk count disagree.
    pub fn known_chunk_count(&self) -> Result<Option<u64>, StoreError> {
        let from_len = self.content_len.map(|l| self.chunk_size.chunks_in(l));
        match (from_len, self.chunk_count) {
            (Some(a), Some(b)) if a != b => Err(StoreError::SizeMismatch {
                content_len: self.content_len.unwrap_or(0),
                chunk_count: b,
            }),
            (a, b) => Ok(a.or(b)),
        }
    }
}

/// What a download resumes from: the chunks verified and stored, and the
/// receiver's tree with every hash it trusts.
#[derive(Debug)]
pub struct Resume {
    /// The chunks verified and present in the content file.
    pub have: Binmap,
    /// The restored partial Merkle tree (or a fresh one).
    pub tree: PartialTree,
    /// How many chunks were hashed again because the content file changed
    /// since the checkpoint (0 when the checkpoint was trusted as it is).
    pub rehashed: u64,
    /// How many of those failed and were dropped from [`Resume::have`].
    pub dropped: u64,
    /// Why the checkpoint was ignored, when it was (damaged, another
    /// version, another swarm).
    pub warning: Option<String>,
}
