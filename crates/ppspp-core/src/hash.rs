//! Hash functions of the Merkle hash tree (RFC 7574 §7.6) and hash values.

use std::fmt;

use sha1::Sha1;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

/// The longest digest of any supported function (SHA-512).
pub const MAX_HASH_LEN: usize = 64;

/// A Merkle hash tree function, numbered as in protocol option 4
/// (RFC 7574 §7.6, Table 5). SHA-1 is the default and mandatory one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum HashFunction {
    /// SHA-1, 20 bytes (code 0, the default).
    #[default]
    Sha1,
    /// SHA-224, 28 bytes (code 1).
    Sha224,
    /// SHA-256, 32 bytes (code 2).
    Sha256,
    /// SHA-384, 48 bytes (code 3).
    Sha384,
    /// SHA-512, 64 bytes (code 4).
    Sha512,
}

impl HashFunction {
    /// Every function, in code order.
    pub const ALL: [HashFunction; 5] = [
        HashFunction::Sha1,
        HashFunction::Sha224,
        HashFunction::Sha256,
        HashFunction::Sha384,
        HashFunction::Sha512,
    ];

    /// The function with option-4 code `code`, if defined.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// The option-4 code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// Digest length in bytes.
    pub const fn len(self) -> usize {
        match self {
            HashFunction::Sha1 => 20,
            HashFunction::Sha224 => 28,
            HashFunction::Sha256 => 32,
            HashFunction::Sha384 => 48,
            HashFunction::Sha512 => 64,
        }
    }

    /// Never true; digests have a fixed non-zero length.
    pub const fn is_empty(self) -> bool {
        false
    }

    /// The lowercase name used on the command line (`sha1`, `sha256`, …).
    pub const fn name(self) -> &'static str {
        match self {
            HashFunction::Sha1 => "sha1",
            HashFunction::Sha224 => "sha224",
            HashFunction::Sha256 => "sha256",
            HashFunction::Sha384 => "sha384",
            HashFunction::Sha512 => "sha512",
        }
    }

    /// The function called `name` (`sha1`, `sha-1`, `SHA256`, …), if any.
    pub fn from_name(name: &str) -> Option<Self> {
        let norm: String = name
            .chars()
            .filter(|c| *c != '-' && *c != '_')
            .collect::<String>()
            .to_ascii_lowercase();
        Self::ALL.into_iter().find(|f| f.name() == norm)
    }

    /// The digest of `data`.
    pub fn digest(self, data: &[u8]) -> Hash {
        self.digest_parts(&[data])
    }

    /// The digest of the concatenation of `parts`.
    pub fn digest_parts(self, parts: &[&[u8]]) -> Hash {
        fn run<D: Digest>(parts: &[&[u8]]) -> Hash {
            let mut d = D::new();
            for p in parts {
                d.update(p);
            }
            Hash::from_slice(&d.finalize())
        }
        match self {
            HashFunction::Sha1 => run::<Sha1>(parts),
            HashFunction::Sha224 => run::<Sha224>(parts),
            HashFunction::Sha256 => run::<Sha256>(parts),
            HashFunction::Sha384 => run::<Sha384>(parts),
            HashFunction::Sha512 => run::<Sha512>(parts),
        }
    }

    /// The hash of an interior node: H(left ‖ right) (RFC 7574 §5.1).
    pub fn parent(self, left: &Hash, right: &Hash) -> Hash {
        self.digest_parts(&[left.as_bytes(), right.as_bytes()])
    }

    /// The all-zero hash of this function's length, which stands for an empty
    /// subtree (RFC 7574 §5.1).
    pub fn zero(self) -> Hash {
        Hash::zero(self.len())
    }
}

impl fmt::Display for HashFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A hash value of up to [`MAX_HASH_LEN`] bytes, stored inline.
///
/// Bytes past `len` are always zero, so derived equality is byte equality.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Hash {
    bytes: [u8; MAX_HASH_LEN],
    len: u8,
}

impl Hash {
    /// A hash holding `bytes`.
    ///
    /// # Panics
    /// When `bytes` is longer than [`MAX_HASH_LEN`]; callers size slices from
    /// a [`HashFunction`], never from input.
    #[inline]
    pub fn from_slice(bytes: &[u8]) -> Hash {
        assert!(
            bytes.len() <= MAX_HASH_LEN,
            "hash longer than {MAX_HASH_LEN} bytes"
        );
        let mut out = [0u8; MAX_HASH_LEN];
        // Fixed-length copies for the common digest sizes compile to a few
        // moves instead of a memcpy call; this runs for every INTEGRITY decoded.
        match bytes.len() {
            20 => out[..20].copy_from_slice(&bytes[..20]),
            32 => out[..32].copy_from_slice(&bytes[..32]),
            n => out[..n].copy_from_slice(bytes),
        }
        Hash {
            bytes: out,
            len: bytes.len() as u8,
        }
    }

    /// `len` zero bytes (capped at [`MAX_HASH_LEN`]).
    pub fn zero(len: usize) -> Hash {
        Hash {
            bytes: [0; MAX_HASH_LEN],
            len: len.min(MAX_HASH_LEN) as u8,
        }
    }

    /// The digest bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// The digest length.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether the hash has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every byte is zero (the empty-subtree hash).
    pub fn is_zero(&self) -> bool {
        self.as_bytes().iter().all(|&b| b == 0)
    }

    /// Lowercase hexadecimal.
    pub fn to_hex(&self) -> String {
        hex::encode(self.as_bytes())
    }

    /// Parse lowercase or uppercase hexadecimal of at most 64 bytes.
    pub fn from_hex(s: &str) -> Option<Hash> {
        let bytes = hex::decode(s).ok()?;
        (bytes.len() <= MAX_HASH_LEN && !bytes.is_empty()).then(|| Hash::from_slice(&bytes))
    }
}

impl fmt::Debug for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Hash({})", self.to_hex())
    }
}

impl fmt::Display for Hash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl AsRef<[u8]> for Hash {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_codes() {
        let lens: Vec<usize> = HashFunction::ALL.iter().map(|f| f.len()).collect();
        assert_eq!(lens, [20, 28, 32, 48, 64]);
        for f in HashFunction::ALL {
            assert_eq!(HashFunction::from_code(f.code()), Some(f));
            assert_eq!(f.digest(b"x").len(), f.len());
            assert_eq!(HashFunction::from_name(f.name()), Some(f));
        }
        assert_eq!(HashFunction::from_code(5), None);
        assert_eq!(
            HashFunction::from_name("SHA-256"),
            Some(HashFunction::Sha256)
        );
        assert_eq!(HashFunction::from_name("md5"), None);
    }

    #[test]
    fn known_digests() {
        // FIPS 180 "abc" test vectors.
        assert_eq!(
            HashFunction::Sha1.digest(b"abc").to_hex(),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            HashFunction::Sha256.digest(b"abc").to_hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let split = HashFunction::Sha1.digest_parts(&[b"a", b"bc"]);
        assert_eq!(split, HashFunction::Sha1.digest(b"abc"));
    }

    #[test]
    fn hex_round_trip_and_zero() {
        let h = HashFunction::Sha1.digest(b"a");
        assert_eq!(h.to_hex(), "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8");
        assert_eq!(Hash::from_hex(&h.to_hex()), Some(h));
        assert_eq!(Hash::from_hex("zz"), None);
        assert!(HashFunction::Sha1.zero().is_zero());
        assert!(!h.is_zero());
    }
}
