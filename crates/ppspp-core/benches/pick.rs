//! Picker benchmarks over 10^6 chunks: one pick of 64 chunks from a peer
//! that has a coin-flip half of the content, in a swarm of 200 such peers
//! (availability ≈ 100 ± 7 per chunk, runs averaging two chunks) — with
//! nothing downloaded yet, with a quarter downloaded (as fragmented, and
//! marked in the availability) and a few hundred chunks in flight, and the
//! same with the content size unknown. The same again for peers holding
//! long runs (1 ..= 1024 chunks), as peers that download in long requests
//! do. Also the bookkeeping cost of counting one coin-flip peer's chunks.
//!
//! Run: `cargo bench -p ppspp-core --bench pick`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use ppspp_core::pick::availability::Availability;
use ppspp_core::pick::{PickView, Picker, RarestFirst, Sequential};
use ppspp_core::time::Instant;
use ppspp_core::{Binmap, ChunkIndex, ChunkRange};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};

const N: u64 = 1_000_000;
const PEERS: usize = 200;
const BUDGET: u64 = 64;

/// The runs of a coin-flip subset of `0..N` holding each chunk with
/// probability `p`.
fn coin_runs(rng: &mut Xoshiro256PlusPlus, p: f64) -> Vec<ChunkRange> {
    let mut runs = Vec::new();
    let mut open: Option<u64> = None;
    for i in 0..N {
        match (rng.random_bool(p), open) {
            (true, None) => open = Some(i),
            (false, Some(first)) => {
                runs.extend(ChunkRange::new(first, i - 1));
                open = None;
            }
            _ => {}
        }
    }
    runs.extend(open.and_then(|first| ChunkRange::new(first, N - 1)));
    runs
}

/// The runs of a subset of `0..N` alternating held stretches of 1 ..= 1024
/// chunks with missing ones sized to hold about a fraction `p`: peers that
/// downloaded in long requests.
fn long_runs(rng: &mut Xoshiro256PlusPlus, p: f64) -> Vec<ChunkRange> {
    let max_gap = (1024.0 * (1.0 - p) / p) as u64;
    let mut runs = Vec::new();
    let mut at = rng.random_range(0..=max_gap);
    while at < N {
        let len = rng.random_range(1..=1024u64).min(N - at);
        runs.extend(ChunkRange::with_len(at, len));
        at += len + rng.random_range(1..=max_gap);
    }
    runs
}

/// How a swarm's peers hold chunks: the runs of a subset of `0..N` holding
/// about a fraction `p` of them.
type Layout = fn(&mut Xoshiro256PlusPlus, f64) -> Vec<ChunkRange>;

struct Swarm {
    availability: Availability,
    peer_has: Binmap,
    empty: Binmap,
    have: Binmap,
    requested: Binmap,
    from_peer: Binmap,
}

fn swarm(layout: Layout) -> Swarm {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x5eed);
    let mut availability = Availability::new();
    availability.set_chunk_count(N);
    for _ in 1..PEERS {
        availability.add_runs(layout(&mut rng, 0.5));
    }
    let peer_runs = layout(&mut rng, 0.5);
    availability.add_runs(peer_runs.iter().copied());
    let peer_has: Binmap = peer_runs.into_iter().collect();
    let have: Binmap = layout(&mut rng, 0.25).into_iter().collect();
    let mut requested = Binmap::new();
    let mut from_peer = Binmap::new();
    for i in 0..64 {
        let first = rng.random_range(0..N - 8);
        let range = ChunkRange::new(first, first + 7).expect("valid");
        requested.set(range);
        if i % 4 == 0 {
            from_peer.set(range);
        }
    }
    Swarm {
        availability,
        peer_has,
        empty: Binmap::new(),
        have,
        requested,
        from_peer,
    }
}

fn bench_pick(c: &mut Criterion, group: &str, layout: Layout) {
    let s = &swarm(layout);
    let mut marked = s.availability.clone();
    s.have.filled_runs().for_each(|r| marked.mark_taken(r));
    let marked = &marked;
    let mut group = c.benchmark_group(group);
    let fresh_start = PickView {
        now: Instant::ZERO,
        chunk_count: Some(N),
        have: &s.empty,
        requested: &s.empty,
        requested_from_peer: &s.empty,
        peer_has: &s.peer_has,
        late: &s.empty,
        availability: &s.availability,
        peer_counted: true,
        playhead: None,
        live: false,
        dry: None,
        link: ppspp_core::pick::PeerLink::default(),
    };
    let under_way = PickView {
        have: &s.have,
        requested: &s.requested,
        requested_from_peer: &s.from_peer,
        availability: marked,
        peer_counted: true,
        playhead: Some(ChunkIndex(N / 3)),
        dry: None,
        link: ppspp_core::pick::PeerLink::default(),
        ..fresh_start
    };
    let unknown_size = PickView {
        chunk_count: None,
        ..under_way
    };
    let cases = [
        ("nothing_yet", &fresh_start),
        ("quarter_done", &under_way),
        ("size_unknown", &unknown_size),
    ];
    for (name, view) in cases {
        let mut rarest = RarestFirst::new();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut out = Vec::with_capacity(BUDGET as usize);
        group.bench_function(format!("rarest_first/{name}"), |b| {
            b.iter(|| {
                out.clear();
                rarest.pick(view, BUDGET, &mut rng, &mut out);
                black_box(out.len())
            })
        });
        let mut sequential = Sequential::new();
        group.bench_function(format!("sequential/{name}"), |b| {
            b.iter(|| {
                out.clear();
                sequential.pick(view, BUDGET, &mut rng, &mut out);
                black_box(out.len())
            })
        });
    }
    group.finish();
}

fn picks(c: &mut Criterion) {
    bench_pick(c, "pick_64_of_1e6_200_coin_flip_peers", coin_runs);
    bench_pick(c, "pick_64_of_1e6_200_long_run_peers", long_runs);

    let mut group = c.benchmark_group("availability_1e6");
    group.sample_size(10);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
    let runs = coin_runs(&mut rng, 0.5);
    let mut availability = Availability::new();
    availability.set_chunk_count(N);
    group.bench_function("add_and_remove_coin_flip_peer", |b| {
        b.iter(|| {
            availability.add_runs(runs.iter().copied());
            availability.remove_runs(runs.iter().copied());
        })
    });
    group.finish();
}

criterion_group!(benches, picks);
criterion_main!(benches);
