//! The swarm's Merkle tree: complete when seeding, partial when downloading
//! (RFC 7574 §5).

use std::sync::Arc;

use crate::bin::Bin;
use crate::chunk::ChunkIndex;
use crate::hash::Hash;
use crate::live::{LiveError, LiveInjector, LiveVerifier, SignedMunro};
use crate::merkle::{MerkleTree, PartialTree, VerifyError};

/// A live swarm's integrity (RFC 7574 §6.1.2): the injector's signed
/// munros, or a receiver's trusted ones.
#[derive(Debug)]
pub enum LiveIntegrity {
    /// The source: signs munros as chunks arrive.
    Injector(LiveInjector),
    /// A receiver (and relay): verifies munros and chunks.
    Receiver(LiveVerifier),
}

impl LiveIntegrity {
    /// The newest signed munro held: the live edge as we know it.
    pub fn newest(&self) -> Option<&SignedMunro> {
        match self {
            LiveIntegrity::Injector(i) => i.newest(),
            LiveIntegrity::Receiver(v) => v.newest(),
        }
    }

    /// An INTEGRITY received: an uncle, or a munro hash to come signed. The
    /// injector takes none.
    pub fn offer_hash(&mut self, bin: Bin, hash: Hash) {
        if let LiveIntegrity::Receiver(v) = self {
            v.offer_hash(bin, hash);
        }
    }

    /// The signed munro covering `chunk`, to send before its DATA.
    pub fn munro_for(&self, chunk: ChunkIndex) -> Option<&SignedMunro> {
        match self {
            LiveIntegrity::Injector(i) => i.munro_for(chunk),
            LiveIntegrity::Receiver(v) => v.munro_for(chunk),
        }
    }

    /// The uncles of `chunk` up to its munro.
    pub fn uncles(
        &self,
        chunk: ChunkIndex,
        receiver_holds: impl FnMut(Bin) -> bool,
    ) -> Option<Vec<(Bin, Hash)>> {
        match self {
            LiveIntegrity::Injector(i) => i.uncles(chunk, receiver_holds),
            LiveIntegrity::Receiver(v) => v.uncles(chunk, receiver_holds),
        }
    }
}

/// What a swarm knows of its hash tree.
#[derive(Debug)]
pub enum Integrity {
    /// The whole tree, built from the content (a seeder). Shared, so many
    /// swarms or simulated peers can use one tree.
    Complete(Arc<MerkleTree>),
    /// The receiver's view, verified chunk by chunk (boxed: it is large).
    Partial(Box<PartialTree>),
    /// A live stream's munros (boxed: it is large).
    Live(Box<LiveIntegrity>),
}

impl Integrity {
    /// The number of chunks, once known.
    pub fn chunk_count(&self) -> Option<u64> {
        match self {
            Integrity::Complete(t) => Some(t.chunk_count()),
            Integrity::Partial(t) => t.chunk_count(),
            // A live stream has no end.
            Integrity::Live(_) => None,
        }
    }

    /// The content length, once known.
    pub fn content_len(&self) -> Option<u64> {
        match self {
            Integrity::Complete(t) => Some(t.content_len()),
            Integrity::Partial(t) => t.content_len(),
            Integrity::Live(_) => None,
        }
    }

    /// The peak hashes, once known and trusted (RFC 7574 §5.6.1).
    pub fn peaks(&self) -> Option<Vec<(Bin, Hash)>> {
        match self {
            Integrity::Complete(t) => Some(t.peaks()),
            Integrity::Partial(t) => t.peaks(),
            // The growing tree's peaks are never sent (libswift; the
            // munros stand in for them).
            Integrity::Live(_) => None,
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
            Integrity::Live(l) => l.uncles(chunk, receiver_holds),
        }
    }

    /// The live integrity, for a live swarm.
    pub fn live(&self) -> Option<&LiveIntegrity> {
        match self {
            Integrity::Live(l) => Some(l),
            _ => None,
        }
    }

    /// The live integrity, for a live swarm.
    pub fn live_mut(&mut self) -> Option<&mut LiveIntegrity> {
        match self {
            Integrity::Live(l) => Some(l),
            _ => None,
        }
    }

    /// The partial tree, when downloading.
    pub fn partial_mut(&mut self) -> Option<&mut PartialTree> {
        match self {
            Integrity::Partial(t) => Some(t),
            Integrity::Complete(_) | Integrity::Live(_) => None,
        }
    }

    /// The partial tree, when downloading.
    pub fn partial(&self) -> Option<&PartialTree> {
        match self {
            Integrity::Partial(t) => Some(t),
            Integrity::Complete(_) | Integrity::Live(_) => None,
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
            Integrity::Live(l) => match l.as_mut() {
                LiveIntegrity::Receiver(v) => v.verify_chunk(chunk, data).map_err(|e| match e {
                    LiveError::MissingUncle(_, bin) => VerifyError::MissingHash(bin),
                    LiveError::NoMunro(_) => VerifyError::UnknownSize,
                    _ => VerifyError::BadChunk(chunk),
                }),
                // The injector made every chunk it has.
                LiveIntegrity::Injector(_) => Err(VerifyError::UnknownSize),
            },
        }
    }
}
