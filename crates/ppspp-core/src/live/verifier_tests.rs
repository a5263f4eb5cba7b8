use super::*;
use crate::live::{LiveInjector, LiveKeyPair, SignatureProfile};
use crate::wire::LiveSignatureAlgorithm;

const T0: u64 = 1_795_737_600_000_000;

fn chunk(i: u64) -> Vec<u8> {
    format!("live chunk {i}").into_bytes()
}

fn key(seed: u8) -> LiveKeyPair {
    LiveKeyPair::from_secret(LiveSignatureAlgorithm::ECDSAP256SHA256, &[seed; 32]).unwrap()
}

fn params(munro: u64, profile: SignatureProfile) -> LiveParams {
    LiveParams {
        munro: MunroSize::new(munro).unwrap(),
        profile,
        ..LiveParams::default()
    }
}

/// An injector that has taken `n` chunks, one per 10 ms.
fn injector(p: LiveParams, n: u64, window: Option<u64>) -> LiveInjector {
    let mut inj = LiveInjector::new(key(1), p, window);
    for i in 0..n {
        inj.push_chunk(&chunk(i), T0 + i * 10_000);
    }
    inj
}

fn verifier(inj: &LiveInjector, window: Option<u64>) -> LiveVerifier {
    let pk = LivePublicKey::from_swarm_id(&inj.swarm_id()).unwrap();
    LiveVerifier::new(pk, inj.params(), true, window)
}

/// What a sender puts before the DATA of `c`: INTEGRITY + SIGNED_INTEGRITY
/// of its munro, then its uncles (RFC 7574 §6.1.2.3).
fn deliver(inj: &LiveInjector, v: &mut LiveVerifier, c: u64) -> Result<(), LiveError> {
    let c = ChunkIndex(c);
    let m = inj.munro_for(c).expect("signed").clone();
    v.offer_hash(m.bin, m.hash);
    v.offer_signed(m.bin, m.timestamp, &m.signature)?;
    for (b, h) in inj.uncles(c, |_| false).unwrap() {
        v.offer_hash(b, h);
    }
    v.verify_chunk(c, &chunk(c.0))
}

#[test]
fn chunks_are_announced_only_under_a_signed_munro() {
    let p = params(4, SignatureProfile::Rfc7574);
    let mut inj = LiveInjector::new(key(1), p, None);
    for i in 0..3 {
        assert!(inj.push_chunk(&chunk(i), T0).is_none());
        assert_eq!(inj.available(), None);
    }
    let m = inj.push_chunk(&chunk(3), T0).cloned().unwrap();
    assert_eq!(m.bin, Bin::new(2, 0).unwrap());
    assert_eq!(inj.available(), ChunkRange::new(0u64, 3u64));
    inj.push_chunk(&chunk(4), T0);
    assert_eq!(
        inj.available(),
        ChunkRange::new(0u64, 3u64),
        "chunk 4 unsigned"
    );
    assert!(inj.munro_for(ChunkIndex(4)).is_none());
}

#[test]
fn every_chunk_verifies_in_any_order_under_both_profiles() {
    for profile in [SignatureProfile::Rfc7574, SignatureProfile::Libswift] {
        let inj = injector(params(8, profile), 64, None);
        let mut v = verifier(&inj, None);
        // Newest munro first, then backwards, odd chunks before even.
        let order = (0..64u64)
            .rev()
            .filter(|c| c % 2 == 1)
            .chain((0..64).filter(|c| c % 2 == 0));
        for c in order {
            deliver(&inj, &mut v, c).unwrap_or_else(|e| panic!("{profile:?} chunk {c}: {e}"));
        }
        assert!((0..64).all(|c| v.has_chunk(ChunkIndex(c))));
        assert_eq!(v.munros_held(), 8);
    }
}

#[test]
fn a_relay_serves_what_it_verified_to_the_next_peer() {
    let inj = injector(params(8, SignatureProfile::Rfc7574), 16, None);
    let mut relay = verifier(&inj, None);
    for c in 0..16 {
        deliver(&inj, &mut relay, c).unwrap();
    }
    let mut next = verifier(&inj, None);
    for c in [13u64, 2, 7] {
        let c = ChunkIndex(c);
        let m = relay.munro_for(c).unwrap().clone();
        next.offer_hash(m.bin, m.hash);
        next.offer_signed(m.bin, m.timestamp, &m.signature).unwrap();
        for (b, h) in relay.uncles(c, |_| false).unwrap() {
            next.offer_hash(b, h);
        }
        next.verify_chunk(c, &chunk(c.0)).unwrap();
    }
}

#[test]
fn forged_signatures_hashes_and_chunks_are_refused() {
    let inj = injector(params(4, SignatureProfile::Rfc7574), 8, None);
    let m = inj.munro_for(ChunkIndex(0)).unwrap().clone();
    let mut v = verifier(&inj, None);
    // A signature by another key.
    let forger = key(2);
    let p = inj.params();
    let bytes = p
        .profile
        .signed_bytes(m.bin, p.addressing, m.timestamp, &m.hash);
    v.offer_hash(m.bin, m.hash);
    assert_eq!(
        v.offer_signed(m.bin, m.timestamp, &forger.sign(&bytes)),
        Err(LiveError::BadSignature(m.bin))
    );
    // The true signature over another hash, timestamp or position.
    v.offer_hash(m.bin, Hash::from_slice(&[9; 20]));
    assert_eq!(
        v.offer_signed(m.bin, m.timestamp, &m.signature),
        Err(LiveError::BadSignature(m.bin))
    );
    v.offer_hash(m.bin, m.hash);
    assert_eq!(
        v.offer_signed(m.bin, NtpTimestamp(m.timestamp.0 + 1), &m.signature),
        Err(LiveError::BadSignature(m.bin)),
        "the RFC profile signs the timestamp"
    );
    let moved = Bin::new(2, 1).unwrap();
    v.offer_hash(moved, m.hash);
    assert_eq!(
        v.offer_signed(moved, m.timestamp, &m.signature),
        Err(LiveError::BadSignature(moved)),
        "the RFC profile signs the position"
    );
    // No munro hash just before.
    v.offer_hash(m.bin, m.hash);
    v.offer_hash(Bin::new(0, 1).unwrap(), m.hash);
    assert_eq!(
        v.offer_signed(m.bin, m.timestamp, &m.signature),
        Err(LiveError::NoMunroHash(m.bin))
    );
    assert_eq!(v.munros_held(), 0);
    // A chunk under no trusted munro, then a forged chunk.
    assert_eq!(
        v.verify_chunk(ChunkIndex(1), &chunk(1)),
        Err(LiveError::NoMunro(ChunkIndex(1)))
    );
    v.offer_hash(m.bin, m.hash);
    assert_eq!(
        v.offer_signed(m.bin, m.timestamp, &m.signature),
        Ok(MunroVerdict::New)
    );
    assert_eq!(
        v.offer_signed(m.bin, m.timestamp, &m.signature),
        Ok(MunroVerdict::Known)
    );
    for (b, h) in inj.uncles(ChunkIndex(1), |_| false).unwrap() {
        v.offer_hash(b, h);
    }
    let err = v.verify_chunk(ChunkIndex(1), b"not chunk 1").unwrap_err();
    assert_eq!(err, LiveError::Mismatch(ChunkIndex(1)));
    assert!(err.is_forgery());
    assert!(!v.has_chunk(ChunkIndex(1)));
    // A munro of the wrong size.
    let wide = Bin::new(3, 0).unwrap();
    v.offer_hash(wide, m.hash);
    assert_eq!(
        v.offer_signed(wide, m.timestamp, &m.signature),
        Err(LiveError::WrongMunroSize(wide))
    );
}

#[test]
fn the_libswift_profile_signs_the_hash_alone() {
    let inj = injector(params(4, SignatureProfile::Libswift), 4, None);
    let m = inj.munro_for(ChunkIndex(0)).unwrap().clone();
    assert_eq!(
        m.timestamp,
        NtpTimestamp(T0 + 30_000),
        "Unix µs of the 4th chunk"
    );
    let pk = LivePublicKey::from_swarm_id(&inj.swarm_id()).unwrap();
    assert!(pk.verify(m.hash.as_bytes(), &m.signature));
    let mut v = verifier(&inj, None);
    v.offer_hash(m.bin, m.hash);
    assert_eq!(
        v.offer_signed(m.bin, NtpTimestamp(7), &m.signature),
        Ok(MunroVerdict::New),
        "the timestamp is not signed"
    );
}

#[test]
fn munros_older_than_the_window_are_refused_and_memory_stays_bounded() {
    // Munros of 4 chunks, a window of 12 chunks: 3 munros.
    let p = params(4, SignatureProfile::Rfc7574);
    let mut inj = LiveInjector::new(key(1), p, Some(12));
    let mut v = verifier(&inj, Some(12));
    let mut first_munro = None;
    for i in 0..1_200u64 {
        if let Some(m) = inj.push_chunk(&chunk(i), T0 + i).cloned() {
            first_munro.get_or_insert_with(|| m.clone());
            v.offer_hash(m.bin, m.hash);
            v.offer_signed(m.bin, m.timestamp, &m.signature).unwrap();
            assert!(v.munros_held() <= 3);
            assert!(inj.available().unwrap().len() <= 12);
        }
    }
    assert_eq!(v.munros_held(), 3);
    assert_eq!(v.window_start(), Some(ChunkIndex(1_200 - 12)));
    assert_eq!(v.trusted_span(), ChunkRange::new(1_188u64, 1_199u64));
    // A peer feeding the first munro again: refused, not stored.
    let old = first_munro.unwrap();
    v.offer_hash(old.bin, old.hash);
    assert_eq!(
        v.offer_signed(old.bin, old.timestamp, &old.signature),
        Err(LiveError::OutsideWindow(old.bin))
    );
    assert_eq!(v.munros_held(), 3);
    // The injector no longer serves it either.
    assert!(inj.munro_for(ChunkIndex(0)).is_none());
    assert!(inj.uncles(ChunkIndex(0), |_| false).is_none());
}

#[test]
fn a_joining_viewer_hooks_in_near_the_newest_munro() {
    let inj = injector(params(4, SignatureProfile::Rfc7574), 40, None);
    let mut v = verifier(&inj, None);
    assert_eq!(v.hook_in(0), None);
    let newest = inj.newest().unwrap().clone();
    v.offer_hash(newest.bin, newest.hash);
    v.offer_signed(newest.bin, newest.timestamp, &newest.signature)
        .unwrap();
    assert_eq!(v.hook_in(0), Some(ChunkIndex(36)));
    assert_eq!(
        v.hook_in(2),
        Some(ChunkIndex(36)),
        "no older munro known yet"
    );
    let older = inj.munro_for(ChunkIndex(28)).unwrap().clone();
    v.offer_hash(older.bin, older.hash);
    v.offer_signed(older.bin, older.timestamp, &older.signature)
        .unwrap();
    assert_eq!(v.hook_in(2), Some(ChunkIndex(28)));
}

#[test]
fn the_munro_size_is_learned_from_the_first_verified_munro() {
    let inj = injector(params(16, SignatureProfile::Libswift), 32, None);
    let pk = LivePublicKey::from_swarm_id(&inj.swarm_id()).unwrap();
    // Told 32 (libswift's default) but not sure: learns 16.
    let mut v = LiveVerifier::new(
        pk,
        LiveParams {
            profile: SignatureProfile::Libswift,
            ..LiveParams::default()
        },
        false,
        None,
    );
    let m = inj.munro_for(ChunkIndex(20)).unwrap().clone();
    // A forged wider munro does not teach a size.
    let wide = Bin::new(5, 0).unwrap();
    v.offer_hash(wide, m.hash);
    assert_eq!(
        v.offer_signed(wide, m.timestamp, &[0; 64]),
        Err(LiveError::BadSignature(wide))
    );
    v.offer_hash(m.bin, m.hash);
    v.offer_signed(m.bin, m.timestamp, &m.signature).unwrap();
    assert_eq!(v.params().munro, MunroSize::new(16).unwrap());
    for (b, h) in inj.uncles(ChunkIndex(20), |_| false).unwrap() {
        v.offer_hash(b, h);
    }
    v.verify_chunk(ChunkIndex(20), &chunk(20)).unwrap();
}
