//! A stable 64-bit mix for values that must look random yet be the same
//! on every run and platform: the core's live picker derives its segment
//! entries from one, the lab its per-component seeds. `rand` has no such
//! function (its generators hide it in their seeding), and
//! `std::hash::DefaultHasher` may change between Rust releases, which would
//! break the simulator's reproducibility.

/// The golden-ratio increment of SplitMix64 (Steele, Lea, Flood,
/// "Fast splittable pseudorandom number generators", OOPSLA 2014): adding
/// multiples of it before [`splitmix64`] spreads neighbouring inputs.
pub const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's finaliser: a bijective mix of 64 bits.
pub fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_splitmix64_generator() {
        // The reference generator's first two outputs from seed 0 (its
        // state advances by GOLDEN_GAMMA before each mix).
        assert_eq!(splitmix64(GOLDEN_GAMMA), 0xe220_a839_7b1d_cdaf);
        assert_eq!(
            splitmix64(GOLDEN_GAMMA.wrapping_mul(2)),
            0x6e78_9e6a_a1b9_65f4
        );
    }
}
