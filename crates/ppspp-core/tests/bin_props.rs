//! Property tests for bin arithmetic and the chunk/byte/bin conversions
//! (RFC 7574 §4.2).

use ppspp_core::chunk::MAX_CHUNK_INDEX;
use ppspp_core::{Bin, ByteRange, ChunkIndex, ChunkRange, ChunkSize};
use proptest::prelude::*;

/// A valid bin: any layer 0..=63 and an offset that fits.
fn bin() -> impl Strategy<Value = Bin> {
    (0u32..=63, any::<u64>()).prop_map(|(layer, o)| {
        let offset = o % (1u64 << (63 - layer));
        Bin::new(layer, offset).unwrap()
    })
}

fn chunk_range(max: u64) -> impl Strategy<Value = ChunkRange> {
    (0..=max, 0..=max).prop_map(|(a, b)| ChunkRange::new(a.min(b), a.max(b)).unwrap())
}

/// The fewest aligned blocks covering `first..=last`, by dynamic programming
/// over every split (small ranges only).
fn fewest_bins_brute_force(first: u64, last: u64) -> usize {
    let n = (last - first + 1) as usize;
    let mut best = vec![usize::MAX; n + 1];
    best[0] = 0;
    for end in 1..=n {
        for start in 0..end {
            let (lo, len) = (first + start as u64, (end - start) as u64);
            let aligned = len.is_power_of_two() && lo % len == 0;
            if aligned && best[start] != usize::MAX {
                best[end] = best[end].min(best[start] + 1);
            }
        }
    }
    best[n]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn layer_and_offset_round_trip(b in bin()) {
        prop_assert_eq!(Bin::new(b.layer(), b.offset()), Some(b));
        let chunks = b.chunks().unwrap();
        prop_assert_eq!(chunks.len(), b.chunk_count());
        prop_assert_eq!(chunks.first().get(), b.offset() << b.layer());
        prop_assert_eq!(b.base_left(), Bin::leaf(chunks.first()).unwrap());
        prop_assert_eq!(b.base_right(), Bin::leaf(chunks.last()).unwrap());
        // Every bin of a subtree lies between its leftmost and rightmost leaf.
        prop_assert!(b.base_left() <= b && b <= b.base_right());
    }

    #[test]
    fn family_relations(b in bin()) {
        if let Some(p) = b.parent() {
            prop_assert_eq!(p.layer(), b.layer() + 1);
            prop_assert!(p.contains(b));
            let (l, r) = p.children().unwrap();
            prop_assert!(l == b || r == b);
            let s = b.sibling().unwrap();
            prop_assert_eq!(s.parent(), Some(p));
            prop_assert_ne!(s, b);
            prop_assert_eq!(b.is_left(), l == b);
            // Siblings cover adjacent halves of the parent.
            let (lc, rc) = (l.chunks().unwrap(), r.chunks().unwrap());
            prop_assert_eq!(lc.last().get() + 1, rc.first().get());
            prop_assert_eq!(p.chunks(), ChunkRange::new(lc.first(), rc.last()));
        } else {
            prop_assert_eq!(b, Bin::ALL);
        }
        if let Some((l, r)) = b.children() {
            prop_assert_eq!(l.parent(), Some(b));
            prop_assert_eq!(r.parent(), Some(b));
            prop_assert_eq!(l.sibling(), Some(r));
        } else {
            prop_assert!(b.is_leaf());
        }
    }

    #[test]
    fn containment_matches_chunk_ranges(a in bin(), b in bin()) {
        let (ra, rb) = (a.chunks().unwrap(), b.chunks().unwrap());
        let covers = ra.first() <= rb.first() && rb.last() <= ra.last();
        prop_assert_eq!(a.contains(b), covers);
        prop_assert_eq!(a.contains_chunk(rb.first()), ra.contains(rb.first()));
        if covers {
            prop_assert_eq!(b.ancestor_at(a.layer()), Some(a));
        }
    }

    #[test]
    fn decomposition_is_exact_and_minimal(r in chunk_range(MAX_CHUNK_INDEX)) {
        let bins: Vec<Bin> = r.bins().collect();
        // Contiguous, in order, covering exactly the range.
        let mut next = r.first().get();
        for b in &bins {
            let c = b.chunks().unwrap();
            prop_assert_eq!(c.first().get(), next);
            next = c.last().get().wrapping_add(1);
        }
        prop_assert_eq!(bins.last().unwrap().chunks().unwrap().last(), r.last());
        // Never two siblings side by side (they would merge into their parent),
        // and at most two bins per layer.
        for w in bins.windows(2) {
            prop_assert_ne!(w[0].sibling(), Some(w[1]));
        }
        prop_assert!(bins.len() <= 2 * 64);
    }

    #[test]
    fn decomposition_matches_brute_force(r in chunk_range(300)) {
        let bins = r.bins().count();
        prop_assert_eq!(bins, fewest_bins_brute_force(r.first().get(), r.last().get()));
    }

    #[test]
    fn chunk_byte_round_trip(r in chunk_range(1 << 40), cs in 1u64..=32768, tail in 0u64..32768) {
        let cs = ChunkSize::new(cs).unwrap();
        // Content that reaches at least into the range's last chunk.
        let content_len = r.last().get() * cs.bytes_u64() + 1 + tail % cs.bytes_u64();
        let bytes = r.to_bytes(cs, content_len).unwrap();
        prop_assert_eq!(bytes.first(), r.first().get() * cs.bytes_u64());
        prop_assert!(bytes.last() < content_len);
        prop_assert_eq!(bytes.to_chunks(cs), Some(r));
        // Any byte range maps to the chunks holding its ends.
        let b = ByteRange::new(bytes.first() + tail % 7, bytes.last());
        if let Some(b) = b {
            let c = b.to_chunks(cs).unwrap();
            prop_assert_eq!(c.first(), ChunkIndex(b.first() / cs.bytes_u64()));
            prop_assert_eq!(c.last(), ChunkIndex(b.last() / cs.bytes_u64()));
        }
    }

    #[test]
    fn thirty_two_bit_forms_round_trip(v in any::<u32>()) {
        let b = Bin::from_u32(v);
        prop_assert_eq!(b.to_u32(), Some(v));
    }
}
