//! The captured libswift exchange decodes datagram by datagram into the
//! messages its description lists, and re-encodes to the same bytes.

use ppspp_core::wire::{
    decode_datagram, ChannelId, ChunkAddressing, ChunkSpec, ContentIntegrity, DatagramWriter,
    DelaySample, Message, SwarmParams,
};
use ppspp_core::{ChunkRange, HashFunction};

const CAPTURE: &str = include_str!("vectors/libswift-exchange-3000B.txt");

fn pat251(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

fn datagrams() -> Vec<(String, Vec<u8>)> {
    CAPTURE
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (dir, hex_bytes) = l.split_once(' ').expect("direction then hex");
            (dir.to_string(), hex::decode(hex_bytes.trim()).expect("hex"))
        })
        .collect()
}

fn chunks(first: u64, last: u64) -> ChunkSpec {
    ChunkSpec::Chunks(ChunkRange::new(first, last).unwrap())
}

fn decode_all(bytes: &[u8], params: SwarmParams) -> (ChannelId, Vec<Message<'_>>) {
    let (channel, messages) = decode_datagram(bytes, params).expect("channel id");
    let messages = messages
        .collect::<Result<Vec<_>, _>>()
        .expect("well-formed datagram");
    (channel, messages)
}

fn reencode(channel: ChannelId, messages: &[Message<'_>], params: SwarmParams) -> Vec<u8> {
    let mut buf = vec![0u8; 2048];
    let mut w = DatagramWriter::new(&mut buf, channel, params).unwrap();
    for m in messages {
        w.push(m).unwrap();
    }
    let n = w.finish();
    buf.truncate(n);
    buf
}

#[test]
fn capture_decodes_into_the_described_messages() {
    let content = pat251(3000);
    let sha1 = HashFunction::Sha1;
    let h = |r: std::ops::Range<usize>| sha1.digest(&content[r]);
    let root = sha1.parent(
        &sha1.parent(&h(0..1024), &h(1024..2048)),
        &sha1.parent(&h(2048..3000), &sha1.zero()),
    );
    let dgrams = datagrams();
    let directions: Vec<&str> = dgrams.iter().map(|(d, _)| d.as_str()).collect();
    assert_eq!(
        directions,
        ["C>S", "S>C", "C>S", "S>C", "C>S", "S>C", "C>S", "S>C", "C>S"]
    );
    let params = SwarmParams::default();
    let decoded: Vec<(ChannelId, Vec<Message<'_>>)> =
        dgrams.iter().map(|(_, b)| decode_all(b, params)).collect();

    // 1. Leecher → seeder, channel 0: HANDSHAKE with the swarm id.
    let (ch, msgs) = &decoded[0];
    assert_eq!(*ch, ChannelId::ZERO);
    let [Message::Handshake {
        source: leecher_channel,
        options,
    }] = msgs.as_slice()
    else {
        panic!("expected one HANDSHAKE, got {msgs:?}")
    };
    assert_eq!(options.version, Some(1));
    assert_eq!(options.min_version, Some(1));
    assert_eq!(options.swarm_id, Some(root.as_bytes()));
    assert_eq!(options.integrity, Some(ContentIntegrity::MerkleTree));
    assert_eq!(options.hash_function, Some(HashFunction::Sha1));
    assert_eq!(options.addressing, Some(ChunkAddressing::ChunkRanges32));

    // 2. Seeder → leecher: HANDSHAKE, HAVE of the peaks 0–1 and 2–2.
    let (ch, msgs) = &decoded[1];
    assert_eq!(ch, leecher_channel);
    let [Message::Handshake {
        source: seeder_channel,
        options,
    }, Message::Have(a), Message::Have(b)] = msgs.as_slice()
    else {
        panic!("expected HANDSHAKE HAVE HAVE, got {msgs:?}")
    };
    assert_eq!(options.swarm_id, None);
    assert_eq!(options.addressing, Some(ChunkAddressing::ChunkRanges32));
    assert_eq!((*a, *b), (chunks(0, 1), chunks(2, 2)));

    // 3. REQUEST 0–2.
    assert_eq!(decoded[2].0, *seeder_channel);
    assert_eq!(decoded[2].1, [Message::Request(chunks(0, 2))]);

    // 4. Peaks, the uncle of chunk 0, then DATA(0).
    let (ch, msgs) = &decoded[3];
    assert_eq!(ch, leecher_channel);
    let [Message::Integrity { spec: s1, hash: h1 }, Message::Integrity { spec: s2, hash: h2 }, Message::Integrity { spec: s3, hash: h3 }, Message::Data { spec, payload, .. }] =
        msgs.as_slice()
    else {
        panic!("expected INTEGRITY×3 DATA, got {msgs:?}")
    };
    assert_eq!(
        (*s1, *h1),
        (chunks(0, 1), sha1.parent(&h(0..1024), &h(1024..2048)))
    );
    assert_eq!((*s2, *h2), (chunks(2, 2), h(2048..3000)));
    assert_eq!((*s3, *h3), (chunks(1, 1), h(1024..2048)));
    assert_eq!(*spec, chunks(0, 0));
    assert_eq!(*payload, &content[..1024]);

    // 5–9. ACK, DATA(1), ACK, DATA(2) (952 bytes), ACK.
    let expect_data = |i: usize, chunk: u64, range: std::ops::Range<usize>| {
        let [Message::Data { spec, payload, .. }] = decoded[i].1.as_slice() else {
            panic!("expected DATA, got {:?}", decoded[i].1)
        };
        assert_eq!(*spec, chunks(chunk, chunk));
        assert_eq!(*payload, &content[range]);
    };
    expect_data(5, 1, 1024..2048);
    expect_data(7, 2, 2048..3000);
    for (i, chunk, delay) in [(4, 0, 0x26), (6, 1, 0x10), (8, 2, 0x19)] {
        assert_eq!(decoded[i].0, *seeder_channel);
        assert_eq!(
            decoded[i].1,
            [Message::Ack {
                spec: chunks(chunk, chunk),
                delay: DelaySample(delay)
            }]
        );
    }
}

#[test]
fn capture_reencodes_byte_for_byte() {
    // With and without a known fixed chunk size: every DATA ends its datagram.
    for params in [
        SwarmParams::default(),
        SwarmParams {
            chunk_size: Some(1024),
            ..Default::default()
        },
    ] {
        for (dir, bytes) in datagrams() {
            let (channel, msgs) = decode_all(&bytes, params);
            assert_eq!(
                reencode(channel, &msgs, params),
                bytes,
                "{dir} datagram differs"
            );
        }
    }
}

#[test]
fn capture_with_wrong_hash_length_fails_cleanly() {
    // Decoding the INTEGRITY datagram as if the swarm used SHA-512 must end
    // in an error, not a panic or a wrong parse that consumes the DATA.
    let dgrams = datagrams();
    let params = SwarmParams {
        hash_function: HashFunction::Sha512,
        ..Default::default()
    };
    let (_, messages) = decode_datagram(&dgrams[3].1, params).unwrap();
    let results: Vec<_> = messages.collect();
    assert!(results.iter().any(|r| r.is_err()), "{results:?}");
}
