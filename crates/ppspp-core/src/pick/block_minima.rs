//! A segment tree of minima over 64-chunk blocks: the index rarest-first
//! searches instead of scanning every chunk.
//!
//! Leaf `b` holds the smallest partial count of block `b` (chunks
//! `64b .. 64b + 64`), ignoring chunks taken (had or requested); every inner node
//! holds the minimum of its two children. A node's value is therefore a
//! lower bound on the availability of any chunk worth requesting under it,
//! which lets rarest-first skip whole subtrees.

/// Chunks per block: one word of the "taken" bitset.
pub(crate) const BLOCK: u64 = 64;

/// The value of a block with no counted chunk (all taken, or past the end).
/// Counts saturate one below it, so it never stands for a real count.
pub(crate) const NONE: u16 = u16::MAX;

/// Minima over blocks, as an implicit binary tree: node 1 is the root, node
/// `i` has children `2i` and `2i + 1`, leaf `b` is node `leaves + b`.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockMinima {
    /// Leaf slots: a power of two, at least the number of blocks (0 when
    /// there are no blocks).
    leaves: usize,
    /// Node values; index 0 is unused.
    nodes: Vec<u16>,
}

impl BlockMinima {
    /// Rebuilds the tree over `blocks` blocks whose minima `leaf` computes.
    pub(crate) fn rebuild(&mut self, blocks: usize, leaf: impl FnMut(usize) -> u16) {
        self.leaves = if blocks == 0 {
            0
        } else {
            blocks.next_power_of_two()
        };
        self.nodes.clear();
        self.nodes.resize(2 * self.leaves, NONE);
        if blocks > 0 {
            self.update(0, blocks - 1, leaf);
        }
    }

    /// Recomputes the leaves of blocks `first ..= last` with `leaf`, then
    /// their ancestors, level by level (time: the blocks plus the height).
    pub(crate) fn update(&mut self, first: usize, last: usize, mut leaf: impl FnMut(usize) -> u16) {
        if self.leaves == 0 || first > last {
            return;
        }
        let last = last.min(self.leaves - 1);
        for b in first..=last {
            self.nodes[self.leaves + b] = leaf(b);
        }
        let (mut lo, mut hi) = ((self.leaves + first) / 2, (self.leaves + last) / 2);
        while lo >= 1 {
            for i in lo..=hi {
                self.nodes[i] = self.nodes[2 * i].min(self.nodes[2 * i + 1]);
            }
            (lo, hi) = (lo / 2, hi / 2);
        }
    }

    /// Sets the minimum of `block` to `value`, then its ancestors, stopping
    /// at the first one whose minimum does not change (time: the levels
    /// that change, at most the height).
    pub(crate) fn set_leaf(&mut self, block: usize, value: u16) {
        if block >= self.leaves {
            return;
        }
        let mut i = self.leaves + block;
        if self.nodes[i] == value {
            return;
        }
        self.nodes[i] = value;
        while i > 1 {
            i /= 2;
            let min = self.nodes[2 * i].min(self.nodes[2 * i + 1]);
            if self.nodes[i] == min {
                return;
            }
            self.nodes[i] = min;
        }
    }

    /// The root node, when there is at least one block.
    pub(crate) fn root(&self) -> Option<usize> {
        (self.leaves > 0).then_some(1)
    }

    /// The minimum held by `node`.
    pub(crate) fn value(&self, node: usize) -> u16 {
        self.nodes[node]
    }

    /// The block of a leaf node, `None` for inner nodes.
    pub(crate) fn leaf_block(&self, node: usize) -> Option<usize> {
        node.checked_sub(self.leaves)
    }

    /// The minimum held for `block` ([`NONE`] past the blocks).
    pub(crate) fn leaf(&self, block: usize) -> u16 {
        self.nodes.get(self.leaves + block).copied().unwrap_or(NONE)
    }

    /// The depth of `node` (the root is at depth 0).
    pub(crate) fn depth(node: usize) -> u32 {
        node.ilog2()
    }

    /// The first block under `node` and how many blocks it spans.
    pub(crate) fn blocks(&self, node: usize) -> (usize, usize) {
        let depth = Self::depth(node);
        let span = self.leaves >> depth;
        ((node - (1 << depth)) * span, span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minima_follow_leaf_updates() {
        let mut values = [5u16, 3, 9, 7, 4];
        let mut t = BlockMinima::default();
        assert_eq!(t.root(), None);
        t.rebuild(values.len(), |b| values[b]);
        assert_eq!(t.value(1), 3);
        assert_eq!(t.blocks(1), (0, 8));
        assert_eq!(t.blocks(3), (4, 4));
        assert_eq!(t.leaf_block(8 + 4), Some(4));
        assert_eq!(t.leaf_block(7), None);
        // The padding leaves never lower a minimum.
        assert_eq!(t.value(3), 4);
        values[1] = 8;
        t.update(1, 1, |b| values[b]);
        assert_eq!(t.value(1), 4);
        assert_eq!(t.value(2), 5);
        values[4] = 1;
        t.update(4, 4, |b| values[b]);
        assert_eq!(t.value(1), 1);
        // Single leaves, with the early stop, agree with a full rebuild.
        let mut full = BlockMinima::default();
        for (b, v) in [(2, 0), (4, 6), (2, 9), (0, 2), (3, 2), (0, 7), (1, 1)] {
            values[b] = v;
            t.set_leaf(b, v);
            full.rebuild(values.len(), |b| values[b]);
            assert_eq!(t.nodes, full.nodes, "after block {b} = {v}");
        }
    }
}
