//! A live libswift source's munros and chunks verify with ppspp's live
//! verifier (issue 24, the integrity layer of live interop): libswift
//! injects a stream fed to its stdin; this test speaks to it over UDP with
//! ppspp's wire codec and handshake options, and checks each SIGNED_INTEGRITY
//! and chunk with `LiveVerifier` under the libswift signature profile
//! (`docs/libswift-live.md`). The chunks must also be the bytes fed in.
//! Runs whenever `../shared/tools/libswift/swift` is there; says so and
//! passes when it is not.

mod common;

use std::io::Write;
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{libswift, Proc};
use ppspp_core::bin::Bin;
use ppspp_core::chunk::ChunkRange;
use ppspp_core::live::{
    our_live_options, LiveError, LiveParams, LivePublicKey, LiveVerifier, MunroVerdict,
    SignatureProfile,
};
use ppspp_core::wire::{
    decode_datagram, ChannelId, ChunkAddressing, ChunkSpec, DatagramWriter, DelaySample,
    LiveSignatureAlgorithm, Message,
};
use ppspp_core::ChunkIndex;

/// Byte `i` of the stream fed to the source.
fn stream_byte(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// The munro bin a chunk spec names, if it is exactly one bin.
fn single_bin(spec: ChunkSpec) -> Option<Bin> {
    match spec {
        ChunkSpec::Bin(b) => Some(b),
        ChunkSpec::Chunks(r) => {
            let len = r.len();
            let layer = len.trailing_zeros();
            (len.is_power_of_two() && r.first().0 % len == 0)
                .then(|| Bin::new(layer, r.first().0 >> layer))
                .flatten()
        }
        ChunkSpec::Bytes(_) => None,
    }
}

#[test]
fn a_libswift_sources_munros_and_chunks_verify() {
    let Some(swift) = libswift::binary() else {
        eprintln!("libswift not found beside the repository: live interop test skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let addr = libswift::free_addr();
    let url = dir.path().join("src.url");
    let mut child = Command::new(&swift)
        .args(["-i", "-", "-f"])
        .arg(dir.path().join("storage.dat"))
        .args(["-l", &addr, "-r"])
        .arg(&url)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn libswift live source");
    // Feed 10 KiB every 50 ms, as a camera would, until the test ends: a
    // libswift client ignores munros over 30 s old, so the feed must go on.
    let mut stdin = child.stdin.take().unwrap();
    let _source = Proc(child);
    let stop = Arc::new(AtomicBool::new(false));
    let feeding = stop.clone();
    let feeder = std::thread::spawn(move || {
        let mut at = 0u64;
        while !feeding.load(Ordering::Relaxed) {
            let block: Vec<u8> = (at..at + 10_240).map(stream_byte).collect();
            if stdin.write_all(&block).is_err() {
                return;
            }
            at += 10_240;
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let start = Instant::now();
    let swarm_id = loop {
        let text = std::fs::read_to_string(&url).unwrap_or_default();
        if let Some(hex) = text.trim().rsplit('/').next().filter(|h| h.len() > 40) {
            break hex::decode(hex).expect("swarm id hex");
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "no src.url from libswift"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let key = LivePublicKey::from_swarm_id(&swarm_id).expect("a P-256 swarm id");
    assert_eq!(key.algorithm(), LiveSignatureAlgorithm::ECDSAP256SHA256);

    let (params, shape, wire) = libswift::live_swarm();
    // The munro size is learned from the first munro, as libswift's
    // clients learn it; and the same munros under the RFC profile.
    let mut verifier = LiveVerifier::new(key, params, false, None);
    let rfc = LiveParams {
        profile: SignatureProfile::Rfc7574,
        ..params
    };
    let mut rfc_verifier = LiveVerifier::new(key, rfc, false, None);

    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let ours = ChannelId(0x5eed_1e55);
    let mut buf = [0u8; 1500];
    let send = |dst: ChannelId, msgs: &[Message<'_>]| {
        let mut out = [0u8; 1500];
        let mut w = DatagramWriter::new(&mut out, dst, wire).unwrap();
        for m in msgs {
            w.push(m).unwrap();
        }
        let n = w.len();
        sock.send_to(&out[..n], &addr).unwrap();
    };
    send(
        ChannelId(0),
        &[Message::Handshake {
            source: ours,
            options: our_live_options(Some(&swarm_id), &shape, ChunkAddressing::ChunkRanges32),
        }],
    );
    let mut theirs = None;
    let mut requested: Option<ChunkRange> = None;
    let mut verified = 0u64;
    let mut munros = 0u32;
    let deadline = Instant::now() + Duration::from_secs(40);
    while verified < 16 && Instant::now() < deadline {
        let Ok((n, _)) = sock.recv_from(&mut buf) else {
            if let Some(t) = theirs {
                send(t, &[Message::PexReq]);
            }
            continue;
        };
        let (_, msgs) = decode_datagram(&buf[..n], wire).expect("a datagram we can read");
        let mut reply = Vec::new();
        for m in msgs {
            match m.expect("messages we can read") {
                Message::Handshake { source, .. } if theirs.is_none() => {
                    assert_ne!(source, ChannelId(0), "libswift refused our live handshake");
                    theirs = Some(source);
                    reply.push(Message::PexReq);
                }
                Message::Integrity { spec, hash } => {
                    if let Some(bin) = single_bin(spec) {
                        verifier.offer_hash(bin, hash);
                        rfc_verifier.offer_hash(bin, hash);
                    }
                }
                Message::SignedIntegrity {
                    spec,
                    timestamp,
                    signature,
                } => {
                    let bin = single_bin(spec).expect("a munro is one bin");
                    let verdict = verifier.offer_signed(bin, timestamp, signature);
                    assert!(verdict.is_ok(), "libswift's munro {bin:?}: {verdict:?}");
                    assert_eq!(
                        rfc_verifier.offer_signed(bin, timestamp, signature),
                        Err(LiveError::BadSignature(bin)),
                        "libswift signs the munro hash alone, not RFC 7574's fields"
                    );
                    if verdict == Ok(MunroVerdict::New) {
                        munros += 1;
                    }
                    if requested.is_none() {
                        let r = bin.chunks().unwrap();
                        requested = Some(r);
                        reply.push(Message::Request(ChunkSpec::Chunks(r)));
                    }
                }
                Message::Data { spec, payload, .. } => {
                    let ChunkSpec::Chunks(r) = spec else {
                        panic!("libswift answers in chunk ranges");
                    };
                    let c = r.first();
                    verifier
                        .verify_chunk(c, payload)
                        .unwrap_or_else(|e| panic!("chunk {}: {e}", c.0));
                    let expect: Vec<u8> = (c.0 * 1024..(c.0 + 1) * 1024).map(stream_byte).collect();
                    assert_eq!(payload, &expect[..], "chunk {} is the bytes fed in", c.0);
                    verified += 1;
                    reply.push(Message::Ack {
                        spec,
                        delay: DelaySample(100),
                    });
                }
                _ => {}
            }
        }
        if let (Some(t), false) = (theirs, reply.is_empty()) {
            send(t, &reply);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _ = feeder.join();
    assert!(munros >= 1, "no signed munro from libswift");
    assert!(
        verified >= 16,
        "{verified} chunks verified of {requested:?} in 40 s"
    );
    assert_eq!(verifier.params().munro.chunks(), 32, "libswift's munros");
    let first = requested.unwrap().first();
    assert!(verifier.has_chunk(ChunkIndex(first.0)));
}
