//! The swarm's Merkle tree: complete when seeding, partial when downloading
//! (RFC 7574 §5).

use std::sync::Arc;

use crate::bin::Bin;
use crate::chunk::ChunkIndex;
use crate::hash::Hash;
use crate::merkle::{MerkleTree, PartialTree, VerifyError};

/// What a swarm knows of its hash tree.
#[derive(Debug)]
pub enum Integrity {
    /// The whole tree, built from the content (a seeder). Shared, so many
    /// swarms or simulated peers can use one tree.
    Complete(Arc<MerkleTree>),
    /// The receiver's view, verified chunk by chunk (boxed: it is large).
    Partial(Box<PartialTree>),
}

impl Integrity {
    /// The number of chunks, once known.
    pub fn chunk_count(&self) -> Option<u64> {
        match self {
            Integrity::Complete(t) => Some(t.chunk_count()),
            Integrity::Partial(t) => t.chunk_count(),
        }
    }

    /// The content length, once known.
    pub fn content_len(&self) -> Option<u64> {
        match self {
            Integrity::Complete(t) => Some(t.content_len()),
            Integrity::Partial(t) => t.content_len(),
        }
    }

    /// The peak hashes, once known and trusted (RFC 7574 §5.6.1).
    pub fn peaks(&self) -> Option<Vec<(Bin, Hash)>> {
        match self {
            Integrity::Complete(t) => Some(t.peaks()),
            Integrity::Partial(t) => t.peaks(),
        }
    }

    /// The uncle hashes a receiver needs for `chunk`, in RFC 7574 §5.4 order,
    /// skipping those under bins it holds; `None` when we cannot vouch for
    /// the chunk.
    pub fn uncles(
        &self,
        chunk: ChunkIndex,
        receiver_holds: impl FnMut(Bin) -> bool,
    ) -> Option<Vec<(Bin, Hash)>> {
        match self {
            Integrity::Complete(t) => {
                (chunk.0 < t.chunk_count()).then(|| t.uncles(chunk, receiver_holds))
            }
            Integrity::Partial(t) => t.uncles(chunk, receiver_holds),
        }
    }

    /// The partial tree, when downloading.
    pub fn partial_mut(&mut self) -> Option<&mut PartialTree> {
        match self {
            Integrity::Partial(t) => Some(t),
            Integrity::Complete(_) => None,
        }
    }

    /// The partial tree, when downloading.
    pub fn partial(&self) -> Option<&PartialTree> {
        match self {
            Integrity::Partial(t) => Some(t),
            Integrity::Complete(_) => None,
        }
    }

    /// Verify a received chunk. A complete tree has every chunk already, so
    /// a chunk only "verifies" if it is byte-identical in hash to the leaf.
    pub fn verify(&mut self, chunk: ChunkIndex, data: &[u8]) -> Result<(), VerifyError> {
        match self {
            Integrity::Partial(t) => t.verify_chunk(chunk, data),
            Integrity::Complete(t) => {
                let leaf = Bin::leaf(chunk).and_then(|b| t.node(b));
                match leaf {
                    Some(h) if h == t.hash_function().digest(data) => Ok(()),
                    Some(_) => Err(VerifyError::BadChunk(chunk)),
                    None => Err(VerifyError::ChunkOutOfRange {
                        chunk,
                        chunk_count: t.chunk_count(),
                    }),
                }
            }
        }
    }
}
