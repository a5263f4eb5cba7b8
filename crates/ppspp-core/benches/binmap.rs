//! Binmap benchmarks over 10^6 chunks: filling one chunk at a time
//! (sequentially and at random) and the difference query that picks what to
//! request from a peer, on fragmented and on contiguous binmaps.
//!
//! Run: `cargo bench -p ppspp-core --bench binmap`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use ppspp_core::{Binmap, ChunkIndex, ChunkRange};

const N: u64 = 1_000_000;

/// A tiny seeded xorshift generator: reproducible inputs without `rand`.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// About half of the chunks `0..N`, each chosen by a coin flip: the worst
/// fragmentation a binmap is likely to meet (runs average two chunks).
fn fragmented(seed: u64) -> Binmap {
    let mut rng = XorShift(seed);
    let mut map = Binmap::new();
    for i in 0..N {
        if rng.next() & 1 == 1 {
            map.set_chunk(ChunkIndex(i));
        }
    }
    map
}

fn contiguous(first: u64, last: u64) -> Binmap {
    let mut map = Binmap::new();
    map.set(ChunkRange::new(first, last).expect("valid range"));
    map
}

fn fill(c: &mut Criterion) {
    let mut group = c.benchmark_group("binmap_fill_1e6");
    group.sample_size(20);
    group.bench_function("sequential_set_chunk", |b| {
        b.iter(|| {
            let mut map = Binmap::new();
            for i in 0..N {
                map.set_chunk(ChunkIndex(i));
            }
            black_box(map.count())
        })
    });
    let mut rng = XorShift(0x2545_F491_4F6C_DD1D);
    let order: Vec<u64> = (0..N).map(|_| rng.next() % N).collect();
    group.bench_function("random_set_chunk", |b| {
        b.iter(|| {
            let mut map = Binmap::new();
            for &i in &order {
                map.set_chunk(ChunkIndex(i));
            }
            black_box(map.count())
        })
    });
    group.finish();
}

fn difference(c: &mut Criterion) {
    let (a, b) = (
        fragmented(0x9E37_79B9_7F4A_7C15),
        fragmented(0xD1B5_4A32_D192_ED03),
    );
    eprintln!(
        "fragmented binmap: {} chunks of {N} filled, {} heap bytes (a bitset needs {} bytes)",
        a.count(),
        a.heap_bytes(),
        N / 8
    );
    let mut group = c.benchmark_group("binmap_difference_1e6");
    group.sample_size(20);
    group.bench_function("fragmented_runs", |bench| {
        bench.iter(|| black_box(a.difference_runs(&b).count()))
    });
    group.bench_function("fragmented_first_from_middle", |bench| {
        bench.iter(|| black_box(a.first_in_difference(&b, ChunkIndex(black_box(N / 2)))))
    });
    let (x, y) = (contiguous(0, N / 2 - 1), contiguous(N / 4, 3 * N / 4 - 1));
    group.bench_function("contiguous_runs", |bench| {
        bench.iter(|| black_box(x.difference_runs(&y).count()))
    });
    group.bench_function("contiguous_first_from_middle", |bench| {
        bench.iter(|| black_box(y.first_in_difference(&x, ChunkIndex(black_box(N / 2)))))
    });
    group.finish();
}

criterion_group!(benches, fill, difference);
criterion_main!(benches);
