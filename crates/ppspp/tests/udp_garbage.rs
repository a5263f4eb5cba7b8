//! Garbage datagrams at a running seeder — random bytes, truncated
//! messages, bogus handshakes, out-of-range requests, huge counts — while a
//! leecher downloads: the seeder keeps serving it correctly.

mod common;

use std::net::UdpSocket;
use std::time::Duration;

use common::*;
use ppspp_core::wire::{
    ChannelId, ChunkAddressing, ChunkSpec, DatagramWriter, HandshakeOptions, Message, SwarmParams,
};
use ppspp_core::{Bin, ChunkRange, Hash};

fn datagram(dst: ChannelId, params: SwarmParams, msgs: &[Message<'_>]) -> Vec<u8> {
    let mut buf = vec![0u8; 2048];
    let mut w = DatagramWriter::new(&mut buf, dst, params).unwrap();
    for m in msgs {
        w.push(m).unwrap();
    }
    let n = w.finish();
    buf.truncate(n);
    buf
}

#[test]
fn seeder_survives_garbage_and_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(4_000_000, 3);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--upload-limit", "4MB/s"]);
    let out = dir.path().join("out");
    let st = dir.path().join("stats.json");
    let leecher = spawn_get(&seeder.url, &out, &["--stats-json", st.to_str().unwrap()]);

    let root_hex = seeder.id();
    let root = Hash::from_hex(&root_hex).unwrap();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.connect(seeder.addr()).unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let params = SwarmParams::default();

    // 1. Random bytes of every length, some starting like a handshake.
    let mut x = 0x9e3779b97f4a7c15u64;
    for i in 0..20_000usize {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let len = (x % 1500) as usize;
        let mut d = random_bytes(len, x);
        if i % 3 == 0 && len >= 5 {
            d[..4].copy_from_slice(&[0, 0, 0, 0]);
            d[4] = (i % 14) as u8;
        }
        let _ = sock.send(&d);
    }

    // 2. A real handshake, then abuse on the channel it opens.
    let options = HandshakeOptions {
        version: Some(1),
        min_version: Some(1),
        swarm_id: Some(root.as_bytes()),
        addressing: Some(ChunkAddressing::ChunkRanges32),
        ..HandshakeOptions::default()
    };
    sock.send(&datagram(
        ChannelId::ZERO,
        params,
        &[Message::Handshake {
            source: ChannelId(0xabcd),
            options,
        }],
    ))
    .unwrap();
    let mut buf = [0u8; 65536];
    let n = loop {
        match sock.recv(&mut buf) {
            Ok(n) if n >= 9 && buf[..4] == [0, 0, 0xab, 0xcd] && buf[4] == 0 => break n,
            Ok(_) => continue,
            Err(e) => panic!("no handshake answer: {e}"),
        }
    };
    assert!(n >= 9);
    let theirs = ChannelId(u32::from_be_bytes([buf[5], buf[6], buf[7], buf[8]]));
    let chunks = |a: u64, b: u64| ChunkSpec::Chunks(ChunkRange::new(a, b).unwrap());
    let abuse = [
        vec![Message::Request(chunks(0, u64::from(u32::MAX)))],
        vec![Message::Request(chunks(1 << 20, (1 << 20) + 5))],
        vec![Message::Request(chunks(
            u64::from(u32::MAX),
            u64::from(u32::MAX),
        ))],
        vec![Message::Have(chunks(0, u64::from(u32::MAX)))],
        vec![Message::Cancel(chunks(7, 1 << 30))],
        vec![Message::Ack {
            spec: chunks(0, u64::from(u32::MAX)),
            delay: ppspp_core::wire::DelaySample(i64::MIN),
        }],
        vec![Message::Integrity {
            spec: chunks(0, 1),
            hash: Hash::zero(20),
        }],
        vec![
            Message::PexReq,
            Message::PexReq,
            Message::Choke,
            Message::Unchoke,
        ],
    ];
    for _ in 0..200 {
        for msgs in &abuse {
            let _ = sock.send(&datagram(theirs, params, msgs));
        }
    }
    // Truncated messages on the open channel.
    let full = datagram(theirs, params, &[Message::Request(chunks(0, 3))]);
    for cut in 4..full.len() {
        let _ = sock.send(&full[..cut]);
    }
    // A bin-addressed channel asking for everything.
    let bins = HandshakeOptions {
        addressing: Some(ChunkAddressing::Bins32),
        ..options
    };
    let _ = sock.send(&datagram(
        ChannelId::ZERO,
        params,
        &[
            Message::Handshake {
                source: ChannelId(0x1234),
                options: bins,
            },
            Message::Request(ChunkSpec::Bin(Bin::from_u32(0x7FFF_FFFF))),
        ],
    ));

    // The leecher still gets the exact file.
    let mut leecher = leecher;
    let status = leecher.0.wait().unwrap();
    assert!(status.success(), "leecher failed");
    assert!(std::fs::read(&out).unwrap() == data, "content differs");
    assert_eq!(stats(&st)["chunks_rejected"], 0);
    // And the seeder is alive and serving a second leecher.
    let out2 = dir.path().join("out2");
    assert_ok(&get(&seeder.url, &out2, &[]), "second leecher");
    assert!(std::fs::read(&out2).unwrap() == data);
}
