//! `linear`: the baseline of seed paper 000's VoD comparison (§IV-A) —
//! "retrieves data in order", from the playback position, asking whichever
//! connected peer has room for a request (no peer selection).
//!
//! It picks exactly as [`Sequential`] does; it exists under its own name so
//! that scenario files and results say which algorithm of the paper ran.

use rand::Rng;

use super::{PickView, Picker, Sequential};
use crate::chunk::ChunkRange;

/// In-order picking from the playhead (see the module documentation).
#[derive(Clone, Copy, Debug, Default)]
pub struct Linear(Sequential);

impl Linear {
    /// The linear picker.
    pub fn new() -> Self {
        Linear(Sequential::new())
    }
}

impl Picker for Linear {
    fn name(&self) -> &'static str {
        "linear"
    }

    fn pick(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    ) {
        self.0.pick(view, max_chunks, rng, out);
    }
}
