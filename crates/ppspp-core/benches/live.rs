//! The CPU cost of live integrity per munro of 32 one-KiB chunks (32 KiB
//! of stream), for the two signature algorithms and the two methods: the
//! injector's unified Merkle tree (hash 32 chunks, build the subtree, sign
//! the munro once), a receiver's check of it (verify the signature, climb
//! 32 chunks), and Sign All (a signature per chunk). At 4 Mbit/s a source
//! makes ~15 munros a second: the figures say what share of a core that is
//! (issue 24's goal: a source under 10 % of a core).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ppspp_core::live::{
    sign_all, LiveInjector, LiveKeyPair, LiveParams, LivePublicKey, LiveVerifier,
};
use ppspp_core::wire::{ChunkAddressing, LiveSignatureAlgorithm};
use ppspp_core::ChunkIndex;

const MUNRO: u64 = 32;

fn chunks() -> Vec<Vec<u8>> {
    (0..MUNRO)
        .map(|i| (0..1024u64).map(|b| (b * 7 + i) as u8).collect())
        .collect()
}

fn bench_live(c: &mut Criterion) {
    let data = chunks();
    let mut g = c.benchmark_group("live_munro_32x1KiB");
    g.throughput(Throughput::Bytes(MUNRO * 1024));
    for (name, alg) in [
        ("p256", LiveSignatureAlgorithm::ECDSAP256SHA256),
        ("ed25519", LiveSignatureAlgorithm::ED25519),
    ] {
        let key = LiveKeyPair::from_secret(alg, &[7; 32]).unwrap();
        g.bench_function(format!("inject_{name}"), |b| {
            b.iter(|| {
                let mut inj = LiveInjector::new(key.clone(), LiveParams::default(), Some(64));
                for (i, d) in data.iter().enumerate() {
                    black_box(inj.push_chunk(d, i as u64));
                }
            })
        });
        let mut inj = LiveInjector::new(key.clone(), LiveParams::default(), None);
        for (i, d) in data.iter().enumerate() {
            inj.push_chunk(d, i as u64);
        }
        let m = inj.newest().unwrap().clone();
        let uncles: Vec<_> = (0..MUNRO)
            .map(|i| inj.uncles(ChunkIndex(i), |_| false).unwrap())
            .collect();
        let pk = LivePublicKey::from_swarm_id(&inj.swarm_id()).unwrap();
        g.bench_function(format!("receive_{name}"), |b| {
            b.iter(|| {
                let mut v = LiveVerifier::new(pk, LiveParams::default(), true, None);
                v.offer_hash(m.bin, m.hash);
                v.offer_signed(m.bin, m.timestamp, &m.signature).unwrap();
                for (i, d) in data.iter().enumerate() {
                    for &(bin, h) in &uncles[i] {
                        v.offer_hash(bin, h);
                    }
                    v.verify_chunk(ChunkIndex(i as u64), d).unwrap();
                }
            })
        });
        g.bench_function(format!("sign_all_{name}"), |b| {
            b.iter(|| {
                for (i, d) in data.iter().enumerate() {
                    black_box(sign_all::sign_chunk(
                        &key,
                        ChunkIndex(i as u64),
                        ChunkAddressing::ChunkRanges32,
                        0,
                        d,
                    ));
                }
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_live);
criterion_main!(benches);
