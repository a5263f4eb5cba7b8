//! Cost of the wire codec on a typical data datagram (ACK + INTEGRITY +
//! DATA of 1 KiB), next to the SHA-1 of that 1 KiB chunk which the receiver
//! must compute anyway. The codec must not be a visible cost beside it.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ppspp_core::wire::{
    decode_datagram, ChannelId, ChunkSpec, DatagramWriter, DelaySample, Message, SwarmParams,
    Timestamp,
};
use ppspp_core::{ChunkRange, HashFunction};

fn typical(payload: &[u8]) -> [Message<'_>; 3] {
    let chunk = |i: u64| ChunkSpec::Chunks(ChunkRange::single(i).unwrap());
    [
        Message::Ack {
            spec: chunk(40),
            delay: DelaySample(12_345),
        },
        Message::Integrity {
            spec: chunk(43),
            hash: HashFunction::Sha1.digest(b"uncle"),
        },
        Message::Data {
            spec: chunk(42),
            timestamp: Timestamp(1_700_000_000_000_000),
            payload,
        },
    ]
}

fn encode(msgs: &[Message<'_>], params: SwarmParams, buf: &mut [u8]) -> usize {
    let mut w = DatagramWriter::new(buf, ChannelId(0x2e4e_2bc4), params).unwrap();
    for m in msgs {
        w.push(m).unwrap();
    }
    w.finish()
}

fn codec(c: &mut Criterion) {
    let params = SwarmParams::default();
    let payload: Vec<u8> = (0..1024u32).map(|i| (i % 251) as u8).collect();
    let msgs = typical(&payload);
    let mut buf = [0u8; 1500];
    let len = encode(&msgs, params, &mut buf);
    let datagram = buf[..len].to_vec();

    let mut group = c.benchmark_group("data_datagram");
    group.throughput(Throughput::Elements(1));
    group.bench_function("encode", |b| {
        let mut out = [0u8; 1500];
        b.iter(|| encode(black_box(&msgs), params, &mut out))
    });
    group.bench_function("decode", |b| {
        b.iter(|| {
            let (_, messages) = decode_datagram(black_box(&datagram), params).unwrap();
            messages.fold(0usize, |n, m| n + usize::from(m.is_ok()))
        })
    });
    group.bench_function("decode+encode", |b| {
        let mut out = [0u8; 1500];
        b.iter(|| {
            let (ch, messages) = decode_datagram(black_box(&datagram), params).unwrap();
            let mut w = DatagramWriter::new(&mut out, ch, params).unwrap();
            for m in messages {
                w.push(&m.unwrap()).unwrap();
            }
            w.finish()
        })
    });
    group.bench_function("sha1_1KiB", |b| {
        b.iter(|| HashFunction::Sha1.digest(black_box(&payload)))
    });
    group.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
