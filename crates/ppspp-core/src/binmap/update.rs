//! Updates: setting and clearing chunk ranges, growing and shrinking the
//! root, and the cell arena with its free list.
//!
//! Every update keeps the tree canonical: a cell whose two halves become the
//! same uniform value is freed and replaced by that value, and the root is
//! kept as low as the filled chunks allow. Hence a chunk set has one shape,
//! searches never enter a subtree lacking what they look for, and memory
//! follows the number of run boundaries.

use super::flat::Flat;
use super::query::Node;
use super::{fill_bits, is_uniform, span, word_mask, Binmap};
use super::{EMPTY, FLAT_MAX_HEIGHT, FLAT_ROOT, FULL, MAX_HEIGHT, MIN_HEIGHT, WORD_HEIGHT};
use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkRange, MAX_CHUNK_INDEX};

impl Binmap {
    /// Marks every chunk of `range` as filled.
    pub fn set(&mut self, range: ChunkRange) {
        let (lo, hi) = (range.first().0, range.last().0);
        if lo == hi {
            // One chunk (most HAVEs and ACKs): the iterative path.
            return self.set_chunk(range.first());
        }
        if self.flat_covers(hi) {
            return self.assign_flat(lo, hi, FULL);
        }
        self.grow_to_cover(hi);
        self.root = self.assign(self.root, self.height, 0, lo, hi, FULL);
        self.normalize_root();
        self.flatten_if_fragmented();
    }

    /// Marks every chunk of `range` as empty.
    pub fn clear(&mut self, range: ChunkRange) {
        if range.len() == 1 {
            return self.clear_chunk(range.first());
        }
        let top = span(self.height) - 1;
        let (lo, hi) = (range.first().0, range.last().0.min(top));
        if lo > hi {
            return; // Entirely above the root, where everything is empty.
        }
        if self.flat.is_some() {
            return self.assign_flat(lo, hi, EMPTY);
        }
        self.root = self.assign(self.root, self.height, 0, lo, hi, EMPTY);
        self.normalize_root();
        self.flatten_if_fragmented();
    }

    /// Marks `chunk` as filled; a no-op past [`MAX_CHUNK_INDEX`], which no
    /// content can have.
    pub fn set_chunk(&mut self, chunk: ChunkIndex) {
        if chunk.0 > MAX_CHUNK_INDEX {
            return;
        }
        if self.flat_covers(chunk.0) {
            return self.assign_flat_chunk(chunk.0, FULL);
        }
        self.grow_to_cover(chunk.0);
        self.assign_chunk(chunk.0, FULL);
        self.flatten_if_fragmented();
    }

    /// Marks `chunk` as filled and tells whether it was empty before: the
    /// look-up and the update in one descent.
    pub fn insert_chunk(&mut self, chunk: ChunkIndex) -> bool {
        let before = self.count;
        self.set_chunk(chunk);
        self.count != before
    }

    /// Marks `chunk` as empty; a no-op past [`MAX_CHUNK_INDEX`].
    pub fn clear_chunk(&mut self, chunk: ChunkIndex) {
        if chunk.0 >= span(self.height) {
            return;
        }
        if self.flat.is_some() {
            return self.assign_flat_chunk(chunk.0, EMPTY);
        }
        self.assign_chunk(chunk.0, EMPTY);
        self.normalize_root();
        self.flatten_if_fragmented();
    }

    /// Whether the binmap is flat and its layout reaches chunk `hi`. A flat
    /// binmap updated beyond its end goes back to the tree, which can grow.
    fn flat_covers(&mut self, hi: u64) -> bool {
        if self.flat.is_none() {
            return false;
        }
        if hi < span(self.height) {
            return true;
        }
        self.unflatten();
        false
    }

    /// [`Binmap::assign_chunk`] in the flat layout.
    fn assign_flat_chunk(&mut self, c: u64, fill: u64) {
        let flat = self.flat.as_mut().expect("called on a flat binmap");
        let changed = u64::from(flat.assign_chunk(c, fill));
        self.count_changed(changed, fill);
        self.unflatten_if_uniform();
    }

    /// [`Binmap::assign`] in the flat layout, over `lo ..= hi` below its end.
    fn assign_flat(&mut self, lo: u64, hi: u64, fill: u64) {
        let flat = self.flat.as_mut().expect("called on a flat binmap");
        let changed = flat.assign(lo, hi, fill);
        self.count_changed(changed, fill);
        self.unflatten_if_uniform();
    }

    /// `changed` chunks were set (`fill` = [`FULL`]) or cleared.
    fn count_changed(&mut self, changed: u64, fill: u64) {
        if fill == FULL {
            self.count += changed;
        } else {
            self.count -= changed;
        }
    }

    /// Switches to the flat layout once the live cells take as much memory
    /// as it would: fragmentation has made the tree no cheaper than a
    /// bitset, and costlier to update (see `flat.rs`).
    fn flatten_if_fragmented(&mut self) {
        if self.height > FLAT_MAX_HEIGHT || is_uniform(self.root) {
            return;
        }
        let live = self.cells.len() - self.free_len;
        if live * std::mem::size_of::<[u64; 2]>() < Flat::heap_bytes_for(self.height) {
            return;
        }
        let mut flat = Flat::new(self.height);
        self.spill(self.root, self.height, 0, flat.words_mut());
        flat.refresh_all();
        self.cells = Vec::new();
        self.free_head = 0;
        self.free_len = 0;
        self.root = FLAT_ROOT;
        self.flat = Some(flat);
    }

    /// Writes the subtree `r`, covering `2^k` chunks from word `base`,
    /// into `words`.
    fn spill(&self, r: u64, k: u32, base: usize, words: &mut [u64]) {
        if r == EMPTY {
            return;
        }
        if k == WORD_HEIGHT {
            words[base] = r;
        } else if r == FULL {
            words[base..base + (1usize << (k - WORD_HEIGHT))].fill(FULL);
        } else {
            let [left, right] = self.cells[(r - 1) as usize];
            self.spill(left, k - 1, base, words);
            self.spill(
                right,
                k - 1,
                base + (1usize << (k - 1 - WORD_HEIGHT)),
                words,
            );
        }
    }

    /// Goes back to the tree when the flat layout became all empty or all
    /// full, where the tree needs no cell at all. The count tells, without
    /// a look at the summary: the layout covers exactly `2^height` chunks.
    fn unflatten_if_uniform(&mut self) {
        if self.count == 0 || self.count == span(self.height) {
            self.unflatten();
        }
    }

    /// Rebuilds the tree from the flat layout.
    fn unflatten(&mut self) {
        let Some(flat) = self.flat.take() else {
            return;
        };
        self.root = self.build(&flat, flat.root());
        self.normalize_root();
    }

    /// The tree reference of a flat layout's node.
    fn build(&mut self, flat: &Flat, node: Node) -> u64 {
        match node {
            Node::Ref(r) => r,
            Node::Flat(i) => {
                let left = self.build(flat, flat.node(2 * i));
                let right = self.build(flat, flat.node(2 * i + 1));
                self.alloc([left, right])
            }
            Node::Lifted => unreachable!("a flat layout has no lifted node"),
        }
    }

    /// Marks the chunks under `bin` as filled (the form HAVE messages take,
    /// RFC 7574 §3.2); a no-op for [`Bin::NONE`].
    pub fn set_bin(&mut self, bin: Bin) {
        if let Some(range) = bin.chunks() {
            self.set(range);
        }
    }

    /// Marks the chunks under `bin` as empty; a no-op for [`Bin::NONE`].
    pub fn clear_bin(&mut self, bin: Bin) {
        if let Some(range) = bin.chunks() {
            self.clear(range);
        }
    }

    /// Raises the root until it covers chunk `hi` (`2^height > hi`).
    fn grow_to_cover(&mut self, hi: u64) {
        let needed = (64 - hi.leading_zeros()).clamp(MIN_HEIGHT, MAX_HEIGHT);
        while self.height < needed {
            if self.root != EMPTY {
                // The old tree becomes the left half; the new right half is empty.
                self.root = self.alloc([self.root, EMPTY]);
            }
            self.height += 1;
        }
    }

    /// Sets chunk `c` (below `2^height`) to `fill`: the one-chunk case of
    /// [`Binmap::assign`], the update made for every chunk received, done
    /// as a loop down to the word and back up only as far as cells collapse.
    fn assign_chunk(&mut self, c: u64, fill: u64) {
        // Cells on the way down, root first: at most 63 − 6 of them.
        let mut path = [0usize; (MAX_HEIGHT - WORD_HEIGHT) as usize];
        let mut depth = 0usize;
        let (mut r, mut k) = (self.root, self.height);
        while k > WORD_HEIGHT {
            if r == fill {
                return; // Already uniformly `fill` around `c`.
            }
            let idx = if is_uniform(r) {
                // Split a uniform subtree; link the new cell into its parent.
                let new = self.alloc([r, r]);
                match depth.checked_sub(1) {
                    Some(up) => self.cells[path[up]][((c >> k) & 1) as usize] = new,
                    None => self.root = new,
                }
                (new - 1) as usize
            } else {
                (r - 1) as usize
            };
            path[depth] = idx;
            depth += 1;
            k -= 1;
            r = self.cells[idx][((c >> k) & 1) as usize];
        }
        let bit = 1u64 << (c & 63);
        let mut value = fill_bits(r, bit, fill);
        if value == r {
            return;
        }
        self.count_changed(1, fill);
        // Store the new word, then collapse cells upward while they turn uniform.
        while let Some(up) = depth.checked_sub(1) {
            depth = up;
            let idx = path[up];
            let height = self.height - up as u32; // of cell `idx`
            let half = ((c >> (height - 1)) & 1) as usize;
            self.cells[idx][half] = value;
            let [left, right] = self.cells[idx];
            if left != right || !is_uniform(left) {
                return;
            }
            self.free(idx);
            value = left;
        }
        self.root = value;
        self.normalize_root();
    }

    /// Sets chunks `lo ..= hi` (inside the node) of the subtree `r`, which
    /// covers `2^k` chunks from `base`, to `fill` ([`EMPTY`] or [`FULL`]);
    /// returns the subtree's new reference and keeps `count` up to date.
    fn assign(&mut self, r: u64, k: u32, base: u64, lo: u64, hi: u64, fill: u64) -> u64 {
        if r == fill {
            return r;
        }
        let end = base + (span(k) - 1);
        if lo == base && hi == end {
            // The whole subtree becomes uniform: free it, counting what it held.
            let had = self.release(r, k);
            self.count -= had;
            if fill == FULL {
                self.count += span(k);
            }
            return fill;
        }
        if k == WORD_HEIGHT {
            let mask = word_mask(lo - base, hi - base);
            let new = fill_bits(r, mask, fill);
            self.count = self.count - u64::from(r.count_ones()) + u64::from(new.count_ones());
            return new;
        }
        // Only part of this subtree changes, so it needs a cell of its own;
        // a uniform subtree is split into two halves of the same value.
        let idx = if is_uniform(r) {
            (self.alloc([r, r]) - 1) as usize
        } else {
            (r - 1) as usize
        };
        let mid = base + span(k - 1);
        if lo < mid {
            let child = self.cells[idx][0];
            let new = self.assign(child, k - 1, base, lo, hi.min(mid - 1), fill);
            self.cells[idx][0] = new;
        }
        if hi >= mid {
            let child = self.cells[idx][1];
            let new = self.assign(child, k - 1, mid, lo.max(mid), hi, fill);
            self.cells[idx][1] = new;
        }
        let [left, right] = self.cells[idx];
        if left == right && is_uniform(left) {
            // Collapse: keeps the "live cells are mixed" invariant.
            self.free(idx);
            left
        } else {
            idx as u64 + 1
        }
    }

    /// Frees every cell of the subtree `r` (covering `2^k` chunks) and
    /// returns how many filled chunks it held. Cost is proportional to the
    /// cells freed, which earlier updates paid to create.
    fn release(&mut self, r: u64, k: u32) -> u64 {
        if r == EMPTY {
            return 0;
        }
        if r == FULL {
            return span(k);
        }
        if k == WORD_HEIGHT {
            return u64::from(r.count_ones());
        }
        let idx = (r - 1) as usize;
        let [left, right] = self.cells[idx];
        self.free(idx);
        self.release(left, k - 1) + self.release(right, k - 1)
    }

    /// Stores `cell` in the arena and returns its reference.
    fn alloc(&mut self, cell: [u64; 2]) -> u64 {
        if self.free_head != 0 {
            let idx = (self.free_head - 1) as usize;
            self.free_head = self.cells[idx][0];
            self.free_len -= 1;
            self.cells[idx] = cell;
            idx as u64 + 1
        } else {
            self.cells.push(cell);
            self.cells.len() as u64
        }
    }

    /// Puts cell `idx` on the free list.
    fn free(&mut self, idx: usize) {
        self.cells[idx] = [self.free_head, EMPTY];
        self.free_head = idx as u64 + 1;
        self.free_len += 1;
    }

    /// Lowers the root while its right half is empty, and gives the arena
    /// back once the whole tree is uniform (then no cell is live).
    fn normalize_root(&mut self) {
        while self.height > MIN_HEIGHT && !is_uniform(self.root) {
            let idx = (self.root - 1) as usize;
            let [left, right] = self.cells[idx];
            if right != EMPTY {
                break;
            }
            self.free(idx);
            self.root = left;
            self.height -= 1;
        }
        if self.root == EMPTY {
            self.height = MIN_HEIGHT;
        }
        if is_uniform(self.root) {
            debug_assert_eq!(self.cells.len(), self.free_len, "leaked binmap cells");
            self.cells = Vec::new();
            self.free_head = 0;
            self.free_len = 0;
        }
    }
}
