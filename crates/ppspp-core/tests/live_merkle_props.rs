//! Property tests of live integrity (RFC 7574 §6.1.2): over any munro
//! size, stream length, delivery order and signature profile, every chunk
//! the injector signed verifies at a receiver fed the injector's hashes;
//! a corrupted chunk or uncle never verifies and does not poison the
//! receiver; a receiver's munro book stays within its discard window.

use ppspp_core::bin::Bin;
use ppspp_core::live::{
    LiveInjector, LiveKeyPair, LiveParams, LivePublicKey, LiveVerifier, MunroSize, SignatureProfile,
};
use ppspp_core::wire::LiveSignatureAlgorithm;
use ppspp_core::ChunkIndex;
use proptest::prelude::*;

fn chunk(i: u64, salt: u8) -> Vec<u8> {
    let mut c = format!("chunk {i} ").into_bytes();
    c.resize(16 + (i % 7) as usize, salt);
    c
}

fn setup(munro_layer: u32, n: u64, profile: SignatureProfile) -> (LiveInjector, LiveVerifier) {
    let key = LiveKeyPair::from_secret(LiveSignatureAlgorithm::ED25519, &[3; 32]).unwrap();
    let params = LiveParams {
        munro: MunroSize::new(1 << munro_layer).unwrap(),
        profile,
        ..LiveParams::default()
    };
    let mut inj = LiveInjector::new(key, params, None);
    for i in 0..n {
        inj.push_chunk(&chunk(i, 0), 1_000 + i);
    }
    let pk = LivePublicKey::from_swarm_id(&inj.swarm_id()).unwrap();
    let v = LiveVerifier::new(pk, params, true, None);
    (inj, v)
}

/// INTEGRITY + SIGNED_INTEGRITY of the munro, then the uncles.
fn send_hashes(inj: &LiveInjector, v: &mut LiveVerifier, c: ChunkIndex, bad_uncle: Option<usize>) {
    let m = inj.munro_for(c).unwrap().clone();
    v.offer_hash(m.bin, m.hash);
    v.offer_signed(m.bin, m.timestamp, &m.signature).unwrap();
    let uncles = inj.uncles(c, |_| false).unwrap();
    for (i, (b, h)) in uncles.into_iter().enumerate() {
        let h = if bad_uncle == Some(i) {
            ppspp_core::HashFunction::Sha1.digest(b"forged uncle")
        } else {
            h
        };
        v.offer_hash(b, h);
    }
}

fn profile() -> impl Strategy<Value = SignatureProfile> {
    prop_oneof![
        Just(SignatureProfile::Rfc7574),
        Just(SignatureProfile::Libswift)
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_signed_chunk_verifies_in_any_order(
        layer in 0u32..6,
        n in 1u64..200,
        profile in profile(),
        seed in any::<u64>(),
    ) {
        let (inj, mut v) = setup(layer, n, profile);
        let signed = inj.available().map_or(0, |r| r.len());
        prop_assert_eq!(signed, n / (1 << layer) * (1 << layer));
        let mut order: Vec<u64> = (0..signed).collect();
        // A seeded shuffle (Fisher–Yates with a splitmix step).
        let mut s = seed;
        for i in (1..order.len()).rev() {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let j = ((s ^ (s >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9) % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        for c in order {
            let c = ChunkIndex(c);
            send_hashes(&inj, &mut v, c, None);
            prop_assert!(v.verify_chunk(c, &chunk(c.0, 0)).is_ok(), "chunk {}", c.0);
        }
        for c in 0..signed {
            prop_assert!(v.has_chunk(ChunkIndex(c)));
        }
        // Unsigned chunks at the end are beyond the live edge.
        if signed < n {
            prop_assert!(v.verify_chunk(ChunkIndex(signed), &chunk(signed, 0)).is_err());
        }
    }

    #[test]
    fn corruption_never_verifies_and_never_poisons(
        layer in 1u32..6,
        munros in 1u64..4,
        pick in any::<u64>(),
        bad_uncle in any::<usize>(),
        corrupt_chunk in any::<bool>(),
        profile in profile(),
    ) {
        let n = munros << layer;
        let (inj, mut v) = setup(layer, n, profile);
        let c = ChunkIndex(pick % n);
        let bad_uncle = (!corrupt_chunk).then_some(bad_uncle % layer as usize);
        send_hashes(&inj, &mut v, c, bad_uncle);
        let data = if corrupt_chunk { chunk(c.0, 1) } else { chunk(c.0, 0) };
        let err = v.verify_chunk(c, &data).unwrap_err();
        prop_assert!(err.is_forgery(), "{err}");
        prop_assert!(!v.has_chunk(c));
        // The true hashes and chunk then verify.
        send_hashes(&inj, &mut v, c, None);
        prop_assert!(v.verify_chunk(c, &chunk(c.0, 0)).is_ok());
    }

    #[test]
    fn the_munro_book_stays_within_the_window(
        layer in 0u32..4,
        window in 1u64..40,
        n in 1u64..400,
    ) {
        let key = LiveKeyPair::from_secret(LiveSignatureAlgorithm::ED25519, &[4; 32]).unwrap();
        let params = LiveParams {
            munro: MunroSize::new(1 << layer).unwrap(),
            ..LiveParams::default()
        };
        let mut inj = LiveInjector::new(key, params, Some(window));
        let pk = LivePublicKey::from_swarm_id(&inj.swarm_id()).unwrap();
        let mut v = LiveVerifier::new(pk, params, true, Some(window));
        let keep = window.div_ceil(1 << layer) as usize;
        let mut seen: Vec<(Bin, ppspp_core::Hash, ppspp_core::wire::NtpTimestamp, Vec<u8>)> = Vec::new();
        for i in 0..n {
            if let Some(m) = inj.push_chunk(&chunk(i, 0), i).cloned() {
                v.offer_hash(m.bin, m.hash);
                v.offer_signed(m.bin, m.timestamp, &m.signature).unwrap();
                seen.push((m.bin, m.hash, m.timestamp, m.signature));
            }
            prop_assert!(v.munros_held() <= keep);
        }
        // Replaying every munro seen: those out of the window are refused.
        for (bin, hash, ts, sig) in seen {
            v.offer_hash(bin, hash);
            let _ = v.offer_signed(bin, ts, &sig);
            prop_assert!(v.munros_held() <= keep);
        }
    }
}
