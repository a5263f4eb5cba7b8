//! Errors of the file store.

use std::io;
use std::path::PathBuf;

use ppspp_core::VerifyError;
use thiserror::Error;

/// Why a [`FileStorage`](crate::FileStorage) could not be opened.
///
/// The message names what failed; the cause (the OS error, the metadata
/// error) is the [`source`](std::error::Error::source), not repeated in the
/// message, so that a caller printing the chain (`anyhow`'s `{:#}`) shows
/// each cause once.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A file operation failed.
    #[error("cannot {op} {}", path.display())]
    Io {
        /// What was being done (`open`, `read`, …).
        op: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// The swarm metadata gives a content length and a chunk count that do
    /// not go together.
    #[error("content length {content_len} does not give {chunk_count} chunks")]
    SizeMismatch {
        /// The content length in the metadata.
        content_len: u64,
        /// The chunk count in the metadata.
        chunk_count: u64,
    },
    /// The swarm metadata does not make a tree (wrong root length, size too
    /// large).
    #[error("bad swarm metadata")]
    Tree(#[from] VerifyError),
}

impl StoreError {
    /// An [`StoreError::Io`] for `op` on `path`.
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> Self {
        let path = path.into();
        move |source| StoreError::Io { op, path, source }
    }
}
