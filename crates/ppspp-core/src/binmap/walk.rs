//! Walking a binmap in step with another binary tree over the same chunks.
//!
//! Rarest-first descends a tree of per-block count minima and needs, at each
//! node, what the peer has below it: whether anything at all (to skip the
//! subtree), and at a block the 64-chunk word. Looking each word up from the
//! root would cost a descent per block; walking both trees together costs
//! one step per node visited.

use super::query::Node;
use super::{Binmap, EMPTY, WORD_HEIGHT};

/// A subtree of a binmap reached by a walk (see [`Binmap::subtree`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Subtree(Node);

impl Binmap {
    /// The subtree covering chunks `0 .. 2^height`, for a walk that starts
    /// at a root of that height (`height ≥ 6`; at 6 it is one word).
    pub(crate) fn subtree(&self, height: u32) -> Subtree {
        let height = height.max(WORD_HEIGHT);
        if height >= self.height {
            return Subtree(self.top(height));
        }
        // The binmap is taller: the walk's root is its leftmost subtree.
        let (mut node, mut k) = (self.root_node(), self.height);
        while k > height {
            node = self.halves(node, k).0;
            k -= 1;
        }
        Subtree(node)
    }

    /// The two halves of `sub`, a subtree covering `2^k` chunks (`k > 6`).
    pub(crate) fn subtree_halves(&self, sub: Subtree, k: u32) -> (Subtree, Subtree) {
        debug_assert!(k > WORD_HEIGHT);
        let (left, right) = self.halves(sub.0, k);
        (Subtree(left), Subtree(right))
    }
}

impl Subtree {
    /// Whether no chunk under the subtree is filled.
    pub(crate) fn is_empty(self) -> bool {
        matches!(self.0, Node::Ref(EMPTY))
    }

    /// The chunks of a one-word subtree (covering 64 chunks) as a bitmask.
    pub(crate) fn word(self) -> u64 {
        match self.0 {
            Node::Ref(r) => r,
            // A node above the root covers at least 2^8 chunks, and a flat
            // binmap's words read as references: neither is ever one word.
            Node::Lifted | Node::Flat(_) => unreachable!("only a reference is one word"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::{ChunkIndex, ChunkRange};

    /// Every word under `sub` (covering `2^k` chunks from `base`), by walking.
    fn walk(m: &Binmap, sub: Subtree, k: u32, base: u64, out: &mut Vec<(u64, u64)>) {
        if sub.is_empty() {
            return;
        }
        if k == WORD_HEIGHT {
            out.push((base / 64, sub.word()));
            return;
        }
        let (l, r) = m.subtree_halves(sub, k);
        walk(m, l, k - 1, base, out);
        walk(m, r, k - 1, base + (1 << (k - 1)), out);
    }

    #[test]
    fn walks_match_word_lookups_at_every_root_height() {
        let mut m = Binmap::new();
        for (a, b) in [(3, 3), (64, 200), (700, 1400), (4000, 4095), (9000, 9001)] {
            m.set(ChunkRange::new(a, b).unwrap());
        }
        m.clear_chunk(ChunkIndex(100));
        // Roots shorter than, equal to and taller than the binmap's own.
        for height in [6, 9, 12, 14, 15, 20] {
            let mut got = Vec::new();
            walk(&m, m.subtree(height), height.max(6), 0, &mut got);
            let words = 1u64 << (height.max(6) - 6);
            let want: Vec<(u64, u64)> = (0..words)
                .map(|w| (w, m.word(w)))
                .filter(|&(_, x)| x != 0)
                .collect();
            assert_eq!(got, want, "height {height}");
        }
        let empty = Binmap::new();
        assert!(empty.subtree(12).is_empty());
    }
}
