//! Owned pick inputs for the pickers' unit tests.

use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

use super::availability::Availability;
use super::{PickView, Picker};
use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::time::Instant;

pub(crate) fn r(first: u64, last: u64) -> ChunkRange {
    ChunkRange::new(first, last).unwrap()
}

pub(crate) fn map(ranges: &[(u64, u64)]) -> Binmap {
    ranges.iter().map(|&(a, b)| r(a, b)).collect()
}

/// The sets a pick depends on, owned.
pub(crate) struct Sets {
    pub have: Binmap,
    pub requested: Binmap,
    pub from_peer: Binmap,
    pub peer_has: Binmap,
    /// Chunks whose request went late elsewhere (see `PickView::late`).
    pub late: Binmap,
    pub availability: Availability,
    pub chunk_count: Option<u64>,
    /// Whether the peer's chunks are in the counts (see `PickView`).
    pub peer_counted: bool,
    pub playhead: Option<u64>,
    /// A live stream (see `PickView::live`).
    pub live: bool,
    pub link: super::PeerLink,
}

impl Sets {
    /// A peer with `peer_has`, content of 1000 chunks, nothing counted.
    pub fn uncounted(peer_has: &[(u64, u64)]) -> Self {
        Sets {
            have: Binmap::new(),
            requested: Binmap::new(),
            from_peer: Binmap::new(),
            late: Binmap::new(),
            peer_has: map(peer_has),
            availability: Availability::new(),
            chunk_count: Some(1000),
            peer_counted: true,
            playhead: None,
            live: false,
            link: super::PeerLink::default(),
        }
    }

    /// `chunk_count` chunks, counts sized to them; the peer's chunks are
    /// counted once.
    pub fn counted(chunk_count: u64, peer_has: &[(u64, u64)]) -> Self {
        let mut s = Sets::uncounted(peer_has);
        s.availability.set_chunk_count(chunk_count);
        s.availability.add_runs(s.peer_has.filled_runs());
        s.chunk_count = Some(chunk_count);
        s
    }

    /// Marks `first ..= last` requested from another peer, as the swarm
    /// does (taken too).
    pub fn request(&mut self, first: u64, last: u64) {
        self.requested.set(r(first, last));
        self.availability.mark_taken(r(first, last));
    }

    pub fn view(&self) -> PickView<'_> {
        PickView {
            now: Instant::ZERO,
            chunk_count: self.chunk_count,
            have: &self.have,
            requested: &self.requested,
            requested_from_peer: &self.from_peer,
            peer_has: &self.peer_has,
            late: &self.late,
            availability: &self.availability,
            peer_counted: self.peer_counted,
            playhead: self.playhead.map(ChunkIndex),
            live: self.live,
            dry: None,
            link: self.link,
        }
    }

    /// What `picker` picks with a generator seeded `seed`, as (first, last).
    pub fn pick_with(&self, picker: &mut dyn Picker, max: u64, seed: u64) -> Vec<(u64, u64)> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let mut out = Vec::new();
        picker.pick(&self.view(), max, &mut rng, &mut out);
        out.iter().map(|r| (r.first().0, r.last().0)).collect()
    }

    /// Checks the constraints every pick must meet; returns the chunks.
    pub fn check(&self, picked: &[(u64, u64)], max: u64) -> Vec<u64> {
        let chunks: Vec<u64> = picked.iter().flat_map(|&(a, b)| a..=b).collect();
        assert!(chunks.len() as u64 <= max, "over budget: {picked:?}");
        let mut sorted = chunks.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), chunks.len(), "picked twice: {picked:?}");
        for &c in &chunks {
            let c = ChunkIndex(c);
            assert!(self.peer_has.contains(c), "{c} not at the peer");
            assert!(!self.have.contains(c), "{c} already ours");
            assert!(
                !self.from_peer.contains(c),
                "{c} already asked from the peer"
            );
        }
        chunks
    }
}
