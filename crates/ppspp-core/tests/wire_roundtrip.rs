//! Round trips: every message type × every chunk addressing method encodes
//! and decodes back to itself, alone and in mixed datagrams, and a decoded
//! datagram re-encodes to the same bytes.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};

use ppspp_core::chunk::MAX_CHUNK_INDEX;
use ppspp_core::wire::{
    decode_datagram, ChannelId, ChunkAddressing, ChunkSizeOption, ChunkSpec, ContentIntegrity,
    DatagramWriter, DelaySample, DiscardWindow, HandshakeOptions, LiveSignatureAlgorithm, Message,
    MessageType, NtpTimestamp, SupportedMessages, SwarmParams, Timestamp,
};
use ppspp_core::{Bin, ByteRange, ChunkRange, Hash, HashFunction};
use proptest::prelude::*;

/// An owned stand-in for a [`Message`], so proptest can generate it.
#[derive(Clone, Debug)]
enum Owned {
    Handshake {
        source: u32,
        options: OwnedOptions,
    },
    Data {
        spec: ChunkSpec,
        timestamp: u64,
        payload: Vec<u8>,
    },
    Ack {
        spec: ChunkSpec,
        delay: i64,
    },
    Have(ChunkSpec),
    Integrity {
        spec: ChunkSpec,
        hash: Vec<u8>,
    },
    PexResV4(SocketAddrV4),
    PexReq,
    SignedIntegrity {
        spec: ChunkSpec,
        timestamp: u64,
        signature: Vec<u8>,
    },
    Request(ChunkSpec),
    Cancel(ChunkSpec),
    Choke,
    Unchoke,
    PexResV6(SocketAddrV6),
    PexResCert(Vec<u8>),
}

#[derive(Clone, Debug, Default)]
struct OwnedOptions {
    version: Option<u8>,
    min_version: Option<u8>,
    swarm_id: Option<Vec<u8>>,
    integrity: Option<ContentIntegrity>,
    hash_function: Option<HashFunction>,
    signature_algorithm: Option<LiveSignatureAlgorithm>,
    addressing: Option<ChunkAddressing>,
    discard_window: Option<DiscardWindow>,
    supported_messages: Option<Vec<u8>>,
    chunk_size: Option<ChunkSizeOption>,
}

impl OwnedOptions {
    fn borrow(&self) -> HandshakeOptions<'_> {
        HandshakeOptions {
            version: self.version,
            min_version: self.min_version,
            swarm_id: self.swarm_id.as_deref(),
            integrity: self.integrity,
            hash_function: self.hash_function,
            signature_algorithm: self.signature_algorithm,
            addressing: self.addressing,
            discard_window: self.discard_window,
            supported_messages: self
                .supported_messages
                .as_deref()
                .and_then(SupportedMessages::from_bytes),
            chunk_size: self.chunk_size,
        }
    }
}

impl Owned {
    fn borrow(&self) -> Message<'_> {
        match self {
            Owned::Handshake { source, options } => Message::Handshake {
                source: ChannelId(*source),
                options: options.borrow(),
            },
            Owned::Data {
                spec,
                timestamp,
                payload,
            } => Message::Data {
                spec: *spec,
                timestamp: Timestamp(*timestamp),
                payload,
            },
            Owned::Ack { spec, delay } => Message::Ack {
                spec: *spec,
                delay: DelaySample(*delay),
            },
            Owned::Have(s) => Message::Have(*s),
            Owned::Integrity { spec, hash } => Message::Integrity {
                spec: *spec,
                hash: Hash::from_slice(hash),
            },
            Owned::PexResV4(a) => Message::PexResV4(*a),
            Owned::PexReq => Message::PexReq,
            Owned::SignedIntegrity {
                spec,
                timestamp,
                signature,
            } => Message::SignedIntegrity {
                spec: *spec,
                timestamp: NtpTimestamp(*timestamp),
                signature,
            },
            Owned::Request(s) => Message::Request(*s),
            Owned::Cancel(s) => Message::Cancel(*s),
            Owned::Choke => Message::Choke,
            Owned::Unchoke => Message::Unchoke,
            Owned::PexResV6(a) => Message::PexResV6(*a),
            Owned::PexResCert(c) => Message::PexResCert(c),
        }
    }
}

fn addressing() -> impl Strategy<Value = ChunkAddressing> {
    prop::sample::select(ChunkAddressing::ALL.to_vec())
}

fn hash_function() -> impl Strategy<Value = HashFunction> {
    prop::sample::select(HashFunction::ALL.to_vec())
}

fn sorted(a: u64, b: u64) -> (u64, u64) {
    (a.min(b), a.max(b))
}

/// A chunk specification expressible in `a`.
fn spec(a: ChunkAddressing) -> BoxedStrategy<ChunkSpec> {
    match a {
        ChunkAddressing::Bins32 => any::<u32>()
            .prop_map(|v| ChunkSpec::Bin(Bin::from_u32(v)))
            .boxed(),
        ChunkAddressing::Bins64 => any::<u64>().prop_map(|v| ChunkSpec::Bin(Bin(v))).boxed(),
        ChunkAddressing::ChunkRanges32 => (any::<u32>(), any::<u32>())
            .prop_map(|(x, y)| {
                let (f, l) = sorted(x.into(), y.into());
                ChunkSpec::Chunks(ChunkRange::new(f, l).unwrap())
            })
            .boxed(),
        ChunkAddressing::ChunkRanges64 => (0..=MAX_CHUNK_INDEX, 0..=MAX_CHUNK_INDEX)
            .prop_map(|(x, y)| {
                let (f, l) = sorted(x, y);
                ChunkSpec::Chunks(ChunkRange::new(f, l).unwrap())
            })
            .boxed(),
        ChunkAddressing::ByteRanges64 => (any::<u64>(), any::<u64>())
            .prop_map(|(x, y)| {
                let (f, l) = sorted(x, y);
                ChunkSpec::Bytes(ByteRange::new(f, l).unwrap())
            })
            .boxed(),
    }
}

fn options() -> impl Strategy<Value = OwnedOptions> {
    (
        (
            1u8..=255,
            prop::option::of(any::<u8>()),
            prop::option::of(prop::collection::vec(any::<u8>(), 1..80)),
        ),
        (
            prop::option::of(prop::sample::select(vec![
                ContentIntegrity::None,
                ContentIntegrity::MerkleTree,
                ContentIntegrity::SignAll,
                ContentIntegrity::UnifiedMerkleTree,
            ])),
            prop::option::of(hash_function()),
            prop::option::of(prop::sample::select(vec![
                LiveSignatureAlgorithm::ECDSAP256SHA256,
                LiveSignatureAlgorithm::ECDSAP384SHA384,
                LiveSignatureAlgorithm::ED25519,
                LiveSignatureAlgorithm(77),
            ])),
        ),
        (
            prop::option::of(addressing()),
            any::<Option<u64>>(),
            any::<bool>(),
        ),
        (
            prop::option::of(prop::collection::vec(any::<u8>(), 0..=32)),
            prop::option::of(any::<u32>()),
        ),
    )
        .prop_map(
            |(
                (version, min_version, swarm_id),
                (integrity, hash_function, signature_algorithm),
                (addressing, window, keep_all),
                (supported, chunk_size),
            )| {
                // The window's width follows the addressing method, which it needs.
                let discard_window = addressing.and(window).map(|w| {
                    let narrow = addressing.is_some_and(|a| a.value_len() == 4);
                    let w = if narrow {
                        w % u64::from(u32::MAX)
                    } else {
                        w % u64::MAX
                    };
                    if keep_all {
                        DiscardWindow::KeepAll
                    } else {
                        DiscardWindow::Window(w)
                    }
                });
                OwnedOptions {
                    version: Some(version),
                    min_version,
                    swarm_id,
                    integrity,
                    hash_function,
                    signature_algorithm,
                    addressing,
                    discard_window,
                    supported_messages: supported,
                    chunk_size: chunk_size.map(|n| match n {
                        0 | u32::MAX => ChunkSizeOption::Variable,
                        n => ChunkSizeOption::Fixed(n),
                    }),
                }
            },
        )
}

/// Any message but HANDSHAKE, valid under `p`. DATA payloads are `payload`
/// long; SIGNED_INTEGRITY is generated only when a signature length is known.
fn body_message(p: SwarmParams, payload: std::ops::Range<usize>) -> BoxedStrategy<Owned> {
    let s = || spec(p.addressing);
    let hash_len = p.hash_len();
    let mut choices: Vec<BoxedStrategy<Owned>> = vec![
        (
            s(),
            any::<u64>(),
            prop::collection::vec(any::<u8>(), payload),
        )
            .prop_map(|(spec, timestamp, payload)| Owned::Data {
                spec,
                timestamp,
                payload,
            })
            .boxed(),
        (s(), any::<i64>())
            .prop_map(|(spec, delay)| Owned::Ack { spec, delay })
            .boxed(),
        s().prop_map(Owned::Have).boxed(),
        (s(), prop::collection::vec(any::<u8>(), hash_len))
            .prop_map(|(spec, hash)| Owned::Integrity { spec, hash })
            .boxed(),
        (any::<u32>(), any::<u16>())
            .prop_map(|(ip, port)| Owned::PexResV4(SocketAddrV4::new(Ipv4Addr::from(ip), port)))
            .boxed(),
        Just(Owned::PexReq).boxed(),
        s().prop_map(Owned::Request).boxed(),
        s().prop_map(Owned::Cancel).boxed(),
        Just(Owned::Choke).boxed(),
        Just(Owned::Unchoke).boxed(),
        (any::<u128>(), any::<u16>())
            .prop_map(|(ip, port)| {
                Owned::PexResV6(SocketAddrV6::new(Ipv6Addr::from(ip), port, 0, 0))
            })
            .boxed(),
        prop::collection::vec(any::<u8>(), 0..300)
            .prop_map(Owned::PexResCert)
            .boxed(),
    ];
    if let Some(len) = p.signature_len {
        choices.push(
            (s(), any::<u64>(), prop::collection::vec(any::<u8>(), len))
                .prop_map(|(spec, timestamp, signature)| Owned::SignedIntegrity {
                    spec,
                    timestamp,
                    signature,
                })
                .boxed(),
        );
    }
    prop::strategy::Union::new(choices).boxed()
}

fn base_params() -> impl Strategy<Value = SwarmParams> {
    (addressing(), hash_function(), prop::option::of(1usize..600)).prop_map(
        |(addressing, hash_function, signature_len)| SwarmParams {
            addressing,
            hash_function,
            signature_len,
            chunk_size: None,
        },
    )
}

/// A datagram: maybe a HANDSHAKE, then messages valid under the parameters
/// it leaves in force, with at most one DATA, last.
fn datagram() -> impl Strategy<Value = (SwarmParams, u32, Vec<Owned>)> {
    (
        base_params(),
        any::<u32>(),
        prop::option::of((any::<u32>(), options())),
    )
        .prop_flat_map(|(base, channel, handshake)| {
            let mut effective = base;
            let mut head = Vec::new();
            if let Some((source, opts)) = handshake {
                effective.apply(&opts.borrow());
                head.push(Owned::Handshake {
                    source,
                    options: opts,
                });
            }
            let body = prop::collection::vec(body_message(effective, 0..1), 0..8);
            let tail = prop::option::of(body_message(effective, 0..1500));
            let fixed = effective.chunk_size;
            (Just(base), Just(channel), Just(head), body, tail).prop_map(
                move |(base, channel, head, body, tail)| {
                    let mut msgs = head;
                    // A DATA in the middle would swallow what follows: keep only the last.
                    msgs.extend(
                        body.into_iter()
                            .filter(|m| !matches!(m, Owned::Data { .. })),
                    );
                    msgs.extend(tail.map(|m| fit_fixed_chunk_size(m, fixed)));
                    (base, channel, msgs)
                },
            )
        })
}

/// With a fixed chunk size, a DATA longer than its chunks would be split by
/// the decoder; a real sender never makes one, so trim the payload.
fn fit_fixed_chunk_size(m: Owned, chunk_size: Option<u32>) -> Owned {
    match (m, chunk_size) {
        (
            Owned::Data {
                spec,
                timestamp,
                mut payload,
            },
            Some(cs),
        ) => {
            let expected = match spec {
                ChunkSpec::Bin(b) if b.is_none() => u64::MAX,
                ChunkSpec::Bin(b) => b.chunk_count().saturating_mul(cs.into()),
                ChunkSpec::Chunks(r) => r.len().saturating_mul(cs.into()),
                ChunkSpec::Bytes(r) => (r.last() - r.first()).saturating_add(1),
            };
            payload.truncate(usize::try_from(expected).unwrap_or(usize::MAX));
            Owned::Data {
                spec,
                timestamp,
                payload,
            }
        }
        (m, _) => m,
    }
}

fn encode(params: SwarmParams, channel: u32, msgs: &[Owned]) -> Vec<u8> {
    let mut buf = vec![0u8; 65536];
    let mut w = DatagramWriter::new(&mut buf, ChannelId(channel), params).unwrap();
    for m in msgs {
        w.push(&m.borrow())
            .unwrap_or_else(|e| panic!("encoding {m:?}: {e}"));
    }
    let n = w.finish();
    buf.truncate(n);
    buf
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn datagrams_round_trip((params, channel, msgs) in datagram()) {
        let bytes = encode(params, channel, &msgs);
        let (ch, decoded) = decode_datagram(&bytes, params).unwrap();
        prop_assert_eq!(ch, ChannelId(channel));
        let decoded: Vec<Message<'_>> = decoded.collect::<Result<_, _>>().unwrap();
        let expected: Vec<Message<'_>> = msgs.iter().map(Owned::borrow).collect();
        prop_assert_eq!(&decoded, &expected);
        // Re-encoding what was decoded gives the same bytes.
        let mut again = vec![0u8; bytes.len()];
        let mut w = DatagramWriter::new(&mut again, ch, params).unwrap();
        for m in &decoded {
            w.push(m).unwrap();
        }
        prop_assert_eq!(w.finish(), bytes.len());
        prop_assert_eq!(again, bytes);
    }

    #[test]
    fn each_message_alone_round_trips_in_each_method(
        (params, msg) in base_params().prop_flat_map(|p| (Just(p), body_message(p, 0..64)))
    ) {
        let m = msg.borrow();
        let mut buf = [0u8; 2048];
        let n = m.encode(&params, &mut buf).unwrap();
        let mut body = vec![0u8, 0, 0, 9];
        body.extend_from_slice(&buf[..n]);
        let (_, mut decoded) = decode_datagram(&body, params).unwrap();
        prop_assert_eq!(decoded.next(), Some(Ok(m)));
        prop_assert_eq!(decoded.next(), None);
    }

    #[test]
    fn several_data_split_by_fixed_chunk_size(
        addressing in prop::sample::select(vec![ChunkAddressing::ChunkRanges32, ChunkAddressing::ChunkRanges64, ChunkAddressing::Bins64]),
        cs in 1u32..64,
        chunks in prop::collection::vec((0u64..1000, 0u32..3, any::<u64>()), 1..6),
    ) {
        // With a fixed chunk size, DATA messages of whole chunks can follow
        // one another (RFC 7574 §8.6); each covers 2^k chunks.
        let params = SwarmParams { addressing, chunk_size: Some(cs), ..Default::default() };
        let owned: Vec<Owned> = chunks
            .iter()
            .map(|&(first, k, ts)| {
                let n = 1u64 << k;
                let spec = match addressing {
                    ChunkAddressing::Bins64 => ChunkSpec::Bin(Bin::new(k, first).unwrap()),
                    _ => ChunkSpec::Chunks(ChunkRange::with_len(first, n).unwrap()),
                };
                let payload = (0..n * u64::from(cs)).map(|i| (i ^ ts) as u8).collect();
                Owned::Data { spec, timestamp: ts, payload }
            })
            .collect();
        let bytes = encode(params, 1, &owned);
        let (_, decoded) = decode_datagram(&bytes, params).unwrap();
        let decoded: Vec<Message<'_>> = decoded.collect::<Result<_, _>>().unwrap();
        let expected: Vec<Message<'_>> = owned.iter().map(Owned::borrow).collect();
        prop_assert_eq!(decoded, expected);
    }
}

#[test]
fn every_message_type_is_generated() {
    // The generators above cover every type code 1..=13; HANDSHAKE comes from
    // `datagram()`. Guard against a type silently dropping out of the lists.
    let p = SwarmParams {
        signature_len: Some(64),
        ..Default::default()
    };
    let strategy = body_message(p, 0..4);
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..2000 {
        let m = strategy.new_tree(&mut runner).unwrap().current();
        seen.insert(m.borrow().message_type());
    }
    let expected: std::collections::BTreeSet<MessageType> = MessageType::ALL
        .into_iter()
        .filter(|t| *t != MessageType::Handshake)
        .collect();
    assert_eq!(seen, expected);
}

#[test]
fn handshake_not_first_is_refused_both_ways() {
    let params = SwarmParams::default();
    let hs = Message::Handshake {
        source: ChannelId(5),
        options: HandshakeOptions {
            version: Some(1),
            ..Default::default()
        },
    };
    let mut buf = [0u8; 64];
    let mut w = DatagramWriter::new(&mut buf, ChannelId(1), params).unwrap();
    w.push(&Message::PexReq).unwrap();
    assert!(w.push(&hs).is_err());
    // Hand-made: PEX_REQ then HANDSHAKE.
    let bytes = [0, 0, 0, 1, 6, 0, 0, 0, 0, 5, 0, 1, 255];
    let (_, mut msgs) = decode_datagram(&bytes, params).unwrap();
    assert_eq!(msgs.next(), Some(Ok(Message::PexReq)));
    let err = msgs.next().unwrap().unwrap_err();
    assert_eq!(
        err.kind,
        ppspp_core::wire::DecodeErrorKind::HandshakeNotFirst
    );
    assert_eq!(err.offset, 5);
    assert_eq!(msgs.next(), None);
}

#[test]
fn handshake_options_govern_the_rest_of_the_datagram() {
    // The initiator announces 64-bit bins and SHA-256; the HAVE and INTEGRITY
    // after it in the same datagram use them.
    let base = SwarmParams::default();
    let opts = HandshakeOptions {
        version: Some(1),
        hash_function: Some(HashFunction::Sha256),
        addressing: Some(ChunkAddressing::Bins64),
        ..Default::default()
    };
    let hash = HashFunction::Sha256.digest(b"x");
    let msgs = [
        Message::Handshake {
            source: ChannelId(9),
            options: opts,
        },
        Message::Have(ChunkSpec::Bin(Bin(1 << 40))),
        Message::Integrity {
            spec: ChunkSpec::Bin(Bin(3)),
            hash,
        },
    ];
    let mut buf = [0u8; 256];
    let mut w = DatagramWriter::new(&mut buf, ChannelId::ZERO, base).unwrap();
    for m in &msgs {
        w.push(m).unwrap();
    }
    let n = w.finish();
    // 4 + (1+4+2+2+2+1) + (1+8) + (1+8+32)
    assert_eq!(n, 4 + 12 + 9 + 41);
    let (_, decoded) = decode_datagram(&buf[..n], base).unwrap();
    let decoded: Vec<_> = decoded.collect::<Result<_, _>>().unwrap();
    assert_eq!(decoded, msgs);
}
