//! Per-component randomness derived from one experiment seed, so that every
//! peer, link and flow has its own reproducible stream and adding one does
//! not shift the others.

use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

/// SplitMix64's finaliser: a bijective mix of 64 bits.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

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
}

/// The seed of component `index` of kind `stream` in the experiment `seed`.
pub fn derive(seed: u64, stream: Stream, index: u64) -> u64 {
    mix(mix(seed ^ mix(stream as u64)) ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15))
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
