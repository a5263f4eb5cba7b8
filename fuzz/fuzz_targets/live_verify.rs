//! Fuzz a live receiver (RFC 7574 §6.1.2) with hostile munros, signatures,
//! uncles and chunks mixed with the injector's true ones: nothing may
//! panic, no forged chunk may verify, and the munro book never outgrows
//! the discard window.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ppspp_core::bin::Bin;
use ppspp_core::live::{
    LiveInjector, LiveKeyPair, LiveParams, LivePublicKey, LiveVerifier, MunroSize,
    SignatureProfile,
};
use ppspp_core::wire::{LiveSignatureAlgorithm, NtpTimestamp};
use ppspp_core::{ChunkIndex, HashFunction};

/// Reads operations from the fuzz input.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> u8 {
        let Some((&b, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        b
    }
    fn u64(&mut self) -> u64 {
        let mut v = 0u64;
        for _ in 0..8 {
            v = v << 8 | u64::from(self.byte());
        }
        v
    }
}

fn chunk(i: u64) -> Vec<u8> {
    format!("live {i}").into_bytes()
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let mode = input.byte();
    let layer = u32::from(mode % 4);
    let profile = if mode & 0x10 != 0 {
        SignatureProfile::Libswift
    } else {
        SignatureProfile::Rfc7574
    };
    let window = u64::from(input.byte() % 64) + 1;
    let params = LiveParams {
        munro: MunroSize::new(1 << layer).unwrap(),
        profile,
        ..LiveParams::default()
    };
    let key = LiveKeyPair::from_secret(LiveSignatureAlgorithm::ED25519, &[5; 32]).unwrap();
    let mut inj = LiveInjector::new(key, params, None);
    let total = 64u64;
    for i in 0..total {
        inj.push_chunk(&chunk(i), 1_000 + i);
    }
    let pk = LivePublicKey::from_swarm_id(&inj.swarm_id()).unwrap();
    let mut v = LiveVerifier::new(pk, params, mode & 0x20 != 0, Some(window));
    let keep = window.div_ceil(1 << layer) as usize;
    let hf = HashFunction::Sha1;
    while !input.0.is_empty() {
        match input.byte() % 6 {
            // The true munro of some chunk, with its signature.
            0 => {
                let c = ChunkIndex(u64::from(input.byte()) % total);
                if let Some(m) = inj.munro_for(c).cloned() {
                    v.offer_hash(m.bin, m.hash);
                    let _ = v.offer_signed(m.bin, m.timestamp, &m.signature);
                }
            }
            // A forged INTEGRITY for any bin.
            1 => {
                let bin = Bin(input.u64());
                v.offer_hash(bin, hf.digest(&[input.byte()]));
            }
            // A forged SIGNED_INTEGRITY: any bin, timestamp, signature.
            2 => {
                let bin = Bin(input.u64());
                let ts = NtpTimestamp(input.u64());
                let len = usize::from(input.byte() % 80);
                let sig: Vec<u8> = (0..len).map(|_| input.byte()).collect();
                let _ = v.offer_signed(bin, ts, &sig);
            }
            // The true uncles of a chunk.
            3 => {
                let c = ChunkIndex(u64::from(input.byte()) % total);
                for (b, h) in inj.uncles(c, |_| false).unwrap_or_default() {
                    v.offer_hash(b, h);
                }
            }
            // The true chunk.
            4 => {
                let c = ChunkIndex(u64::from(input.byte()) % total);
                let _ = v.verify_chunk(c, &chunk(c.0));
            }
            // A forged chunk at any index: must never verify.
            _ => {
                let c = ChunkIndex(input.u64());
                let fake = vec![input.byte(); usize::from(input.byte() % 12)];
                let ok = v.verify_chunk(c, &fake).is_ok();
                assert!(!ok || fake == chunk(c.0), "forged chunk {} verified", c.0);
            }
        }
        assert!(v.munros_held() <= keep, "{} munros held", v.munros_held());
    }
});
