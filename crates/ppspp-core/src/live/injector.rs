//! The injector of a live stream (RFC 7574 §6.1.2): chunks arrive one by
//! one; every full munro's subtree is hashed and its root signed; only
//! chunks under a signed munro may be announced (§6.1.2.3: "MUST NOT send
//! a HAVE message for chunks in the new subtree until it has computed the
//! signed munro hash"). Old munros leave with the discard window.
//!
//! Sans-IO: the driver hands in each chunk's bytes and the wall-clock time
//! to stamp signatures with; the injector keeps hashes, never content.

use std::collections::VecDeque;

use super::key::LiveKeyPair;
use super::munro::{MunroSize, SignatureProfile, SignedMunro};
use super::subtree::MunroNodes;
use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::hash::{Hash, HashFunction};
use crate::wire::{ChunkAddressing, ContentIntegrity};

/// How a live stream's chunks are vouched for (RFC 7574 §6.1, option 3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LiveMethod {
    /// The unified Merkle tree (§6.1.2, code 3): a signature per munro,
    /// chunks verified against its hash. libswift's, and the default.
    #[default]
    UnifiedMerkleTree,
    /// Sign All (§6.1.1, code 2): a signature per chunk, over the chunk
    /// itself. Handled as munros of one chunk whose signature covers the
    /// chunk's bytes (`sign_all.rs`), sent without the hash.
    SignAll,
}

impl LiveMethod {
    /// The handshake's content integrity protection method (option 3).
    pub fn integrity(self) -> ContentIntegrity {
        match self {
            LiveMethod::UnifiedMerkleTree => ContentIntegrity::UnifiedMerkleTree,
            LiveMethod::SignAll => ContentIntegrity::SignAll,
        }
    }

    /// The method of option-3 `integrity`; a live peer naming none means
    /// the unified Merkle tree (§7.5).
    pub fn of(integrity: Option<ContentIntegrity>) -> Option<Self> {
        match integrity {
            None | Some(ContentIntegrity::UnifiedMerkleTree) => Some(LiveMethod::UnifiedMerkleTree),
            Some(ContentIntegrity::SignAll) => Some(LiveMethod::SignAll),
            _ => None,
        }
    }
}

/// The parameters of a live swarm that shape its munros and signatures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LiveParams {
    /// How chunks are vouched for.
    pub method: LiveMethod,
    /// Chunks per signed munro.
    pub munro: MunroSize,
    /// The Merkle hash function (libswift's live trees use SHA-1).
    pub hash_function: HashFunction,
    /// What a signature covers.
    pub profile: SignatureProfile,
    /// How chunk specs are written, for [`SignatureProfile::Rfc7574`].
    pub addressing: ChunkAddressing,
}

impl LiveParams {
    /// The parameters as the method needs them: Sign All's munros are
    /// single chunks signed in RFC 7574's profile.
    pub fn normalised(mut self) -> Self {
        if self.method == LiveMethod::SignAll {
            self.munro = MunroSize::SINGLE;
            self.profile = SignatureProfile::Rfc7574;
        }
        self
    }
}

impl Default for LiveParams {
    /// libswift's shape: 32-chunk munros, SHA-1, 32-bit chunk ranges, and
    /// RFC 7574's signatures.
    fn default() -> Self {
        LiveParams {
            method: LiveMethod::UnifiedMerkleTree,
            munro: MunroSize::LIBSWIFT,
            hash_function: HashFunction::Sha1,
            profile: SignatureProfile::Rfc7574,
            addressing: ChunkAddressing::ChunkRanges32,
        }
    }
}

/// A signed munro and the whole subtree under it.
#[derive(Debug)]
struct Signed {
    munro: SignedMunro,
    nodes: MunroNodes,
}

/// The injector's side of a live stream.
#[derive(Debug)]
pub struct LiveInjector {
    key: LiveKeyPair,
    params: LiveParams,
    /// Leaf hashes of the munro being filled.
    pending: Vec<Hash>,
    /// The next chunk's index.
    next: u64,
    /// Signed munros, oldest first, consecutive.
    signed: VecDeque<Signed>,
    /// How many munros to keep (at least one).
    keep: usize,
}

impl LiveInjector {
    /// An injector signing with `key`, keeping the newest `window_chunks`
    /// chunks' munros (rounded up to whole munros; `None`: keep all).
    pub fn new(key: LiveKeyPair, params: LiveParams, window_chunks: Option<u64>) -> Self {
        let params = params.normalised();
        let per = params.munro.chunks();
        let keep = window_chunks.map_or(usize::MAX, |w| {
            usize::try_from(w.div_ceil(per).max(1)).unwrap_or(usize::MAX)
        });
        LiveInjector {
            key,
            params,
            pending: Vec::with_capacity(per as usize),
            next: 0,
            signed: VecDeque::new(),
            keep,
        }
    }

    /// The swarm's parameters.
    pub fn params(&self) -> LiveParams {
        self.params
    }

    /// The swarm id: the public key (RFC 7574 §12.1).
    pub fn swarm_id(&self) -> Vec<u8> {
        self.key.public_key().swarm_id()
    }

    /// Takes the next chunk; returns the munro it completed, signed at
    /// `unix_us` (wall-clock µs since the Unix epoch), if it did.
    pub fn push_chunk(&mut self, data: &[u8], unix_us: u64) -> Option<&SignedMunro> {
        let hf = self.params.hash_function;
        self.pending.push(hf.digest(data));
        self.next += 1;
        if (self.pending.len() as u64) < self.params.munro.chunks() {
            return None;
        }
        let index = (self.next - 1) >> self.params.munro.layer();
        let bin = self.params.munro.nth(index)?;
        let nodes = MunroNodes::build(bin, &self.pending, hf);
        self.pending.clear();
        let hash = nodes.munro_hash()?;
        let timestamp = self.params.profile.timestamp(unix_us);
        let signed_bytes = match self.params.method {
            LiveMethod::UnifiedMerkleTree => {
                self.params
                    .profile
                    .signed_bytes(bin, self.params.addressing, timestamp, &hash)
            }
            // RFC 7574 §6.1.1: over the chunk's spec, timestamp and bytes.
            LiveMethod::SignAll => super::sign_all::signed_bytes(
                ChunkIndex(self.next - 1),
                self.params.addressing,
                timestamp,
                data,
            )?,
        };
        let munro = SignedMunro {
            bin,
            hash,
            timestamp,
            signature: self.key.sign(&signed_bytes),
        };
        self.signed.push_back(Signed { munro, nodes });
        while self.signed.len() > self.keep {
            self.signed.pop_front();
        }
        self.signed.back().map(|s| &s.munro)
    }

    /// The discard window in chunks, whole munros (`None`: keep all).
    pub fn window_chunks(&self) -> Option<u64> {
        let per = self.params.munro.chunks();
        (self.keep != usize::MAX).then(|| (self.keep as u64).saturating_mul(per))
    }

    /// Chunks taken so far (signed or not).
    pub fn chunks_taken(&self) -> u64 {
        self.next
    }

    /// The chunks that may be announced and served: those under the kept
    /// signed munros. `None` before the first munro is signed.
    pub fn available(&self) -> Option<ChunkRange> {
        let first = self.signed.front()?.munro.bin.chunks()?;
        let last = self.signed.back()?.munro.bin.chunks()?;
        ChunkRange::new(first.first(), last.last())
    }

    /// The newest signed munro: what a joining peer hooks in at.
    pub fn newest(&self) -> Option<&SignedMunro> {
        self.signed.back().map(|s| &s.munro)
    }

    fn find(&self, chunk: ChunkIndex) -> Option<&Signed> {
        let first = self.signed.front()?.munro.bin.offset();
        let index = chunk.0 >> self.params.munro.layer();
        let at = usize::try_from(index.checked_sub(first)?).ok()?;
        self.signed.get(at)
    }

    /// The signed munro covering `chunk`, if kept.
    pub fn munro_for(&self, chunk: ChunkIndex) -> Option<&SignedMunro> {
        self.find(chunk).map(|s| &s.munro)
    }

    /// The uncle hashes a receiver needs for `chunk` up to its munro, the
    /// munro's child layer first, skipping those `receiver_holds`; `None`
    /// when the chunk is not under a kept signed munro.
    pub fn uncles(
        &self,
        chunk: ChunkIndex,
        receiver_holds: impl FnMut(Bin) -> bool,
    ) -> Option<Vec<(Bin, Hash)>> {
        self.find(chunk)?.nodes.uncles(chunk, receiver_holds)
    }
}
