//! Signed munros (RFC 7574 §6.1.2): the unified Merkle tree of a live
//! stream grows by subtrees of a fixed number of chunks, and the injector
//! signs the root of each — the subtree's *munro* — as soon as it is
//! complete. A receiver that trusts a munro verifies the chunks under it
//! with uncle hashes, as for static content (§5), up to the munro instead
//! of a root.
//!
//! Two signature profiles, because the reference implementation departs
//! from the RFC (observed on the wire, libswift dda307fe):
//! - [`SignatureProfile::Rfc7574`]: the signature covers the munro's
//!   chunk specification as on the wire, a 64-bit NTP timestamp (RFC 5905)
//!   and the munro hash, in that order (§6.1.2.2);
//! - [`SignatureProfile::Libswift`]: the signature covers the munro hash
//!   alone, and the timestamp is microseconds since the Unix epoch
//!   (libswift `livehashtree.cpp`, `AddSignedMunro`). A libswift client
//!   rejects RFC signatures and NTP timestamps, and libswift sources send
//!   only these. Nothing binds the signature to the munro's position, so a
//!   peer could replay an old munro at a new place: the receiver refuses
//!   munros outside the discard window, which bounds what a replay can do.
//!
//! The profile is not negotiated in the handshake; it is a parameter of
//! the swarm, known out of band like the chunk size (the swarm URL).

use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::hash::Hash;
use crate::wire::{ChunkAddressing, ChunkSpec, NtpTimestamp};

/// What a munro signature covers and how its timestamp is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SignatureProfile {
    /// RFC 7574 §6.1.2.2: chunk spec ‖ NTP timestamp ‖ munro hash.
    #[default]
    Rfc7574,
    /// libswift's: the munro hash alone; Unix-µs timestamps.
    Libswift,
}

impl SignatureProfile {
    /// The profile called `name` (`rfc` or `libswift`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "rfc" | "rfc7574" => Some(SignatureProfile::Rfc7574),
            "libswift" => Some(SignatureProfile::Libswift),
            _ => None,
        }
    }

    /// The profile's name, as [`Self::from_name`] reads it.
    pub fn name(self) -> &'static str {
        match self {
            SignatureProfile::Rfc7574 => "rfc",
            SignatureProfile::Libswift => "libswift",
        }
    }

    /// The timestamp field for a signature made at `unix_us` (µs since the
    /// Unix epoch, UTC), as this profile writes it.
    pub fn timestamp(self, unix_us: u64) -> NtpTimestamp {
        match self {
            SignatureProfile::Rfc7574 => ntp_from_unix_micros(unix_us),
            SignatureProfile::Libswift => NtpTimestamp(unix_us),
        }
    }

    /// The Unix µs a timestamp field written in this profile stands for.
    pub fn unix_micros(self, timestamp: NtpTimestamp) -> Option<u64> {
        match self {
            SignatureProfile::Rfc7574 => unix_micros_from_ntp(timestamp),
            SignatureProfile::Libswift => Some(timestamp.0),
        }
    }

    /// The bytes the injector signs for the munro `bin` with hash `hash`,
    /// its chunk spec written in `addressing`.
    pub fn signed_bytes(
        self,
        bin: Bin,
        addressing: ChunkAddressing,
        timestamp: NtpTimestamp,
        hash: &Hash,
    ) -> Vec<u8> {
        match self {
            SignatureProfile::Libswift => hash.as_bytes().to_vec(),
            SignatureProfile::Rfc7574 => {
                let mut bytes = munro_spec_bytes(bin, addressing);
                bytes.extend_from_slice(&timestamp.0.to_be_bytes());
                bytes.extend_from_slice(hash.as_bytes());
                bytes
            }
        }
    }
}

/// Seconds from the NTP epoch (1900-01-01) to the Unix epoch (RFC 5905
/// §6: 2,208,988,800).
const NTP_UNIX_OFFSET_S: u64 = 2_208_988_800;

/// The NTP timestamp (RFC 5905 §6: seconds since 1900 in the high 32 bits,
/// the fraction of a second in the low 32) of `unix_us`.
pub fn ntp_from_unix_micros(unix_us: u64) -> NtpTimestamp {
    let secs = (unix_us / 1_000_000 + NTP_UNIX_OFFSET_S) & 0xffff_ffff;
    let frac = ((unix_us % 1_000_000) << 32) / 1_000_000;
    NtpTimestamp((secs << 32) | frac)
}

/// The Unix µs of an NTP timestamp (era 0, 1900–2036), rounded down.
pub fn unix_micros_from_ntp(ts: NtpTimestamp) -> Option<u64> {
    let secs = (ts.0 >> 32).checked_sub(NTP_UNIX_OFFSET_S)?;
    let micros = ((ts.0 & 0xffff_ffff) * 1_000_000) >> 32;
    Some(secs * 1_000_000 + micros)
}

/// The munro `bin`'s chunk spec as on the wire in `addressing`.
fn munro_spec_bytes(bin: Bin, addressing: ChunkAddressing) -> Vec<u8> {
    let spec = match addressing {
        ChunkAddressing::Bins32 | ChunkAddressing::Bins64 => ChunkSpec::Bin(bin),
        _ => bin.chunks().map_or(ChunkSpec::Bin(bin), ChunkSpec::Chunks),
    };
    // A munro of a live stream fits every addressing a live swarm uses;
    // one that does not is signed over no spec bytes, and will not verify.
    spec.wire_bytes(addressing).unwrap_or_default()
}

/// How many chunks a munro covers: a power of two, fixed per swarm
/// (libswift: 32, and not negotiated — a receiver learns it from the
/// first munro it is sent).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MunroSize {
    layer: u32,
}

impl MunroSize {
    /// libswift's `NCHUNKS_PER_SIG`: 32 chunks, layer 5.
    pub const LIBSWIFT: MunroSize = MunroSize { layer: 5 };

    /// One chunk: Sign All's unit.
    pub const SINGLE: MunroSize = MunroSize { layer: 0 };

    /// The largest munro accepted: 2^16 chunks, so a subtree's node table
    /// stays bounded whatever a peer announces.
    pub const MAX_LAYER: u32 = 16;

    /// Munros of `chunks` chunks: a power of two from 1 to 2^16.
    pub fn new(chunks: u64) -> Option<Self> {
        (chunks.is_power_of_two() && chunks <= 1 << Self::MAX_LAYER).then(|| MunroSize {
            layer: chunks.trailing_zeros(),
        })
    }

    /// The size of the munro `bin` (its layer), if acceptable.
    pub fn of_bin(bin: Bin) -> Option<Self> {
        (!bin.is_none() && bin.layer() <= Self::MAX_LAYER).then(|| MunroSize { layer: bin.layer() })
    }

    /// Chunks per munro.
    pub fn chunks(self) -> u64 {
        1 << self.layer
    }

    /// The munro's layer in the tree (leaves are layer 0).
    pub fn layer(self) -> u32 {
        self.layer
    }

    /// The munro covering `chunk`.
    pub fn munro_of(self, chunk: ChunkIndex) -> Option<Bin> {
        Bin::new(self.layer, chunk.0 >> self.layer)
    }

    /// The `n`th munro (chunks `n·size ..`).
    pub fn nth(self, n: u64) -> Option<Bin> {
        Bin::new(self.layer, n)
    }

    /// Which munro `bin` is, if it is one of this size.
    pub fn index_of(self, bin: Bin) -> Option<u64> {
        (!bin.is_none() && bin.layer() == self.layer).then(|| bin.offset())
    }

    /// The chunks of the `n`th munro.
    pub fn chunks_of(self, n: u64) -> Option<ChunkRange> {
        self.nth(n)?.chunks()
    }
}

/// A munro and its signature, as SIGNED_INTEGRITY carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedMunro {
    /// The munro's bin.
    pub bin: Bin,
    /// The munro hash (the subtree's root).
    pub hash: Hash,
    /// When the injector signed, as the profile writes it.
    pub timestamp: NtpTimestamp,
    /// The injector's signature.
    pub signature: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ntp_timestamps_count_from_1900_with_a_binary_fraction() {
        // 2026-11-26 00:00:00.5 UTC.
        let unix_us = 1_795_737_600_500_000;
        let ts = ntp_from_unix_micros(unix_us);
        assert_eq!(ts.0 >> 32, 1_795_737_600 + NTP_UNIX_OFFSET_S);
        assert_eq!(ts.0 & 0xffff_ffff, 1 << 31, "half a second");
        assert_eq!(unix_micros_from_ntp(ts), Some(unix_us));
        assert_eq!(unix_micros_from_ntp(NtpTimestamp(5 << 32)), None, "1900");
        assert_eq!(
            SignatureProfile::Libswift.timestamp(unix_us),
            NtpTimestamp(unix_us),
            "libswift writes Unix µs"
        );
    }

    #[test]
    fn rfc_signatures_cover_spec_timestamp_and_hash_libswift_the_hash() {
        let hash = Hash::from_slice(&[0xab; 20]);
        let bin = MunroSize::LIBSWIFT.nth(6).unwrap();
        let ts = NtpTimestamp(0x0102_0304_0506_0708);
        let rfc =
            SignatureProfile::Rfc7574.signed_bytes(bin, ChunkAddressing::ChunkRanges32, ts, &hash);
        let mut want = vec![0, 0, 0, 192, 0, 0, 0, 223];
        want.extend_from_slice(&ts.0.to_be_bytes());
        want.extend_from_slice(&[0xab; 20]);
        assert_eq!(rfc, want);
        let bins = SignatureProfile::Rfc7574.signed_bytes(bin, ChunkAddressing::Bins32, ts, &hash);
        assert_eq!(&bins[..4], &(bin.raw() as u32).to_be_bytes());
        let libswift =
            SignatureProfile::Libswift.signed_bytes(bin, ChunkAddressing::ChunkRanges32, ts, &hash);
        assert_eq!(libswift, [0xab; 20]);
    }

    #[test]
    fn munro_sizes_are_bounded_powers_of_two() {
        let m = MunroSize::new(32).unwrap();
        assert_eq!(m, MunroSize::LIBSWIFT);
        assert_eq!(m.munro_of(ChunkIndex(200)), Bin::new(5, 6));
        assert_eq!(m.chunks_of(6), ChunkRange::new(192u64, 223u64));
        assert_eq!(m.index_of(Bin::new(5, 6).unwrap()), Some(6));
        assert_eq!(m.index_of(Bin::new(4, 6).unwrap()), None);
        assert!(MunroSize::new(0).is_none());
        assert!(MunroSize::new(48).is_none());
        assert!(MunroSize::new(1 << 17).is_none());
        assert_eq!(MunroSize::new(1).map(MunroSize::layer), Some(0));
        assert!(MunroSize::of_bin(Bin::new(20, 0).unwrap()).is_none());
        assert!(MunroSize::of_bin(Bin::NONE).is_none());
    }

    #[test]
    fn profiles_have_names() {
        for p in [SignatureProfile::Rfc7574, SignatureProfile::Libswift] {
            assert_eq!(SignatureProfile::from_name(p.name()), Some(p));
        }
        assert_eq!(SignatureProfile::from_name("x"), None);
    }
}
