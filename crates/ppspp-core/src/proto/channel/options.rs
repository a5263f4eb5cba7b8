//! Handshake options: what we offer and what we accept (RFC 7574 §3.1, §7).

use crate::chunk::ChunkSize;
use crate::hash::HashFunction;
use crate::proto::IncompatibleOptions;
use crate::wire::{
    ChunkAddressing, ChunkSizeOption, ContentIntegrity, HandshakeOptions, MessageType,
    SupportedMessages, PPSPP_VERSION,
};

/// The message types this implementation acts on (option 8): everything but
/// the live SIGNED_INTEGRITY and the certificate-based PEX_REScert.
fn supported_messages() -> SupportedMessages {
    SupportedMessages::from_types(
        MessageType::ALL
            .into_iter()
            .filter(|t| !matches!(t, MessageType::SignedIntegrity | MessageType::PexResCert)),
    )
}

/// The options of a HANDSHAKE we send for a static swarm.
///
/// `extended` adds options 8 (supported messages) and 9 (chunk size), which
/// libswift cannot handle; `swarm_id` is mandatory for the initiator
/// (RFC 7574 §7.4) and left out of answers, as libswift does.
pub(crate) fn our_options<'a>(
    root: &'a [u8],
    hash_function: HashFunction,
    chunk_size: ChunkSize,
    addressing: ChunkAddressing,
    extended: bool,
    swarm_id: bool,
) -> HandshakeOptions<'a> {
    HandshakeOptions {
        version: Some(PPSPP_VERSION),
        min_version: Some(PPSPP_VERSION),
        swarm_id: swarm_id.then_some(root),
        integrity: Some(ContentIntegrity::MerkleTree),
        hash_function: Some(hash_function),
        addressing: Some(addressing),
        supported_messages: extended.then(supported_messages),
        chunk_size: extended.then_some(ChunkSizeOption::Fixed(chunk_size.bytes())),
        ..HandshakeOptions::default()
    }
}

/// What we take from a peer's acceptable HANDSHAKE.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Offer {
    /// The addressing the peer uses (the RFC default when it names none).
    pub addressing: ChunkAddressing,
    /// Whether the peer sent options 8 or 9: answer in kind.
    pub extended: bool,
    /// A live peer's discard window in chunks (option 7; `None`: it keeps
    /// everything, or the swarm is static).
    pub window: Option<u64>,
}

/// Checks a peer's options against our swarm: a version range holding
/// ours, static Merkle integrity, our hash function and chunk size. Returns
/// why not, for a refusal.
pub(crate) fn check_options(
    opts: &HandshakeOptions<'_>,
    hash_function: HashFunction,
    chunk_size: ChunkSize,
) -> Result<Offer, IncompatibleOptions> {
    IncompatibleOptions::check_version(opts)?;
    match opts.integrity {
        None | Some(ContentIntegrity::MerkleTree) => {}
        Some(other) => return Err(IncompatibleOptions::Integrity(other)),
    }
    let hf = opts.hash_function.unwrap_or_default();
    if hf != hash_function {
        return Err(IncompatibleOptions::HashFunction {
            theirs: hf,
            ours: hash_function,
        });
    }
    match opts.chunk_size {
        None => {}
        Some(ChunkSizeOption::Fixed(n)) if n == chunk_size.bytes() => {}
        Some(other) => {
            return Err(IncompatibleOptions::ChunkSize {
                theirs: other,
                ours: chunk_size,
            })
        }
    }
    Ok(Offer {
        addressing: opts.addressing.unwrap_or_default(),
        extended: opts.supported_messages.is_some() || opts.chunk_size.is_some(),
        window: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_and_checks() {
        let root = [7u8; 20];
        let cs = ChunkSize::DEFAULT;
        let ours = our_options(
            &root,
            HashFunction::Sha1,
            cs,
            ChunkAddressing::ChunkRanges32,
            true,
            true,
        );
        let offer = check_options(&ours, HashFunction::Sha1, cs).unwrap();
        assert_eq!(
            offer,
            Offer {
                addressing: ChunkAddressing::ChunkRanges32,
                extended: true,
                window: None,
            }
        );
        let plain = our_options(
            &root,
            HashFunction::Sha1,
            cs,
            ChunkAddressing::Bins64,
            false,
            true,
        );
        assert_eq!(plain.chunk_size, None);
        assert_eq!(plain.supported_messages, None);
        assert!(
            !check_options(&plain, HashFunction::Sha1, cs)
                .unwrap()
                .extended
        );
        let e = check_options(&ours, HashFunction::Sha256, cs).unwrap_err();
        assert_eq!(
            e,
            IncompatibleOptions::HashFunction {
                theirs: HashFunction::Sha1,
                ours: HashFunction::Sha256
            }
        );
        assert!(e.to_string().contains("hash function"));
        let big = ChunkSize::new(8192).unwrap();
        let e = check_options(&ours, HashFunction::Sha1, big).unwrap_err();
        assert_eq!(
            e,
            IncompatibleOptions::ChunkSize {
                theirs: ChunkSizeOption::Fixed(1024),
                ours: big
            }
        );
        assert!(e.to_string().contains("chunk size"));
        let future = HandshakeOptions {
            version: Some(3),
            min_version: Some(2),
            ..ours
        };
        let e = check_options(&future, HashFunction::Sha1, cs).unwrap_err();
        assert_eq!(e, IncompatibleOptions::Versions { min: 2, max: 3 });
        assert_eq!(e.to_string(), "versions 2..=3 do not include 1");
        let live = HandshakeOptions {
            integrity: Some(ContentIntegrity::UnifiedMerkleTree),
            ..ours
        };
        assert_eq!(
            check_options(&live, HashFunction::Sha1, cs),
            Err(IncompatibleOptions::Integrity(
                ContentIntegrity::UnifiedMerkleTree
            ))
        );
        let silent = HandshakeOptions {
            version: None,
            ..ours
        };
        assert_eq!(
            check_options(&silent, HashFunction::Sha1, cs),
            Err(IncompatibleOptions::NoVersion)
        );
        let supported = ours.supported_messages.unwrap();
        assert!(supported.supports(MessageType::Request));
        assert!(!supported.supports(MessageType::SignedIntegrity));
    }
}
