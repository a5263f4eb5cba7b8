//! The keys of a live swarm: the injector signs with its private key, and
//! the swarm id is its public key (RFC 7574 §6.1, §12.1), so any peer can
//! check a signature against the swarm it joined and nothing else.
//!
//! Encodings are DNSSEC's, as RFC 7574 §6.1 and §12.1 ask: the swarm id is
//! the 1-byte DNSSEC algorithm number followed by the key as a DNSKEY
//! record's public-key field, and a signature is as an RRSIG record's.
//! - ECDSA P-256/SHA-256 (algorithm 13, RFC 6605 §4): key = the point's
//!   x ‖ y (64 bytes); signature = r ‖ s (64 bytes), over SHA-256 of the
//!   signed bytes;
//! - Ed25519 (algorithm 15, RFC 8080 §3): key = the 32-byte public key;
//!   signature = the 64-byte Ed25519 signature of the signed bytes.
//!
//! Both sign deterministically (RFC 6979 nonces for ECDSA; Ed25519 is
//! deterministic by design), so the core needs no randomness to sign; a
//! key pair is made from 32 secret bytes the driver draws.

use ed25519_dalek::Signer as _;
use ed25519_dalek::Verifier as _;

use crate::wire::LiveSignatureAlgorithm;

/// Why a key or a swarm id cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LiveKeyError {
    /// The algorithm is not one this implementation signs or verifies.
    #[error("live signature algorithm {0} is not supported (13 ECDSA P-256, 15 Ed25519)")]
    Unsupported(u8),
    /// The swarm id is empty: it has no algorithm byte.
    #[error("live swarm id is empty")]
    EmptySwarmId,
    /// The public key does not decode for its algorithm.
    #[error("live swarm id holds no valid public key for algorithm {0}")]
    BadPublicKey(u8),
    /// The secret bytes are not a valid private key (for P-256: zero, or
    /// not below the group order).
    #[error("secret bytes are not a valid private key for algorithm {0}")]
    BadSecret(u8),
}

/// The algorithms a live swarm can use here, in the order of preference.
pub const SUPPORTED: [LiveSignatureAlgorithm; 2] = [
    LiveSignatureAlgorithm::ECDSAP256SHA256,
    LiveSignatureAlgorithm::ED25519,
];

/// An injector's private key (the source of a live swarm).
#[derive(Clone)]
pub enum LiveKeyPair {
    /// ECDSA P-256 with SHA-256, DNSSEC algorithm 13.
    EcdsaP256(p256::ecdsa::SigningKey),
    /// Ed25519, DNSSEC algorithm 15.
    Ed25519(ed25519_dalek::SigningKey),
}

impl std::fmt::Debug for LiveKeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.debug_struct("LiveKeyPair")
            .field("algorithm", &self.algorithm().0)
            .finish_non_exhaustive()
    }
}

impl LiveKeyPair {
    /// The key pair of `algorithm` whose secret is `secret` (32 bytes drawn
    /// by the driver from the OS, or loaded from a key file).
    pub fn from_secret(
        algorithm: LiveSignatureAlgorithm,
        secret: &[u8; 32],
    ) -> Result<Self, LiveKeyError> {
        match algorithm {
            LiveSignatureAlgorithm::ECDSAP256SHA256 => {
                p256::ecdsa::SigningKey::from_bytes(secret.into())
                    .map(LiveKeyPair::EcdsaP256)
                    .map_err(|_| LiveKeyError::BadSecret(algorithm.0))
            }
            LiveSignatureAlgorithm::ED25519 => Ok(LiveKeyPair::Ed25519(
                ed25519_dalek::SigningKey::from_bytes(secret),
            )),
            other => Err(LiveKeyError::Unsupported(other.0)),
        }
    }

    /// The 32 secret bytes, for a key file.
    pub fn secret(&self) -> [u8; 32] {
        match self {
            LiveKeyPair::EcdsaP256(k) => k.to_bytes().into(),
            LiveKeyPair::Ed25519(k) => k.to_bytes(),
        }
    }

    /// The DNSSEC algorithm.
    pub fn algorithm(&self) -> LiveSignatureAlgorithm {
        match self {
            LiveKeyPair::EcdsaP256(_) => LiveSignatureAlgorithm::ECDSAP256SHA256,
            LiveKeyPair::Ed25519(_) => LiveSignatureAlgorithm::ED25519,
        }
    }

    /// The public half, which peers verify with.
    pub fn public_key(&self) -> LivePublicKey {
        match self {
            LiveKeyPair::EcdsaP256(k) => LivePublicKey::EcdsaP256(*k.verifying_key()),
            LiveKeyPair::Ed25519(k) => LivePublicKey::Ed25519(k.verifying_key()),
        }
    }

    /// The signature of `message`, in DNSSEC's encoding for the algorithm.
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match self {
            LiveKeyPair::EcdsaP256(k) => {
                let sig: p256::ecdsa::Signature = k.sign(message);
                sig.to_bytes().to_vec()
            }
            LiveKeyPair::Ed25519(k) => k.sign(message).to_bytes().to_vec(),
        }
    }
}

/// The public key of a live swarm: what its swarm id holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LivePublicKey {
    /// ECDSA P-256 with SHA-256, DNSSEC algorithm 13.
    EcdsaP256(p256::ecdsa::VerifyingKey),
    /// Ed25519, DNSSEC algorithm 15.
    Ed25519(ed25519_dalek::VerifyingKey),
}

impl LivePublicKey {
    /// The key a live swarm id names: its first byte is the DNSSEC
    /// algorithm, the rest the DNSKEY public key (RFC 7574 §12.1).
    pub fn from_swarm_id(swarm_id: &[u8]) -> Result<Self, LiveKeyError> {
        let (&alg, key) = swarm_id.split_first().ok_or(LiveKeyError::EmptySwarmId)?;
        match LiveSignatureAlgorithm(alg) {
            LiveSignatureAlgorithm::ECDSAP256SHA256 => {
                if key.len() != 64 {
                    return Err(LiveKeyError::BadPublicKey(alg));
                }
                // RFC 6605 §4: x ‖ y, SEC1's uncompressed point without
                // its 0x04 prefix.
                let mut sec1 = [0u8; 65];
                sec1[0] = 4;
                sec1[1..].copy_from_slice(key);
                p256::ecdsa::VerifyingKey::from_sec1_bytes(&sec1)
                    .map(LivePublicKey::EcdsaP256)
                    .map_err(|_| LiveKeyError::BadPublicKey(alg))
            }
            LiveSignatureAlgorithm::ED25519 => {
                let bytes: &[u8; 32] = key
                    .try_into()
                    .map_err(|_| LiveKeyError::BadPublicKey(alg))?;
                ed25519_dalek::VerifyingKey::from_bytes(bytes)
                    .map(LivePublicKey::Ed25519)
                    .map_err(|_| LiveKeyError::BadPublicKey(alg))
            }
            other => Err(LiveKeyError::Unsupported(other.0)),
        }
    }

    /// The DNSSEC algorithm.
    pub fn algorithm(&self) -> LiveSignatureAlgorithm {
        match self {
            LivePublicKey::EcdsaP256(_) => LiveSignatureAlgorithm::ECDSAP256SHA256,
            LivePublicKey::Ed25519(_) => LiveSignatureAlgorithm::ED25519,
        }
    }

    /// The swarm id: the algorithm byte and the DNSKEY public key.
    pub fn swarm_id(&self) -> Vec<u8> {
        let mut id = vec![self.algorithm().0];
        match self {
            LivePublicKey::EcdsaP256(k) => {
                let point = k.to_encoded_point(false);
                id.extend_from_slice(&point.as_bytes()[1..]);
            }
            LivePublicKey::Ed25519(k) => id.extend_from_slice(k.as_bytes()),
        }
        id
    }

    /// The signature length in bytes (RFC 7574 §8.9: set by the algorithm).
    pub fn signature_len(&self) -> usize {
        64
    }

    /// Whether `signature` is the key's signature of `message`. Any byte
    /// string is accepted as input: a malformed signature is a false.
    pub fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        match self {
            LivePublicKey::EcdsaP256(k) => p256::ecdsa::Signature::from_slice(signature)
                .is_ok_and(|sig| k.verify(message, &sig).is_ok()),
            LivePublicKey::Ed25519(k) => ed25519_dalek::Signature::from_slice(signature)
                .is_ok_and(|sig| k.verify(message, &sig).is_ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs() -> Vec<LiveKeyPair> {
        SUPPORTED
            .iter()
            .map(|&alg| LiveKeyPair::from_secret(alg, &[7; 32]).unwrap())
            .collect()
    }

    #[test]
    fn a_signature_verifies_against_the_swarm_id_and_nothing_else() {
        for pair in pairs() {
            let id = pair.public_key().swarm_id();
            assert_eq!(id[0], pair.algorithm().0);
            let key = LivePublicKey::from_swarm_id(&id).unwrap();
            assert_eq!(key, pair.public_key());
            let sig = pair.sign(b"munro 0-31");
            assert_eq!(sig.len(), key.signature_len());
            assert!(key.verify(b"munro 0-31", &sig));
            assert!(!key.verify(b"munro 0-32", &sig), "another message");
            let mut forged = sig.clone();
            forged[10] ^= 1;
            assert!(!key.verify(b"munro 0-31", &forged), "a flipped bit");
            assert!(!key.verify(b"munro 0-31", &sig[..63]), "cut short");
            assert!(!key.verify(b"munro 0-31", &[]), "empty");
            let other = LiveKeyPair::from_secret(pair.algorithm(), &[8; 32]).unwrap();
            assert!(
                !other.public_key().verify(b"munro 0-31", &sig),
                "another key"
            );
        }
    }

    #[test]
    fn swarm_ids_have_dnssec_lengths() {
        let [p256, ed] = [0, 1].map(|i| pairs()[i].public_key().swarm_id());
        assert_eq!(p256.len(), 1 + 64, "RFC 6605: x ‖ y");
        assert_eq!(ed.len(), 1 + 32, "RFC 8080: the raw key");
    }

    #[test]
    fn the_secret_round_trips() {
        for pair in pairs() {
            let again = LiveKeyPair::from_secret(pair.algorithm(), &pair.secret()).unwrap();
            assert_eq!(again.public_key(), pair.public_key());
        }
    }

    #[test]
    fn bad_swarm_ids_and_secrets_are_errors() {
        assert_eq!(
            LivePublicKey::from_swarm_id(&[]),
            Err(LiveKeyError::EmptySwarmId)
        );
        assert_eq!(
            LivePublicKey::from_swarm_id(&[5, 1, 3, 0]),
            Err(LiveKeyError::Unsupported(5))
        );
        assert_eq!(
            LivePublicKey::from_swarm_id(&[13; 40]),
            Err(LiveKeyError::BadPublicKey(13))
        );
        // 64 bytes that are no point of the curve.
        let mut not_on_curve = vec![13u8];
        not_on_curve.extend([0xff; 64]);
        assert_eq!(
            LivePublicKey::from_swarm_id(&not_on_curve),
            Err(LiveKeyError::BadPublicKey(13))
        );
        assert_eq!(
            LiveKeyPair::from_secret(LiveSignatureAlgorithm::ECDSAP256SHA256, &[0; 32]).err(),
            Some(LiveKeyError::BadSecret(13))
        );
        assert_eq!(
            LiveKeyPair::from_secret(LiveSignatureAlgorithm::RSASHA1, &[1; 32]).err(),
            Some(LiveKeyError::Unsupported(5))
        );
    }
}
