//! How many connected peers have each chunk: the input of rarest-first.
//!
//! Peers that have everything (seeders) are counted once as a number added
//! to every chunk, so a swarm full of seeders costs nothing per chunk.

use crate::chunk::{ChunkIndex, ChunkRange};

/// Per-chunk counts of the connected peers that have each chunk.
#[derive(Clone, Debug, Default)]
pub struct Availability {
    /// Peers that have every chunk.
    complete: u32,
    /// Counts from peers with some chunks, one per chunk of the content.
    counts: Vec<u16>,
}

impl Availability {
    /// No peers, no chunks known.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the counts to `chunk_count` chunks (once the size is known).
    /// Chunks past the end are never counted.
    pub fn set_chunk_count(&mut self, chunk_count: u64) {
        let n = usize::try_from(chunk_count).unwrap_or(usize::MAX);
        self.counts.resize(n, 0);
    }

    /// A peer that has every chunk joined.
    pub fn add_complete_peer(&mut self) {
        self.complete += 1;
    }

    /// A peer that had every chunk left.
    pub fn remove_complete_peer(&mut self) {
        self.complete = self.complete.saturating_sub(1);
    }

    /// One more peer has the chunks of `range` (newly: the caller counts
    /// each peer's chunk once).
    pub fn add(&mut self, range: ChunkRange) {
        for c in self.slots(range) {
            *c = c.saturating_add(1);
        }
    }

    /// One peer fewer has the chunks of `range`.
    pub fn remove(&mut self, range: ChunkRange) {
        for c in self.slots(range) {
            *c = c.saturating_sub(1);
        }
    }

    /// How many connected peers have `chunk`.
    pub fn count(&self, chunk: ChunkIndex) -> u32 {
        let partial = usize::try_from(chunk.0)
            .ok()
            .and_then(|i| self.counts.get(i))
            .copied()
            .unwrap_or(0);
        self.complete + u32::from(partial)
    }

    /// The number of peers that have everything.
    pub fn complete_peers(&self) -> u32 {
        self.complete
    }

    fn slots(&mut self, range: ChunkRange) -> impl Iterator<Item = &mut u16> {
        let len = self.counts.len() as u64;
        let first = range.first().0.min(len) as usize;
        let end = range.last().0.saturating_add(1).min(len) as usize;
        self.counts[first..end].iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_partial_and_complete_peers() {
        let mut a = Availability::new();
        a.set_chunk_count(10);
        a.add_complete_peer();
        a.add(ChunkRange::new(2u64, 4u64).unwrap());
        a.add(ChunkRange::new(4u64, 20u64).unwrap());
        assert_eq!(a.count(ChunkIndex(0)), 1);
        assert_eq!(a.count(ChunkIndex(3)), 2);
        assert_eq!(a.count(ChunkIndex(4)), 3);
        assert_eq!(a.count(ChunkIndex(9)), 2);
        assert_eq!(a.count(ChunkIndex(10)), 1);
        a.remove(ChunkRange::new(0u64, 4u64).unwrap());
        a.remove_complete_peer();
        assert_eq!(a.count(ChunkIndex(3)), 0);
        assert_eq!(a.count(ChunkIndex(4)), 1);
    }
}
