//! Per-component randomness derived from one experiment seed, so that every
//! peer, link and flow has its own reproducible stream and adding one does
//! not shift the others.

use ppspp_core::mix::{splitmix64 as mix, GOLDEN_GAMMA};
use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

/// What a derived stream is for; keeps the streams of different kinds of
/// component apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// A PPSPP peer's core (channel ids, random choices).
    Peer = 1,
    /// A link's loss and jitter.
    Link = 2,
    /// A cross-traffic flow.
    Flow = 3,
    /// Arrivals and departures.
    Churn = 4,
    /// A peer's answers from the tracker.
    Tracker = 5,
    /// A viewer's seeks (its player's seek model).
    Seek = 6,
    /// A live source's signing key.
    LiveKey = 7,
    /// Hosts' access delays drawn from a range.
    Topology = 8,
}

/// The seed of component `index` of kind `stream` in the experiment `seed`.
pub fn derive(seed: u64, stream: Stream, index: u64) -> u64 {
    mix(mix(seed ^ mix(stream as u64)) ^ index.wrapping_mul(GOLDEN_GAMMA))
}

/// A generator for component `index` of kind `stream`.
pub fn rng(seed: u64, stream: Stream, index: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(derive(seed, stream, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_kind_index_and_seed() {
        let a = derive(1, Stream::Peer, 0);
        assert_ne!(a, derive(1, Stream::Peer, 1));
        assert_ne!(a, derive(1, Stream::Link, 0));
        assert_ne!(a, derive(2, Stream::Peer, 0));
        assert_eq!(a, derive(1, Stream::Peer, 0));
    }
}
