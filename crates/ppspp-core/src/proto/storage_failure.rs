//! A failure of a swarm's content storage, as the endpoint reports it in
//! [`Event::StorageError`](super::Event::StorageError): what it was doing
//! and the I/O error's kind and text. Events are `Clone` and `Eq` so that
//! drivers and tests can keep and compare them; `io::Error` is neither, so
//! its kind and message are kept instead of the error itself.

use std::fmt;
use std::io;

use super::CheckpointError;
use crate::chunk::ChunkIndex;

/// What the endpoint asked of the storage when it failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StorageOp {
    /// Reading a chunk to send it.
    ReadChunk(ChunkIndex),
    /// Writing a chunk that verified.
    WriteChunk(ChunkIndex),
    /// Telling it the content length, learned from the last chunk.
    SetContentLength,
    /// Writing a checkpoint, or waiting for one to be durable.
    Checkpoint,
}

impl fmt::Display for StorageOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StorageOp::ReadChunk(c) => write!(f, "reading chunk {}", c.0),
            StorageOp::WriteChunk(c) => write!(f, "writing chunk {}", c.0),
            StorageOp::SetContentLength => f.write_str("setting the content length"),
            StorageOp::Checkpoint => f.write_str("writing a checkpoint"),
        }
    }
}

/// A storage operation that failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{op}: {message}")]
pub struct StorageFailure {
    /// What was asked.
    pub op: StorageOp,
    /// The I/O error's kind.
    pub kind: io::ErrorKind,
    /// The I/O error's text.
    pub message: String,
}

impl StorageFailure {
    /// `op` failed with `error`.
    pub fn new(op: StorageOp, error: &io::Error) -> StorageFailure {
        StorageFailure {
            op,
            kind: error.kind(),
            message: error.to_string(),
        }
    }
}

impl From<&CheckpointError> for StorageFailure {
    fn from(e: &CheckpointError) -> StorageFailure {
        StorageFailure::new(StorageOp::Checkpoint, &e.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_says_what_was_done_and_keeps_the_kind() {
        let e = io::Error::new(io::ErrorKind::StorageFull, "disk full");
        let f = StorageFailure::new(StorageOp::WriteChunk(ChunkIndex(7)), &e);
        assert_eq!(f.to_string(), "writing chunk 7: disk full");
        assert_eq!(f.kind, io::ErrorKind::StorageFull);
        let c = StorageFailure::from(&CheckpointError(e));
        assert_eq!(c.op, StorageOp::Checkpoint);
        assert_eq!(c.to_string(), "writing a checkpoint: disk full");
    }
}
