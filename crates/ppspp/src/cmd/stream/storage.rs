//! The download's file storage, shared between the node (which writes
//! verified chunks) and the HTTP responses (which read them back).
//!
//! Why not read the output file directly: `FileStorage` gathers consecutive
//! chunk writes and issues them in batches, so a chunk can be verified (in
//! the have-map) a moment before its bytes reach the file. Reading through
//! the same `FileStorage` flushes any gathered write a read overlaps, so a
//! response only ever sees the verified bytes. The core still writes only
//! chunks that verified (RFC 7574 §5.2), so nothing else can be read.

use std::io;
use std::sync::{Arc, Mutex, MutexGuard};

use ppspp_core::storage::{Snapshot, Storage};
use ppspp_core::ChunkIndex;
use ppspp_store::FileStorage;

/// A [`FileStorage`] behind a mutex: the node's end and the gateway's end
/// are clones of one another.
#[derive(Clone, Debug)]
pub struct SharedStorage(Arc<Mutex<FileStorage>>);

impl SharedStorage {
    /// Shares `storage`.
    pub fn new(storage: FileStorage) -> Self {
        SharedStorage(Arc::new(Mutex::new(storage)))
    }

    fn lock(&self) -> MutexGuard<'_, FileStorage> {
        // A panic while holding the lock cannot leave the file in a state
        // worse than a crash, which the checkpoint format already survives.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The content length, once known (from the URL, the checkpoint, or the
    /// verified last chunk).
    pub fn content_len(&self) -> Option<u64> {
        self.lock().content_len()
    }

    /// Reads verified chunk `chunk` into `out` (a chunk size long); returns
    /// its length. The caller checked it is verified.
    pub fn read(&self, chunk: ChunkIndex, out: &mut [u8]) -> io::Result<usize> {
        self.lock().read_chunk(chunk, out)
    }

    /// Waits until the checkpoints asked for are on disk. The gateway's
    /// clone outlives the node, and the runtime's short shutdown would not
    /// wait for the writer thread that the last clone's drop joins.
    pub fn wait_checkpoint(&self) -> io::Result<()> {
        self.lock().wait_checkpoint()
    }
}

impl Storage for SharedStorage {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> io::Result<usize> {
        self.lock().read_chunk(chunk, out)
    }

    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> io::Result<()> {
        self.lock().write_chunk(chunk, data)
    }

    fn set_content_len(&mut self, len: u64) -> io::Result<()> {
        self.lock().set_content_len(len)
    }

    fn checkpoint(&mut self, snapshot: &Snapshot<'_>) -> io::Result<()> {
        self.lock().checkpoint(snapshot)
    }

    fn wait_checkpoint(&mut self) -> io::Result<()> {
        SharedStorage::wait_checkpoint(self)
    }
}
