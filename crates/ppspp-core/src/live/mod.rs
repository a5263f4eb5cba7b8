//! Live swarms (RFC 7574 §6.1): content that grows while it is served,
//! signed by its injector, whose public key is the swarm id. How libswift's
//! live mode behaves on the wire, where it departs from the RFC, and how to
//! run it as a test peer: `docs/libswift-live.md`.
//!
//! - [`key`]: the injector's key pair and the swarm id's public key, by
//!   DNSSEC algorithm number (§6.1, §12.1);
//! - [`munro`]: munro sizes, signature profiles and signed munros (§6.1.2);
//! - [`sign_all`]: the second method, a signature per chunk (§6.1.1);
//! - [`subtree`]: the hashes under one munro, and verifying chunks against it;
//! - [`injector`]: the source: chunks in, signed munros and uncle hashes out;
//! - [`handshake`]: the handshake options of a live swarm (§7.5, §7.7, §7.9);
//! - [`verifier`]: a receiver: signed munros and chunks checked, within the
//!   discard window (§6.1.3).

pub mod handshake;
pub mod injector;
pub mod key;
pub mod munro;
pub mod sign_all;
pub mod subtree;
pub mod verifier;

pub use handshake::{check_live_options, our_live_options, LiveOffer, LiveShape};
pub use injector::{LiveInjector, LiveMethod, LiveParams};
pub use key::{LiveKeyError, LiveKeyPair, LivePublicKey};
pub use munro::{MunroSize, SignatureProfile, SignedMunro};
pub use verifier::{LiveError, LiveVerifier, MunroVerdict};
