//! Why a peer's channel is closed for breaking the protocol: values a
//! driver can match on ([`super::CloseReason::Protocol`]), whose messages
//! are what the user is told.

use crate::chunk::ChunkSize;
use crate::hash::HashFunction;
use crate::wire::{
    ChunkSizeOption, ContentIntegrity, HandshakeOptions, LiveSignatureAlgorithm, PPSPP_VERSION,
};

/// How a peer broke the protocol.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolViolation {
    /// Its handshake carries options we cannot accept.
    #[error(transparent)]
    Options(#[from] IncompatibleOptions),
    /// It announced too many chunks that cannot exist (beyond the content,
    /// or past the allowance while the size is unknown; see
    /// `channel/download/have_limits.rs`).
    #[error("announced chunks that cannot exist")]
    ImpossibleChunks,
}

/// What in a peer's HANDSHAKE options we cannot accept (RFC 7574 §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IncompatibleOptions {
    /// No version option (option 0 is mandatory, RFC 7574 §7.2).
    #[error("no version option")]
    NoVersion,
    /// Its version range leaves ours out (RFC 7574 §7.2–7.3).
    #[error("versions {min}..={max} do not include {ours}", ours = PPSPP_VERSION)]
    Versions {
        /// Its minimum version (its maximum when it names none).
        min: u8,
        /// Its maximum version.
        max: u8,
    },
    /// Another content integrity method than the swarm's: a live one for
    /// static content, or the reverse (RFC 7574 §7.5).
    #[error("integrity method {0:?} is not the swarm's")]
    Integrity(ContentIntegrity),
    /// Another Merkle hash function than the swarm's (RFC 7574 §7.6).
    #[error("hash function {theirs} where the swarm uses {ours}")]
    HashFunction {
        /// The peer's.
        theirs: HashFunction,
        /// The swarm's.
        ours: HashFunction,
    },
    /// Another chunk size than the swarm's (RFC 7574 §7.11).
    #[error("chunk size {theirs:?} where the swarm uses {ours}")]
    ChunkSize {
        /// The peer's.
        theirs: ChunkSizeOption,
        /// The swarm's.
        ours: ChunkSize,
    },
    /// Another live signature algorithm than the swarm's key's (RFC 7574
    /// §7.7; the default is ECDSA P-256, 13).
    #[error("live signature algorithm {theirs:?} where the swarm signs with {ours:?}")]
    SignatureAlgorithm {
        /// The peer's (or the default).
        theirs: LiveSignatureAlgorithm,
        /// The swarm's.
        ours: LiveSignatureAlgorithm,
    },
    /// Another chunk size than a live swarm's (RFC 7574 §7.11).
    #[error("chunk size {theirs:?} where the live swarm uses {ours}")]
    LiveChunkSize {
        /// The peer's.
        theirs: ChunkSizeOption,
        /// The swarm's, in bytes.
        ours: u32,
    },
}

impl IncompatibleOptions {
    /// Checks min/max versioning (RFC 6709 §4.1, RFC 7574 §7.2–7.3): the
    /// peer's range must hold ours.
    pub(crate) fn check_version(opts: &HandshakeOptions<'_>) -> Result<(), IncompatibleOptions> {
        let max = opts.version.ok_or(IncompatibleOptions::NoVersion)?;
        let min = opts.min_version.unwrap_or(max);
        if !(min..=max).contains(&PPSPP_VERSION) {
            return Err(IncompatibleOptions::Versions { min, max });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_say_what_went_wrong() {
        assert_eq!(
            ProtocolViolation::ImpossibleChunks.to_string(),
            "announced chunks that cannot exist"
        );
        let options = IncompatibleOptions::HashFunction {
            theirs: HashFunction::Sha256,
            ours: HashFunction::Sha1,
        };
        let v = ProtocolViolation::from(options);
        assert_eq!(v.to_string(), options.to_string());
        // The options are the message, not a cause told again after it.
        assert!(std::error::Error::source(&v).is_none());
        assert_eq!(
            IncompatibleOptions::NoVersion.to_string(),
            "no version option"
        );
        assert_eq!(
            IncompatibleOptions::Integrity(ContentIntegrity::SignAll).to_string(),
            "integrity method SignAll is not the swarm's"
        );
    }
}
