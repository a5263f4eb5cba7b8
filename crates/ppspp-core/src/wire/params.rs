//! The negotiated swarm parameters that give messages their sizes.
//!
//! PPSPP messages carry no length fields (RFC 7574 §8.2): the size of a chunk
//! specification, a hash and a signature follows from the protocol options
//! agreed in the handshake. [`SwarmParams`] holds those values; the decoder
//! and encoder take them as input.

use crate::hash::HashFunction;

use super::options::HandshakeOptions;

/// A chunk addressing method, numbered as in protocol option 6
/// (RFC 7574 §7.8, Table 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ChunkAddressing {
    /// 32-bit bins (code 0).
    Bins32,
    /// 64-bit byte ranges (code 1).
    ByteRanges64,
    /// 32-bit chunk ranges (code 2), the default.
    #[default]
    ChunkRanges32,
    /// 64-bit bins (code 3).
    Bins64,
    /// 64-bit chunk ranges (code 4).
    ChunkRanges64,
}

impl ChunkAddressing {
    /// Every method, in code order.
    pub const ALL: [ChunkAddressing; 5] = [
        ChunkAddressing::Bins32,
        ChunkAddressing::ByteRanges64,
        ChunkAddressing::ChunkRanges32,
        ChunkAddressing::Bins64,
        ChunkAddressing::ChunkRanges64,
    ];

    /// The method with option-6 code `code`, if defined.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// The option-6 code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Width in bytes of one value: a bin, or one end of a range. The live
    /// discard window option has this width too (RFC 7574 §7.9).
    pub const fn value_len(self) -> usize {
        match self {
            ChunkAddressing::Bins32 | ChunkAddressing::ChunkRanges32 => 4,
            ChunkAddressing::ByteRanges64
            | ChunkAddressing::Bins64
            | ChunkAddressing::ChunkRanges64 => 8,
        }
    }

    /// Whether a chunk specification is a chunk range (codes 2 and 4), so
    /// any run of chunks costs one specification. With bins a run costs
    /// one per bin of its cover, so repeating chunks to join two runs can
    /// cost more than it saves.
    pub const fn is_chunk_ranges(self) -> bool {
        matches!(
            self,
            ChunkAddressing::ChunkRanges32 | ChunkAddressing::ChunkRanges64
        )
    }

    /// Length in bytes of one chunk specification.
    pub const fn spec_len(self) -> usize {
        match self {
            ChunkAddressing::Bins32 | ChunkAddressing::Bins64 => self.value_len(),
            _ => 2 * self.value_len(),
        }
    }
}

/// A content integrity protection method, protocol option 3
/// (RFC 7574 §7.5, Table 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum ContentIntegrity {
    /// No integrity protection (code 0). RFC 7574 erratum 4880 (verified)
    /// marks 0 unassigned, since a peer must name a method; the IANA
    /// registry still lists it, so it is decoded rather than refused.
    None,
    /// Merkle hash tree (code 1), the default for static content.
    #[default]
    MerkleTree,
    /// Every chunk signed (code 2), live content.
    SignAll,
    /// Unified Merkle tree (code 3), the default for live content.
    UnifiedMerkleTree,
}

impl ContentIntegrity {
    /// The method with option-3 code `code`, if defined.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(ContentIntegrity::None),
            1 => Some(ContentIntegrity::MerkleTree),
            2 => Some(ContentIntegrity::SignAll),
            3 => Some(ContentIntegrity::UnifiedMerkleTree),
            _ => None,
        }
    }

    /// The option-3 code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Whether this is a live method, whose swarm id is a public key.
    pub const fn is_live(self) -> bool {
        matches!(
            self,
            ContentIntegrity::SignAll | ContentIntegrity::UnifiedMerkleTree
        )
    }
}

/// A live signature algorithm: a DNSSEC algorithm number, protocol option 5
/// (RFC 7574 §7.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LiveSignatureAlgorithm(pub u8);

impl LiveSignatureAlgorithm {
    /// RSA/SHA-1 (RFC 4034), mandatory to implement.
    pub const RSASHA1: Self = Self(5);
    /// RSASHA1-NSEC3-SHA1 (RFC 5155).
    pub const RSASHA1_NSEC3_SHA1: Self = Self(7);
    /// RSA/SHA-256 (RFC 5702).
    pub const RSASHA256: Self = Self(8);
    /// RSA/SHA-512 (RFC 5702).
    pub const RSASHA512: Self = Self(10);
    /// ECDSA P-256 with SHA-256 (RFC 6605), the default.
    pub const ECDSAP256SHA256: Self = Self(13);
    /// ECDSA P-384 with SHA-384 (RFC 6605).
    pub const ECDSAP384SHA384: Self = Self(14);
    /// Ed25519 (RFC 8080).
    pub const ED25519: Self = Self(15);
    /// Ed448 (RFC 8080).
    pub const ED448: Self = Self(16);

    fn is_rsa(self) -> bool {
        matches!(self.0, 5 | 7 | 8 | 10)
    }

    /// The signature length in bytes, derived as RFC 7574 §8.9 prescribes:
    /// fixed for the elliptic-curve algorithms, the modulus length of the RSA
    /// public key for RSA. `swarm_id` is the live swarm id: a 1-byte DNSSEC
    /// algorithm number followed by the DNSKEY public key (RFC 7574 §6.1);
    /// for RSA the key is (exponent length, exponent, modulus) (RFC 3110 §2).
    pub fn signature_len(self, swarm_id: Option<&[u8]>) -> Option<usize> {
        match self.0 {
            13 | 15 => Some(64),
            14 => Some(96),
            16 => Some(114),
            _ if self.is_rsa() => {
                let key = swarm_id?.get(1..)?;
                let (&first, rest) = key.split_first()?;
                let (exp_len, rest) = if first == 0 {
                    let (len, rest) = rest.split_at_checked(2)?;
                    (usize::from(u16::from_be_bytes([len[0], len[1]])), rest)
                } else {
                    (usize::from(first), rest)
                };
                let modulus = rest.len().checked_sub(exp_len)?;
                (modulus > 0).then_some(modulus)
            }
            _ => None,
        }
    }
}

impl Default for LiveSignatureAlgorithm {
    fn default() -> Self {
        Self::ECDSAP256SHA256
    }
}

/// The chunk size option 9 (RFC 7574 §7.11): fixed, or variable (all-ones).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChunkSizeOption {
    /// Every chunk but the last has this many bytes (non-zero).
    Fixed(u32),
    /// Chunks vary in size (wire value 0xFFFFFFFF).
    Variable,
}

/// The live discard window option 7 (RFC 7574 §7.9), in chunks (bytes for
/// byte-range addressing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiscardWindow {
    /// The peer keeps everything (all-ones of the addressing width).
    KeepAll,
    /// The peer keeps this much before its newest chunk.
    Window(u64),
}

/// The parameters that give PPSPP messages their sizes, as negotiated in the
/// handshake. The defaults are RFC 7574's: 32-bit chunk ranges, SHA-1, no
/// live signatures, chunk size unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct SwarmParams {
    /// How chunk specifications are written.
    pub addressing: ChunkAddressing,
    /// The Merkle hash function, which sets the INTEGRITY hash length.
    pub hash_function: HashFunction,
    /// The SIGNED_INTEGRITY signature length, once known.
    pub signature_len: Option<usize>,
    /// The fixed chunk size, when known. Lets the decoder split a datagram
    /// holding several DATA messages (RFC 7574 §8.6); without it, a DATA
    /// payload runs to the end of the datagram.
    pub chunk_size: Option<u32>,
}

impl SwarmParams {
    /// Let the options of a HANDSHAKE take effect: every option present
    /// overrides the current value, absent ones leave it. The decoder and
    /// [`super::DatagramWriter`] call this so the messages after a HANDSHAKE
    /// in the same datagram use what it announced.
    pub fn apply(&mut self, options: &HandshakeOptions<'_>) {
        if let Some(a) = options.addressing {
            self.addressing = a;
        }
        if let Some(h) = options.hash_function {
            self.hash_function = h;
        }
        if let Some(len) = options
            .signature_algorithm
            .and_then(|alg| alg.signature_len(options.swarm_id))
        {
            self.signature_len = Some(len);
        }
        match options.chunk_size {
            Some(ChunkSizeOption::Fixed(n)) => self.chunk_size = Some(n),
            Some(ChunkSizeOption::Variable) => self.chunk_size = None,
            None => {}
        }
    }

    /// The INTEGRITY hash length.
    pub fn hash_len(&self) -> usize {
        self.hash_function.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addressing_sizes() {
        let spec: Vec<usize> = ChunkAddressing::ALL.iter().map(|a| a.spec_len()).collect();
        assert_eq!(spec, [4, 16, 8, 8, 16]);
        let width: Vec<usize> = ChunkAddressing::ALL.iter().map(|a| a.value_len()).collect();
        assert_eq!(width, [4, 8, 4, 8, 8]);
        let ranges: Vec<u8> = ChunkAddressing::ALL
            .iter()
            .filter(|a| a.is_chunk_ranges())
            .map(|a| a.code())
            .collect();
        assert_eq!(ranges, [2, 4]);
        for a in ChunkAddressing::ALL {
            assert_eq!(ChunkAddressing::from_code(a.code()), Some(a));
        }
        assert_eq!(ChunkAddressing::from_code(5), None);
        assert_eq!(ChunkAddressing::default(), ChunkAddressing::ChunkRanges32);
    }

    #[test]
    fn signature_lengths() {
        assert_eq!(
            LiveSignatureAlgorithm::ECDSAP256SHA256.signature_len(None),
            Some(64)
        );
        assert_eq!(
            LiveSignatureAlgorithm::ECDSAP384SHA384.signature_len(None),
            Some(96)
        );
        assert_eq!(
            LiveSignatureAlgorithm::ED25519.signature_len(None),
            Some(64)
        );
        assert_eq!(LiveSignatureAlgorithm(200).signature_len(None), None);
        // RSA: algorithm byte, exponent length 3, exponent, 128-byte modulus.
        let mut id = vec![5u8, 3, 1, 0, 1];
        id.extend([0xAB; 128]);
        assert_eq!(
            LiveSignatureAlgorithm::RSASHA1.signature_len(Some(&id)),
            Some(128)
        );
        // Long form: exponent length 0 then 2 bytes.
        let mut id = vec![8u8, 0, 0, 3, 1, 0, 1];
        id.extend([0xCD; 256]);
        assert_eq!(
            LiveSignatureAlgorithm::RSASHA256.signature_len(Some(&id)),
            Some(256)
        );
        // Truncated or missing keys give no length rather than a panic.
        assert_eq!(LiveSignatureAlgorithm::RSASHA1.signature_len(None), None);
        assert_eq!(
            LiveSignatureAlgorithm::RSASHA1.signature_len(Some(&[5])),
            None
        );
        assert_eq!(
            LiveSignatureAlgorithm::RSASHA1.signature_len(Some(&[5, 0, 1])),
            None
        );
        assert_eq!(
            LiveSignatureAlgorithm::RSASHA1.signature_len(Some(&[5, 9, 1, 2])),
            None
        );
        assert_eq!(
            LiveSignatureAlgorithm::RSASHA1.signature_len(Some(&[5, 1, 1])),
            None
        );
    }

    #[test]
    fn apply_overrides_only_present_options() {
        let mut p = SwarmParams {
            chunk_size: Some(1024),
            ..SwarmParams::default()
        };
        let opts = HandshakeOptions {
            version: Some(1),
            hash_function: Some(HashFunction::Sha256),
            ..HandshakeOptions::default()
        };
        p.apply(&opts);
        assert_eq!(p.hash_function, HashFunction::Sha256);
        assert_eq!(p.addressing, ChunkAddressing::ChunkRanges32);
        assert_eq!(p.chunk_size, Some(1024));
        let opts = HandshakeOptions {
            version: Some(1),
            addressing: Some(ChunkAddressing::Bins64),
            chunk_size: Some(ChunkSizeOption::Variable),
            signature_algorithm: Some(LiveSignatureAlgorithm::ECDSAP384SHA384),
            ..HandshakeOptions::default()
        };
        p.apply(&opts);
        assert_eq!(p.addressing, ChunkAddressing::Bins64);
        assert_eq!(p.chunk_size, None);
        assert_eq!(p.signature_len, Some(96));
    }
}
