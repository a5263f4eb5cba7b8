//! Binmaps: which chunks a peer has (RFC 7574 §4, libswift "binmaps").
//!
//! RFC 7574 §4 addresses content as a binary tree over chunks (bins) and
//! peers announce what they have with HAVE messages (§3.2) naming bins or chunk
//! ranges. Peers therefore need a set of chunks that stays small when it
//! holds a few long runs, answers "first chunk I have / lack from here" and
//! "what does this peer have that I lack" quickly, and cannot be blown up by
//! a hostile HAVE covering 2^63 chunks. libswift's answer is the binmap: a
//! binary tree over bins in which a whole subtree that is uniformly filled or
//! empty is one value, so memory follows fragmentation, not content size.
//!
//! # Layout
//! The root covers `2^height` chunks (`7 ≤ height ≤ 63`; the root grows on
//! demand and shrinks back when its right half empties). A subtree covering
//! `2^k` chunks, `k ≥ 7`, is referred to by a `u64` *reference*:
//! `EMPTY` (0) and `FULL` (all ones) stand for uniform subtrees, any
//! other value `i` names arena cell `i − 1`. A cell holds the two half
//! subtrees: references when `k > 7`, and at `k = 7` two 64-chunk bitmap
//! words directly (whose 0 and all-ones values coincide with the uniform
//! references, so every level is read the same way).
//!
//! Invariant: a live cell always holds at least one filled and one empty
//! chunk. Updates collapse a cell whose halves became the same uniform value,
//! so searches for "a filled (or empty) chunk" never descend into a subtree
//! that lacks one, and an empty or full binmap owns no heap memory.
//!
//! A tree fragmented until its live cells take as much memory as a bitset
//! over its root switches to a flat layout (`flat.rs`): the words in order
//! plus two summary bits per node above them, which searches read as the
//! same tree. It goes back to the tree when it turns uniform or is updated
//! past its end.

mod flat;
mod query;
mod runs;
#[cfg(test)]
mod tests;
mod update;
mod walk;

use std::fmt;

use flat::Flat;

use crate::chunk::{ChunkRange, MAX_CHUNK_INDEX};

pub use runs::Runs;
pub(crate) use walk::Subtree;

/// Reference to a subtree with no filled chunk (also the empty bitmap word).
const EMPTY: u64 = 0;
/// Reference to a subtree whose chunks are all filled (also the full word).
const FULL: u64 = u64::MAX;
/// Height of the bitmap words inside the lowest cells: 64 = 2^6 chunks.
const WORD_HEIGHT: u32 = 6;
/// The smallest root height: one cell of two words.
const MIN_HEIGHT: u32 = WORD_HEIGHT + 1;
/// The largest root height: 2^63 chunks, every chunk up to [`MAX_CHUNK_INDEX`].
const MAX_HEIGHT: u32 = 63;
/// The root reference while the binmap is flat: neither uniform nor a cell.
const FLAT_ROOT: u64 = FULL - 1;
/// The tallest root a binmap goes flat under: 2^24 chunks, 2 MiB of words.
const FLAT_MAX_HEIGHT: u32 = 24;

/// The set of chunks a peer has, as a collapsed binary tree over bins
/// (RFC 7574 §4; libswift's binmap).
///
/// Memory grows with the number of filled/empty boundaries, not with the
/// chunk indices involved: an empty binmap, or one filled over all 2^63
/// chunks, holds no heap memory, and every range operation takes time
/// proportional to the tree depth (at most 57 levels) plus the cells it
/// creates or frees, never to the number of chunks in the range.
#[derive(Clone)]
pub struct Binmap {
    /// The root covers chunks `0 .. 2^height`; everything above is empty.
    height: u32,
    /// Reference to the root subtree (see the module documentation).
    root: u64,
    /// The arena of cells; freed cells are chained through their first slot.
    cells: Vec<[u64; 2]>,
    /// Reference (index + 1) of the first free cell, 0 when none.
    free_head: u64,
    /// Number of cells on the free list.
    free_len: usize,
    /// Number of filled chunks, kept up to date by every update.
    count: u64,
    /// The flat layout, once the tree is fragmented enough (`flat.rs`);
    /// then `root` is [`FLAT_ROOT`] and the arena is empty.
    flat: Option<Flat>,
}

/// `2^k` as a `u64` (`k ≤ 63`).
const fn span(k: u32) -> u64 {
    1u64 << k
}

/// The bits `lo ..= hi` (`lo ≤ hi ≤ 63`) of a 64-chunk bitmap word.
const fn word_mask(lo: u64, hi: u64) -> u64 {
    (FULL >> (63 - hi)) & (FULL << lo)
}

/// `word` with the bits of `mask` set (`fill` = [`FULL`]) or cleared
/// ([`EMPTY`]).
const fn fill_bits(word: u64, mask: u64, fill: u64) -> u64 {
    if fill == FULL {
        word | mask
    } else {
        word & !mask
    }
}

/// Whether a reference stands for a uniform (all empty or all full) subtree.
const fn is_uniform(r: u64) -> bool {
    r == EMPTY || r == FULL
}

impl Binmap {
    /// An empty binmap; allocates nothing.
    pub const fn new() -> Self {
        Binmap {
            height: MIN_HEIGHT,
            root: EMPTY,
            cells: Vec::new(),
            free_head: 0,
            free_len: 0,
            count: 0,
            flat: None,
        }
    }

    /// Number of filled chunks (up to 2^63), in constant time.
    pub const fn count(&self) -> u64 {
        self.count
    }

    /// Whether no chunk is filled.
    pub const fn is_empty(&self) -> bool {
        self.root == EMPTY
    }

    /// Bytes of heap memory held (the arena's capacity, free cells included).
    pub fn heap_bytes(&self) -> usize {
        self.cells.capacity() * std::mem::size_of::<[u64; 2]>()
            + self.flat.as_ref().map_or(0, |f| f.heap_bytes())
    }

    /// Whether the binmap is in its flat layout (see `flat.rs`), for tests
    /// that must cover both layouts.
    #[doc(hidden)]
    pub fn is_flat(&self) -> bool {
        self.flat.is_some()
    }

    /// Number of cells in use, for memory tests.
    #[cfg(test)]
    pub(crate) fn live_cells(&self) -> usize {
        self.cells.len() - self.free_len
    }
}

impl Default for Binmap {
    fn default() -> Self {
        Self::new()
    }
}

/// Semantic equality: the same chunks are filled, whatever the tree shapes.
impl PartialEq for Binmap {
    fn eq(&self, other: &Self) -> bool {
        self.count == other.count
            && self
                .first_where(other, |a, b| a ^ b, 0, MAX_CHUNK_INDEX)
                .is_none()
    }
}

impl Eq for Binmap {}

impl FromIterator<ChunkRange> for Binmap {
    fn from_iter<I: IntoIterator<Item = ChunkRange>>(iter: I) -> Self {
        let mut map = Binmap::new();
        iter.into_iter().for_each(|r| map.set(r));
        map
    }
}

/// Shows the count and the first filled runs (a binmap may hold millions).
impl fmt::Debug for Binmap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 16;
        struct RunList<'a>(&'a Binmap);
        impl fmt::Debug for RunList<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut list = f.debug_list();
                let mut runs = self.0.filled_runs();
                for run in runs.by_ref().take(SHOWN) {
                    list.entry(&format_args!("{run}"));
                }
                if runs.next().is_some() {
                    list.entry(&format_args!("…"));
                }
                list.finish()
            }
        }
        f.debug_struct("Binmap")
            .field("count", &self.count)
            .field("runs", &RunList(self))
            .finish()
    }
}
