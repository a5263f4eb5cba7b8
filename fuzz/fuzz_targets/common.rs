//! Shared by the fuzz targets: derive swarm parameters from input bytes and
//! check that whatever decodes re-encodes to the same bytes.

use ppspp_core::wire::{decode_datagram, ChunkAddressing, DatagramWriter, SwarmParams};
use ppspp_core::HashFunction;

/// Parameters chosen by two selector bytes.
pub fn params_from(a: u8, b: u8) -> SwarmParams {
    SwarmParams {
        addressing: ChunkAddressing::ALL[usize::from(a % 5)],
        hash_function: HashFunction::ALL[usize::from((a / 5) % 5)],
        signature_len: (b & 1 == 1).then_some(usize::from(b >> 1)),
        chunk_size: (a >= 128).then_some(u32::from(b) * 8 + 1),
    }
}

/// Decode `datagram` fully; every message that decodes must re-encode to
/// exactly the bytes it came from.
pub fn decode_and_reencode(datagram: &[u8], params: SwarmParams) {
    let Ok((channel, messages)) = decode_datagram(datagram, params) else {
        assert!(datagram.len() < 4);
        return;
    };
    let mut ok = Vec::new();
    let mut failed = false;
    for m in messages {
        match m {
            Ok(m) => ok.push(m),
            Err(e) => {
                assert!(e.offset <= datagram.len());
                failed = true;
            }
        }
    }
    let mut buf = vec![0u8; datagram.len()];
    let mut w = DatagramWriter::new(&mut buf, channel, params).expect("room for the channel id");
    for m in &ok {
        w.push(m).expect("a decoded message re-encodes");
    }
    let n = w.finish();
    assert_eq!(&buf[..n], &datagram[..n]);
    assert!(failed || n == datagram.len());
}
