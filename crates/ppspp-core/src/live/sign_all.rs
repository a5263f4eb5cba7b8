//! "Sign All" (RFC 7574 §6.1.1, content integrity method 2): the injector
//! signs every chunk, and a SIGNED_INTEGRITY with the chunk's signature
//! travels before its DATA (in the same datagram, or the one before when
//! both do not fit). The signature covers the chunk's spec as on the wire,
//! a 64-bit NTP timestamp (RFC 5905) and the chunk, in that order.
//!
//! It costs a signature per chunk (64 bytes, and a P-256 signing per
//! chunk at the source), where the unified Merkle tree signs one munro per
//! 32 chunks; it needs no hashes between munro and chunk. libswift does not
//! implement it (`docs/libswift-live.md`), so only ppspp peers use it.

use super::key::{LiveKeyPair, LivePublicKey};
use super::munro::ntp_from_unix_micros;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::wire::{ChunkAddressing, ChunkSpec, NtpTimestamp};

/// A chunk's signature under Sign All, as SIGNED_INTEGRITY carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkSignature {
    /// The chunk signed.
    pub chunk: ChunkIndex,
    /// When the injector signed (NTP format).
    pub timestamp: NtpTimestamp,
    /// The injector's signature.
    pub signature: Vec<u8>,
}

/// The bytes signed for `chunk` (§6.1.1): its spec in `addressing`, the
/// timestamp, the chunk's bytes. `None` when the spec cannot be written
/// in `addressing` (a chunk index too large for it).
pub fn signed_bytes(
    chunk: ChunkIndex,
    addressing: ChunkAddressing,
    timestamp: NtpTimestamp,
    data: &[u8],
) -> Option<Vec<u8>> {
    let spec = match addressing {
        ChunkAddressing::Bins32 | ChunkAddressing::Bins64 => {
            ChunkSpec::Bin(crate::bin::Bin::leaf(chunk)?)
        }
        _ => ChunkSpec::Chunks(ChunkRange::single(chunk)?),
    };
    let mut bytes = spec.wire_bytes(addressing).ok()?;
    bytes.extend_from_slice(&timestamp.0.to_be_bytes());
    bytes.extend_from_slice(data);
    Some(bytes)
}

/// Signs `data` as chunk `chunk`, at `unix_us` (wall-clock µs since the
/// Unix epoch, the driver's).
pub fn sign_chunk(
    key: &LiveKeyPair,
    chunk: ChunkIndex,
    addressing: ChunkAddressing,
    unix_us: u64,
    data: &[u8],
) -> Option<ChunkSignature> {
    let timestamp = ntp_from_unix_micros(unix_us);
    let bytes = signed_bytes(chunk, addressing, timestamp, data)?;
    Some(ChunkSignature {
        chunk,
        timestamp,
        signature: key.sign(&bytes),
    })
}

/// Whether `data` is chunk `sig.chunk` as the injector of `key` signed it.
pub fn verify_chunk(
    key: &LivePublicKey,
    sig: &ChunkSignature,
    addressing: ChunkAddressing,
    data: &[u8],
) -> bool {
    signed_bytes(sig.chunk, addressing, sig.timestamp, data)
        .is_some_and(|bytes| key.verify(&bytes, &sig.signature))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::LiveSignatureAlgorithm;

    #[test]
    fn a_signed_chunk_verifies_and_nothing_else_does() {
        for alg in crate::live::key::SUPPORTED {
            let key = LiveKeyPair::from_secret(alg, &[9; 32]).unwrap();
            let pk = key.public_key();
            let a = ChunkAddressing::ChunkRanges32;
            let sig = sign_chunk(&key, ChunkIndex(7), a, 1_000_000, b"seven").unwrap();
            assert!(verify_chunk(&pk, &sig, a, b"seven"));
            assert!(!verify_chunk(&pk, &sig, a, b"eight"), "other bytes");
            let moved = ChunkSignature {
                chunk: ChunkIndex(8),
                ..sig.clone()
            };
            assert!(!verify_chunk(&pk, &moved, a, b"seven"), "other position");
            let later = ChunkSignature {
                timestamp: NtpTimestamp(sig.timestamp.0 + 1),
                ..sig.clone()
            };
            assert!(!verify_chunk(&pk, &later, a, b"seven"), "other time");
            assert!(
                !verify_chunk(&pk, &sig, ChunkAddressing::Bins32, b"seven"),
                "the spec is signed as written"
            );
        }
    }

    #[test]
    fn the_signed_bytes_are_spec_timestamp_chunk() {
        let ts = NtpTimestamp(0x0102_0304_0506_0708);
        let bytes = signed_bytes(ChunkIndex(5), ChunkAddressing::ChunkRanges32, ts, b"xy").unwrap();
        let mut want = vec![0, 0, 0, 5, 0, 0, 0, 5];
        want.extend_from_slice(&ts.0.to_be_bytes());
        want.extend_from_slice(b"xy");
        assert_eq!(bytes, want);
        assert_eq!(
            signed_bytes(ChunkIndex(1 << 33), ChunkAddressing::ChunkRanges32, ts, b""),
            None,
            "beyond 32-bit addressing"
        );
        let key = LiveKeyPair::from_secret(LiveSignatureAlgorithm::ED25519, &[1; 32]).unwrap();
        assert!(sign_chunk(
            &key,
            ChunkIndex(1 << 33),
            ChunkAddressing::ChunkRanges32,
            0,
            b""
        )
        .is_none());
    }
}
