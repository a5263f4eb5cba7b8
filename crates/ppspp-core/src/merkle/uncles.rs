//! The uncle walk shared by the sender's complete tree and a leecher's
//! partial tree (RFC 7574 §5.4).

use super::peaks::peak_for;
use crate::bin::Bin;
use crate::chunk::ChunkIndex;
use crate::hash::Hash;

/// The uncle hashes to send before DATA of `chunk` of content of
/// `chunk_count` chunks, in RFC 7574 §5.4 order: descending tree height
/// (the one nearest the peak first).
///
/// Walking up from the chunk, the walk stops at the chunk's peak (which the
/// receiver trusts via the peak hashes) or once the parent of the current
/// node is held by the receiver (`receiver_holds`): it then already trusts
/// the current node. `node(bin)` gives a sibling's hash.
///
/// `None` when the chunk is past the end or `node` lacks a sibling's hash.
pub(crate) fn uncle_path(
    chunk_count: u64,
    chunk: ChunkIndex,
    mut node: impl FnMut(Bin) -> Option<Hash>,
    mut receiver_holds: impl FnMut(Bin) -> bool,
) -> Option<Vec<(Bin, Hash)>> {
    let peak = peak_for(chunk_count, chunk)?;
    let mut cur = Bin::leaf(chunk)?;
    let mut out = Vec::new();
    while cur != peak {
        let (Some(parent), Some(sibling)) = (cur.parent(), cur.sibling()) else {
            break;
        };
        if receiver_holds(parent) {
            break;
        }
        out.push((sibling, node(sibling)?));
        cur = parent;
    }
    out.reverse();
    Some(out)
}
