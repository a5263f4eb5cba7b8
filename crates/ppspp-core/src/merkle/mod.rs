//! Merkle hash trees for static content (RFC 7574 §5).
//!
//! The sender builds a [`MerkleTree`] over its content: leaf = H(chunk), the
//! last chunk hashed at its real length; the tree is the smallest complete
//! binary tree with at least N leaves; subtrees holding only missing leaves
//! hash to all zeros (a parent of two empty subtrees is all zeros too, not
//! H(0‖0)); every other node is H(left ‖ right). The root is the swarm id
//! (RFC 7574 §5.1). The tree answers which hashes go before a DATA message:
//! peak hashes (§5.6) and uncle hashes (§5.4).
//!
//! The receiver holds a [`PartialTree`]: it trusts the root, learns the
//! content size from peak hashes, collects candidate uncle hashes and
//! verifies each chunk against trusted nodes before accepting it (§5.2).
//! A leecher serves what it verified from the same tree (its peaks and
//! uncles, from trusted hashes only), and saves and restores the trusted
//! state for checkpoints ([`PartialTree::trusted_frontier`],
//! [`PartialTree::restore`], which re-checks everything up to the root).
//!
//! # Storage
//! With leaf `i` at bin `2i`, every *filled* node (covering real chunks only)
//! has a bin number below `2N − 1`, so the filled nodes live in one flat
//! array indexed by bin. The few *incomplete* nodes on the right spine
//! (covering the end of the content and empty leaves, at most one per layer)
//! sit in a small side list; empty subtrees are implicit zero hashes.
//!
//! # Empty content
//! Zero bytes have no chunk and hence no root: building fails with
//! [`MerkleError::EmptyContent`], as libswift refuses to seed an empty file.

mod build;
mod error;
mod peaks;
mod stream;
mod tree;
mod uncles;
mod verify;

pub use build::Parallelism;
pub use error::{MerkleError, VerifyError};
pub use peaks::{chunk_count_from_peaks, peak_bins, root_from_peaks};
pub use stream::{root_from_reader, root_from_reader_with, BuildOptions, RootInfo};
pub use tree::MerkleTree;
pub use verify::{PartialTree, TrustedNodes, DEFAULT_MAX_CHUNKS};

use crate::bin::Bin;

/// Where a node of the tree of content of N chunks gets its hash from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeKind {
    /// Covers real chunks only: stored in the flat array at index `bin`.
    Filled,
    /// Covers missing leaves only: the all-zero hash (RFC 7574 §5.1).
    Empty,
    /// Covers the last chunk and missing leaves: on the right spine.
    Incomplete,
}

/// How the node `bin` of the tree with root `root` over `chunk_count` chunks
/// is stored, or `None` when `bin` is not a node of that tree.
pub(crate) fn node_kind(chunk_count: u64, root: Bin, bin: Bin) -> Option<NodeKind> {
    if bin.is_none() || !root.contains(bin) {
        return None;
    }
    Some(if bin.last_chunk().0 < chunk_count {
        NodeKind::Filled
    } else if bin.first_chunk().0 >= chunk_count {
        NodeKind::Empty
    } else {
        NodeKind::Incomplete
    })
}

/// Bytes of the flat array of filled nodes: `(2N − 1)·hash_len`, or `None`
/// when that does not fit in `usize`.
pub(crate) fn flat_bytes(chunk_count: u64, hash_len: usize) -> Option<usize> {
    let nodes = chunk_count.checked_mul(2)?.checked_sub(1)?;
    usize::try_from(nodes).ok()?.checked_mul(hash_len)
}

/// A zero-filled buffer of `len` bytes, or `None` when the allocation fails
/// (so a huge tree is an error value, not an abort).
///
/// The fallible probe is released before `vec![0; len]`, which asks the
/// allocator for zeroed memory: large blocks come as fresh pages that cost
/// nothing until touched. That matters for the receiver, which allocates
/// for the N claimed by peaks — and a single peak equal to the root checks
/// out for any layer, so N is only as plausible as its sender.
pub(crate) fn alloc_zeroed(len: usize) -> Option<Vec<u8>> {
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(len).ok()?;
    drop(probe);
    Some(vec![0; len])
}

/// The `hash_len` bytes of node `index` in a flat array, if in range.
pub(crate) fn slot(bytes: &[u8], hash_len: usize, index: u64) -> Option<&[u8]> {
    let start = usize::try_from(index).ok()?.checked_mul(hash_len)?;
    bytes.get(start..start.checked_add(hash_len)?)
}

/// The mutable bytes of node `index` in a flat array, if in range.
pub(crate) fn slot_mut(bytes: &mut [u8], hash_len: usize, index: u64) -> Option<&mut [u8]> {
    let start = usize::try_from(index).ok()?.checked_mul(hash_len)?;
    bytes.get_mut(start..start.checked_add(hash_len)?)
}
