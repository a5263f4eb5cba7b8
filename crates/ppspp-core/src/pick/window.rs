//! Rarest-first inside a window of chunks (a priority set of the VoD
//! pickers), cheap enough to call once per pick.
//!
//! The window's blocks are evaluated once per pick — their fresh chunks
//! and the rarest among them, from the availability's per-count bitsets —
//! and each round takes a run from the rarest block (ties between blocks at
//! random), then re-evaluates only that block: counts do not change during
//! a pick. A run stays inside its block and the window.

use rand::{Rng, RngExt};

use super::block_minima::BLOCK;
use super::rarest::{random_run_start, rarest_in};
use super::PickView;
use crate::binmap::Binmap;
use crate::chunk::ChunkRange;

/// One block of the window with fresh chunks.
#[derive(Clone, Copy, Debug)]
struct Entry {
    /// The block's first chunk.
    base: u64,
    /// Its fresh chunks inside the window (bit `i`: chunk `base + i`).
    fresh: u64,
    /// Their smallest count, and the chunks having it.
    value: u32,
    ties: u64,
}

/// Rarest-first in a window, with its scratch space kept between picks.
#[derive(Clone, Debug, Default)]
pub(crate) struct WindowRarest {
    blocks: Vec<Entry>,
}

impl WindowRarest {
    /// Appends to `out` up to `budget` chunks of `window` — fresh, not in
    /// `picked` — rarest first; adds them to `picked`, returns how many.
    pub(crate) fn take(
        &mut self,
        view: &PickView<'_>,
        window: ChunkRange,
        budget: u64,
        picked: &mut Binmap,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    ) -> u64 {
        let (first, last) = (window.first().0, window.last().0);
        let scratch = &mut self.blocks;
        scratch.clear();
        if budget == 0 {
            return 0;
        }
        for b in first / BLOCK..=last / BLOCK {
            let base = b * BLOCK;
            let lo = first.max(base) - base;
            let hi = last.min(base + BLOCK - 1) - base;
            let in_window = (u64::MAX >> (BLOCK - 1 - (hi - lo))) << lo;
            let fresh = in_window
                & view.peer_has.word(b)
                & !view.have.word(b)
                & !view.requested.word(b)
                & !picked.word(b);
            if let Some(e) = evaluate(view, base, fresh) {
                scratch.push(e);
            }
        }
        take_rounds(view, budget, picked, rng, out, scratch)
    }
}

/// The rounds of [`WindowRarest::take`] over the evaluated blocks.
fn take_rounds(
    view: &PickView<'_>,
    budget: u64,
    picked: &mut Binmap,
    rng: &mut dyn Rng,
    out: &mut Vec<ChunkRange>,
    scratch: &mut Vec<Entry>,
) -> u64 {
    let mut taken = 0;
    while taken < budget {
        // The rarest block; equally rare ones by a fair draw.
        let mut best: Option<usize> = None;
        let mut equal = 0u32;
        for (i, e) in scratch.iter().enumerate() {
            match best.map(|j| scratch[j].value) {
                Some(v) if e.value > v => {}
                Some(v) if e.value == v => {
                    equal += 1;
                    if rng.random_range(0..equal) == 0 {
                        best = Some(i);
                    }
                }
                _ => {
                    best = Some(i);
                    equal = 1;
                }
            }
        }
        let Some(i) = best else { break };
        let e = scratch[i];
        let start = random_run_start(e.ties, rng);
        let run = u64::from((!(e.fresh >> start)).trailing_zeros()).min(budget - taken);
        let range = ChunkRange::with_len(e.base + start, run).expect("a run in a block");
        out.push(range);
        picked.set(range);
        taken += run;
        let run_bits = if run == BLOCK {
            u64::MAX
        } else {
            ((1u64 << run) - 1) << start
        };
        let left = e.fresh & !run_bits;
        match evaluate(view, e.base, left) {
            Some(next) => scratch[i] = next,
            None => {
                scratch.swap_remove(i);
            }
        }
    }
    taken
}

/// A block's fresh chunks `fresh` with the rarest of them; `None` when
/// there are none. Chunks the counts do not cover (the size unknown) count
/// as held by nobody but complete peers: 0.
fn evaluate(view: &PickView<'_>, base: u64, fresh: u64) -> Option<Entry> {
    if fresh == 0 {
        return None;
    }
    let counted = view.availability.chunk_count().saturating_sub(base);
    let covered = if counted >= BLOCK {
        fresh
    } else {
        fresh & ((1u64 << counted) - 1)
    };
    let (value, ties) = if covered != fresh {
        (0, fresh & !covered)
    } else {
        let levels = view.availability.levels((base / BLOCK) as usize);
        let counts = view.availability.partial_counts();
        rarest_in(levels, counts, base, fresh, u32::MAX).expect("a non-empty mask has a rarest")
    };
    Some(Entry {
        base,
        fresh,
        value,
        ties,
    })
}
