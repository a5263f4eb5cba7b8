//! Errors of building (sender side) and verifying (receiver side) Merkle
//! hash trees.

use thiserror::Error;

use crate::bin::Bin;
use crate::chunk::ChunkIndex;

/// Why a [`MerkleTree`](super::MerkleTree) or a root could not be computed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MerkleError {
    /// The content has no bytes. RFC 7574 §5 defines no root for zero
    /// chunks, and libswift refuses to seed an empty file, so neither do we.
    #[error("content is empty: a Merkle tree needs at least one chunk (RFC 7574 §5)")]
    EmptyContent,
    /// Reading the content failed (the I/O error is the source, not
    /// repeated in the message).
    #[error("cannot read the content")]
    Io(#[from] std::io::Error),
    /// [`MerkleTree::from_leaf_hashes`](super::MerkleTree::from_leaf_hashes)
    /// got a number of leaves that does not match the content length.
    #[error("the content length implies {expected} leaf hashes, got {got}")]
    LeafCountMismatch {
        /// Chunks implied by the content length and the chunk size.
        expected: u64,
        /// Leaves supplied (counting stops one past `expected`).
        got: u64,
    },
    /// A supplied hash does not have the hash function's length.
    #[error("a hash of {got} bytes where the hash function gives {expected}")]
    HashLength {
        /// The hash function's digest length.
        expected: usize,
        /// The length supplied.
        got: usize,
    },
    /// A chunk handed to
    /// [`MerkleTree::from_chunks`](super::MerkleTree::from_chunks) has the
    /// wrong size: every chunk but the last must be exactly the chunk size,
    /// the last 1 ..= chunk size bytes (RFC 7574 §4).
    #[error("chunk {chunk} has {len} bytes, which its position does not allow")]
    ChunkLength {
        /// The offending chunk.
        chunk: ChunkIndex,
        /// Its length in bytes.
        len: usize,
    },
    /// The tree would not fit in memory or in 64-bit bins (more than 2^63
    /// chunks).
    #[error("content of {chunks} chunks is too large for a Merkle tree here")]
    TooLarge {
        /// The number of chunks the content has.
        chunks: u64,
    },
}

/// Why the receiver's [`PartialTree`](super::PartialTree) refused peaks, an
/// uncle hash or a chunk (RFC 7574 §5.2).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// The number of chunks is not known yet: peak hashes are needed first
    /// (RFC 7574 §5.6).
    #[error("content size unknown: peak hashes are needed first")]
    UnknownSize,
    /// The chunk lies past the end of the content.
    #[error("chunk {chunk} is out of range (content has {chunk_count} chunks)")]
    ChunkOutOfRange {
        /// The requested chunk.
        chunk: ChunkIndex,
        /// The number of chunks of the content.
        chunk_count: u64,
    },
    /// The chunk's data has a length its position does not allow: a chunk
    /// other than the last must be exactly the chunk size, the last one
    /// 1 ..= chunk size bytes.
    #[error("chunk {chunk} has {len} bytes, which its position does not allow")]
    BadLength {
        /// The chunk.
        chunk: ChunkIndex,
        /// The length received.
        len: usize,
    },
    /// The chunk's data, or one of the pending uncle hashes used to connect
    /// it to a trusted node, is wrong: the computed hash differs from the
    /// trusted one. The pending uncles used have been dropped.
    #[error("chunk {0} does not match the trusted hashes")]
    BadChunk(ChunkIndex),
    /// The chunk is exactly two hashes long while the content size is only
    /// claimed by peaks whose tree height nothing has confirmed: RFC 7574
    /// hashes leaves and inner nodes alike (§5.1), so such data may be the
    /// two children of an inner node, "verifying" as a leaf of a forged
    /// shorter tree. Not the sender's fault for sure; ask again once another
    /// chunk has confirmed the height.
    #[error("chunk {0} is two hashes long and the tree height is not confirmed yet")]
    Ambiguous(ChunkIndex),
    /// Verification needs the hash of this bin, which is neither trusted nor
    /// pending: the sender must send it as an INTEGRITY message first.
    #[error("missing the hash of {0}")]
    MissingHash(Bin),
    /// An uncle hash contradicts a hash already trusted for the same bin
    /// (or claims a non-zero hash for a subtree past the end of the content).
    #[error("hash for {0} contradicts the trusted one")]
    BadHash(Bin),
    /// The peak hashes are not a peak decomposition (RFC 7574 §5.6) or do not
    /// hash up to the root (swarm id).
    #[error("peak hashes do not match the root hash")]
    BadPeaks,
    /// The peaks hash up to the root but imply another chunk count than the
    /// one already known, which they cannot replace: the known count is
    /// fixed or proven, or a chunk verified under it shows the claim false
    /// (see [`PartialTree::accept_peaks`](super::PartialTree::accept_peaks)).
    #[error("peaks imply {claimed} chunks, but the content has {known}")]
    SizeMismatch {
        /// The chunk count already known.
        known: u64,
        /// The chunk count the peaks imply.
        claimed: u64,
    },
    /// A hash does not have the hash function's length.
    #[error("a hash of {got} bytes where the hash function gives {expected}")]
    HashLength {
        /// The hash function's digest length.
        expected: usize,
        /// The length supplied.
        got: usize,
    },
    /// The bin is not a node of this content's tree.
    #[error("{0} is not a node of this tree")]
    BinOutOfRange(Bin),
    /// The chunk count is zero, above 2^63, or the tree does not fit in
    /// memory.
    #[error("cannot hold a tree of {chunks} chunks")]
    TooLarge {
        /// The chunk count asked for.
        chunks: u64,
    },
}
