//! Content storage behind a trait.
//!
//! The core only ever writes chunks that have verified against the Merkle
//! tree (RFC 7574 §5.2), and reads chunks it has verified to serve them.
//! Implementations: an in-memory store for tests ([`MemoryStorage`]); a
//! ring of the newest chunks of a live stream ([`LiveRing`]); the
//! file-backed store with crash-safe checkpoints lives in the `ppspp-store`
//! crate; the simulator derives bytes from the chunk index.

use std::fmt;
use std::io;

use crate::binmap::Binmap;
use crate::chunk::ChunkIndex;
use crate::merkle::PartialTree;

mod live_ring;
mod memory;
pub use live_ring::LiveRing;
pub use memory::MemoryStorage;

/// What a checkpoint records: enough to resume without re-downloading or
/// re-hashing what was verified.
pub struct Snapshot<'a> {
    /// The chunks verified and stored.
    pub have: &'a Binmap,
    /// The receiver's hash tree, with every hash it trusts.
    pub tree: &'a PartialTree,
    /// This checkpoint must be written (download complete, shutting down);
    /// a routine one may be skipped while an earlier one is still being
    /// written.
    pub urgent: bool,
}

/// Where a swarm's content lives.
pub trait Storage: fmt::Debug + Send {
    /// Reads verified chunk `chunk` into `out` (at least a chunk size long);
    /// returns its length (the last chunk may be short).
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> io::Result<usize>;

    /// Stores chunk `chunk`, which has verified.
    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> io::Result<()>;

    /// The content length became known (from the verified last chunk).
    fn set_content_len(&mut self, _len: u64) -> io::Result<()> {
        Ok(())
    }

    /// Persists progress so a killed process resumes here. Called from time
    /// to time and when the swarm stops; the default keeps nothing.
    fn checkpoint(&mut self, _snapshot: &Snapshot<'_>) -> io::Result<()> {
        Ok(())
    }

    /// Returns once every checkpoint asked for is durable, with the error
    /// of one that failed and was not returned yet. A storage may write
    /// checkpoints in the background, where a failure of the last one
    /// would otherwise go unseen; drivers call this when a swarm stops.
    /// The default has nothing pending.
    fn wait_checkpoint(&mut self) -> io::Result<()> {
        Ok(())
    }
}
