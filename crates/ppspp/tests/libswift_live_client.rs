//! A libswift live client accepts ppspp's signed munros and chunks (issue
//! 24, the integrity layer of live interop, the other way round from
//! `libswift_live_integrity.rs`): this test is the source, with
//! `LiveInjector` under the libswift signature profile, speaking ppspp's
//! wire codec over UDP; libswift hooks in at the munro we sign and writes
//! what it verified. Runs whenever `../shared/tools/libswift/swift` is
//! there; says so and passes when it is not.

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{libswift, Proc};
use ppspp_core::chunk::ChunkRange;
use ppspp_core::live::{our_live_options, LiveInjector, LiveKeyPair};
use ppspp_core::wire::{
    decode_datagram, ChannelId, ChunkAddressing, ChunkSpec, DatagramWriter, LiveSignatureAlgorithm,
    Message, Timestamp,
};
use ppspp_core::ChunkIndex;

const CHUNK: usize = 1024;
/// Two munros of 32 chunks: libswift hooks in at the second, the newest.
const CHUNKS: u64 = 64;

fn chunk(i: u64) -> Vec<u8> {
    (i * CHUNK as u64..(i + 1) * CHUNK as u64)
        .map(|b| (b.wrapping_mul(40_503) >> 7) as u8)
        .collect()
}

fn unix_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

#[test]
fn a_libswift_client_verifies_our_munros_and_chunks() {
    let Some(swift) = libswift::binary() else {
        eprintln!("libswift not found beside the repository: live interop test skipped");
        return;
    };
    let key = LiveKeyPair::from_secret(LiveSignatureAlgorithm::ECDSAP256SHA256, &[42; 32]).unwrap();
    let (params, shape, wire) = libswift::live_swarm();
    let mut inj = LiveInjector::new(key, params, None);
    for i in 0..CHUNKS {
        inj.push_chunk(&chunk(i), unix_us());
    }
    let swarm_id = inj.swarm_id();
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let here = sock.local_addr().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let log = dir.path().join("client.log");
    let _client = Proc(
        Command::new(&swift)
            .args([
                "-t",
                &here.to_string(),
                "-h",
                &hex::encode(&swarm_id),
                "-k",
                "-o",
            ])
            .arg(&out)
            .arg("-B")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("spawn libswift live client"),
    );
    let file = out.join(&hex::encode(&swarm_id)[..40]);
    let newest = inj.newest().unwrap().clone();
    let hooked = newest.bin.chunks().unwrap();

    let ours = ChannelId(0x11fe_0001);
    let mut peer: Option<(SocketAddr, ChannelId)> = None;
    let mut munro_acked = false;
    let mut answered = false;
    let mut queue: Vec<ChunkIndex> = Vec::new();
    let mut buf = [0u8; 2048];
    let deadline = Instant::now() + Duration::from_secs(30);
    let got_all = || {
        std::fs::read(&file).is_ok_and(|bytes| {
            (hooked.first().0..=hooked.last().0).all(|c| {
                let at = c as usize * CHUNK;
                bytes.get(at..at + CHUNK) == Some(&chunk(c)[..])
            })
        })
    };
    while Instant::now() < deadline && !got_all() {
        if let Ok((n, from)) = sock.recv_from(&mut buf) {
            let Ok((_, msgs)) = decode_datagram(&buf[..n], wire) else {
                continue;
            };
            for m in msgs.flatten() {
                match m {
                    Message::Handshake { source, .. } if peer.is_none() => {
                        peer = Some((from, source));
                    }
                    Message::Request(ChunkSpec::Chunks(r)) => {
                        let signed = inj.available().unwrap();
                        let Some(r) = r.intersect(signed) else {
                            continue;
                        };
                        queue.extend((r.first().0..=r.last().0).map(ChunkIndex));
                    }
                    Message::Ack { .. } | Message::Have(_) => munro_acked = true,
                    _ => {}
                }
            }
            // The handshake reply with HAVE of what is signed, then the
            // munro hash and its signature (RFC 7574 §6.1.2.3) in every
            // datagram until the peer holds a chunk under it.
            if let Some((to, theirs)) = peer.filter(|_| queue.is_empty() && !munro_acked) {
                let mut out = [0u8; 1500];
                let mut w = DatagramWriter::new(&mut out, theirs, wire).unwrap();
                if !answered {
                    w.push(&Message::Handshake {
                        source: ours,
                        options: our_live_options(None, &shape, ChunkAddressing::ChunkRanges32),
                    })
                    .unwrap();
                    w.push(&Message::Have(ChunkSpec::Chunks(inj.available().unwrap())))
                        .unwrap();
                    answered = true;
                } else {
                    w.push(&Message::Integrity {
                        spec: ChunkSpec::Chunks(hooked),
                        hash: newest.hash,
                    })
                    .unwrap();
                    w.push(&Message::SignedIntegrity {
                        spec: ChunkSpec::Chunks(hooked),
                        timestamp: newest.timestamp,
                        signature: &newest.signature,
                    })
                    .unwrap();
                }
                let n = w.len();
                sock.send_to(&out[..n], to).unwrap();
            }
        }
        let Some((to, theirs)) = peer else {
            continue;
        };
        // One chunk per datagram: munro, uncles, DATA (last).
        for c in queue.drain(..) {
            let munro = inj.munro_for(c).unwrap().clone();
            let spec_of = |r: ChunkRange| ChunkSpec::Chunks(r);
            let mut out = [0u8; 2048];
            let mut w = DatagramWriter::new(&mut out, theirs, wire).unwrap();
            w.push(&Message::Integrity {
                spec: spec_of(munro.bin.chunks().unwrap()),
                hash: munro.hash,
            })
            .unwrap();
            w.push(&Message::SignedIntegrity {
                spec: spec_of(munro.bin.chunks().unwrap()),
                timestamp: munro.timestamp,
                signature: &munro.signature,
            })
            .unwrap();
            for (bin, hash) in inj.uncles(c, |_| false).unwrap() {
                w.push(&Message::Integrity {
                    spec: spec_of(bin.chunks().unwrap()),
                    hash,
                })
                .unwrap();
            }
            w.push(&Message::Data {
                spec: spec_of(ChunkRange::single(c).unwrap()),
                timestamp: Timestamp(unix_us()),
                payload: &chunk(c.0),
            })
            .unwrap();
            let n = w.len();
            sock.send_to(&out[..n], to).unwrap();
        }
    }
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        got_all(),
        "libswift did not store chunks {hooked} as sent; log tail:\n{}",
        log.lines().rev().take(30).collect::<Vec<_>>().join("\n")
    );
    assert!(
        !log.contains("signature wrong"),
        "libswift refused our signature"
    );
    assert!(
        log.contains("hook-in on (0,32)"),
        "libswift hooks in at the first chunk of our newest munro"
    );
}
