//! Handshake options of a live swarm (RFC 7574 §7.5, §7.7, §7.9): what we
//! offer and what we accept.
//!
//! The order and choice follow what libswift sends and reads (observed on
//! the wire, libswift dda307fe): options 0, 1, 2 (initiator only), 3 = 3
//! (unified Merkle tree), 5 (the signature algorithm), 6, 7 (the discard
//! window, after 6 because its width is 6's), then the end. Option 4 is
//! left out (libswift sends it for static swarms only; the live tree uses
//! the default SHA-1), and options 8 and 9 too: libswift's option-8 parser
//! swallows what follows. Option 3 is always sent: libswift leaves the
//! method uninitialised without it.

use super::{LiveMethod, LiveParams};
use crate::hash::HashFunction;
use crate::proto::IncompatibleOptions;
use crate::wire::{
    ChunkAddressing, ChunkSizeOption, ContentIntegrity, DiscardWindow, HandshakeOptions,
    LiveSignatureAlgorithm, PPSPP_VERSION,
};

/// What a live swarm announces of itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveShape {
    /// The munro size, hash function and signature profile.
    pub params: LiveParams,
    /// The key's algorithm (option 5).
    pub algorithm: LiveSignatureAlgorithm,
    /// Our discard window (option 7).
    pub window: DiscardWindow,
    /// The chunk size, when the swarm fixes it.
    pub chunk_size: Option<u32>,
}

/// The options of a HANDSHAKE we send for a live swarm; `swarm_id` (the
/// public key) only when we initiate (RFC 7574 §7.4).
pub fn our_live_options<'a>(
    swarm_id: Option<&'a [u8]>,
    shape: &LiveShape,
    addressing: ChunkAddressing,
) -> HandshakeOptions<'a> {
    HandshakeOptions {
        version: Some(PPSPP_VERSION),
        min_version: Some(PPSPP_VERSION),
        swarm_id,
        integrity: Some(shape.params.method.integrity()),
        signature_algorithm: Some(shape.algorithm),
        addressing: Some(addressing),
        discard_window: Some(shape.window),
        ..HandshakeOptions::default()
    }
}

/// What we take from a peer's acceptable HANDSHAKE in a live swarm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveOffer {
    /// The addressing the peer writes in (the RFC default when it names
    /// none).
    pub addressing: ChunkAddressing,
    /// The peer's discard window: what it keeps, so what we may ask of it
    /// (libswift announces chunks it no longer holds; RFC 7574 §7.9).
    pub window: DiscardWindow,
}

/// Checks a peer's options against our live swarm: a version range
/// holding ours, the unified Merkle tree (the live default when it names
/// none, RFC 7574 §7.5), our signature algorithm (DNSSEC 13 when it names
/// none, §7.7), our hash function and chunk size when it names them.
pub fn check_live_options(
    opts: &HandshakeOptions<'_>,
    shape: &LiveShape,
) -> Result<LiveOffer, IncompatibleOptions> {
    IncompatibleOptions::check_version(opts)?;
    if LiveMethod::of(opts.integrity) != Some(shape.params.method) {
        let theirs = opts
            .integrity
            .unwrap_or(ContentIntegrity::UnifiedMerkleTree);
        return Err(IncompatibleOptions::Integrity(theirs));
    }
    let theirs = opts.signature_algorithm.unwrap_or_default();
    if theirs != shape.algorithm {
        return Err(IncompatibleOptions::SignatureAlgorithm {
            theirs,
            ours: shape.algorithm,
        });
    }
    let hf: HashFunction = opts.hash_function.unwrap_or_default();
    if hf != shape.params.hash_function {
        return Err(IncompatibleOptions::HashFunction {
            theirs: hf,
            ours: shape.params.hash_function,
        });
    }
    if let (Some(theirs), Some(ours)) = (opts.chunk_size, shape.chunk_size) {
        if theirs != ChunkSizeOption::Fixed(ours) {
            return Err(IncompatibleOptions::LiveChunkSize { theirs, ours });
        }
    }
    Ok(LiveOffer {
        addressing: opts.addressing.unwrap_or_default(),
        window: opts.discard_window.unwrap_or(DiscardWindow::KeepAll),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::DatagramWriter;

    fn shape() -> LiveShape {
        LiveShape {
            params: LiveParams::default(),
            algorithm: LiveSignatureAlgorithm::ECDSAP256SHA256,
            window: DiscardWindow::Window(1024),
            chunk_size: Some(1024),
        }
    }

    #[test]
    fn our_options_are_libswifts_and_accepted_by_us() {
        let id = [13u8; 65];
        let ours = our_live_options(Some(&id), &shape(), ChunkAddressing::ChunkRanges32);
        assert_eq!(ours.integrity, Some(ContentIntegrity::UnifiedMerkleTree));
        assert_eq!(ours.hash_function, None, "option 4 only for static swarms");
        assert_eq!(ours.supported_messages, None, "no option 8 for libswift");
        assert_eq!(ours.chunk_size, None);
        let offer = check_live_options(&ours, &shape()).unwrap();
        assert_eq!(offer.window, DiscardWindow::Window(1024));
        assert_eq!(offer.addressing, ChunkAddressing::ChunkRanges32);
        // It encodes: options in ascending order, 7 after 6.
        let mut buf = [0u8; 256];
        let params = crate::wire::SwarmParams::default();
        let mut w = DatagramWriter::new(&mut buf, crate::wire::ChannelId(0), params).unwrap();
        w.push(&crate::wire::Message::Handshake {
            source: crate::wire::ChannelId(7),
            options: ours,
        })
        .unwrap();
    }

    #[test]
    fn a_libswift_client_handshake_is_accepted() {
        // What a libswift live client sends (observed): 0, 1, 2, 3 = 3,
        // 5 = 13, 6 = 2, 7 = all-ones; no option 4.
        let id = [13u8; 65];
        let theirs = HandshakeOptions {
            version: Some(1),
            min_version: Some(1),
            swarm_id: Some(&id),
            integrity: Some(ContentIntegrity::UnifiedMerkleTree),
            signature_algorithm: Some(LiveSignatureAlgorithm::ECDSAP256SHA256),
            addressing: Some(ChunkAddressing::ChunkRanges32),
            discard_window: Some(DiscardWindow::KeepAll),
            ..HandshakeOptions::default()
        };
        let offer = check_live_options(&theirs, &shape()).unwrap();
        assert_eq!(offer.window, DiscardWindow::KeepAll);
    }

    #[test]
    fn mismatches_are_refused_with_the_reason() {
        let base = our_live_options(None, &shape(), ChunkAddressing::ChunkRanges32);
        let check = |o: HandshakeOptions<'_>| check_live_options(&o, &shape()).unwrap_err();
        assert_eq!(
            check(HandshakeOptions {
                integrity: Some(ContentIntegrity::MerkleTree),
                ..base
            }),
            IncompatibleOptions::Integrity(ContentIntegrity::MerkleTree)
        );
        assert_eq!(
            check(HandshakeOptions {
                signature_algorithm: Some(LiveSignatureAlgorithm::ED25519),
                ..base
            }),
            IncompatibleOptions::SignatureAlgorithm {
                theirs: LiveSignatureAlgorithm::ED25519,
                ours: LiveSignatureAlgorithm::ECDSAP256SHA256
            }
        );
        assert_eq!(
            check(HandshakeOptions {
                hash_function: Some(HashFunction::Sha256),
                ..base
            }),
            IncompatibleOptions::HashFunction {
                theirs: HashFunction::Sha256,
                ours: HashFunction::Sha1
            }
        );
        assert_eq!(
            check(HandshakeOptions {
                chunk_size: Some(ChunkSizeOption::Fixed(8192)),
                ..base
            }),
            IncompatibleOptions::LiveChunkSize {
                theirs: ChunkSizeOption::Fixed(8192),
                ours: 1024
            }
        );
        assert_eq!(
            check(HandshakeOptions {
                version: None,
                ..base
            }),
            IncompatibleOptions::NoVersion
        );
        // No option 5: ECDSA P-256, the default, which is ours.
        let defaults = HandshakeOptions {
            signature_algorithm: None,
            integrity: None,
            ..base
        };
        assert!(check_live_options(&defaults, &shape()).is_ok());
    }
}
