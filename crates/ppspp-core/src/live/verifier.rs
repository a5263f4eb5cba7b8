//! A receiver's side of a live stream (RFC 7574 §6.1.2): munros are
//! trusted once their signature verifies against the swarm id, chunks
//! once they climb to a trusted munro. Also what a peer relays from: the
//! signed munros and trusted hashes it holds.
//!
//! Hostile input is bounded here: at most one unverified munro hash is
//! held (the INTEGRITY just before a SIGNED_INTEGRITY, RFC 7574
//! §6.1.2.3, the order libswift needs), offered uncle hashes are kept
//! only inside trusted munros, and trusted munros only inside the discard
//! window (§6.1.3, option 7), so memory is bounded by the window however
//! long the stream runs. A munro older than the window is refused, so a
//! peer cannot make us re-open the past.

use std::collections::BTreeMap;

use super::injector::{LiveMethod, LiveParams};
use super::key::LivePublicKey;
use super::munro::{MunroSize, SignedMunro};
use super::sign_all::{self, ChunkSignature};
use super::subtree::{ClimbError, MunroNodes};
use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::hash::Hash;
use crate::wire::NtpTimestamp;

/// Why a live message or chunk was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LiveError {
    /// A SIGNED_INTEGRITY whose munro hash did not come just before it.
    #[error("signed munro {0:?} without its munro hash before it")]
    NoMunroHash(Bin),
    /// The signature does not verify against the swarm id.
    #[error("signature of munro {0:?} does not verify")]
    BadSignature(Bin),
    /// A munro of another size than the swarm's (or too large a one).
    #[error("munro {0:?} has the wrong size")]
    WrongMunroSize(Bin),
    /// A munro older than the discard window.
    #[error("munro {0:?} is older than the discard window")]
    OutsideWindow(Bin),
    /// A chunk under no trusted munro: beyond the live edge as we know
    /// it, or discarded.
    #[error("chunk {0} is under no trusted munro")]
    NoMunro(ChunkIndex),
    /// An uncle hash needed to verify the chunk was not sent.
    #[error("chunk {0} lacks the uncle hash {1:?}")]
    MissingUncle(ChunkIndex, Bin),
    /// The chunk, or an uncle sent for it, does not hash to its munro.
    #[error("chunk {0} does not verify against its munro")]
    Mismatch(ChunkIndex),
}

impl LiveError {
    /// Whether the error proves the sender wrong (a forged signature or
    /// hash), rather than a race or a gap a later message may fill.
    pub fn is_forgery(self) -> bool {
        matches!(
            self,
            LiveError::BadSignature(_) | LiveError::Mismatch(_) | LiveError::WrongMunroSize(_)
        )
    }
}

/// What an accepted SIGNED_INTEGRITY did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MunroVerdict {
    /// A munro not held before, now trusted.
    New,
    /// A munro trusted already (its signature is not checked again).
    Known,
    /// Sign All: a chunk's signature, checked when its DATA comes.
    Pending,
}

/// A trusted munro and the hashes under it.
#[derive(Debug)]
struct Trusted {
    munro: SignedMunro,
    nodes: MunroNodes,
}

/// The receiver's trusted munros of one live swarm.
#[derive(Debug)]
pub struct LiveVerifier {
    key: LivePublicKey,
    params: LiveParams,
    /// Whether the munro size is known (given, or learned from the first
    /// trusted munro, as libswift's clients learn it).
    size_known: bool,
    /// The INTEGRITY hash received last, if it could be a munro's.
    candidate: Option<(Bin, Hash)>,
    /// Sign All: the chunk signature received last, for the DATA after it
    /// (one held, as `candidate`: a peer cannot make us keep more).
    pending: Option<(Bin, NtpTimestamp, Vec<u8>)>,
    /// Trusted munros by index.
    trusted: BTreeMap<u64, Trusted>,
    /// The discard window, in chunks (`None`: keep all).
    window_chunks: Option<u64>,
    /// The discard window, in munros (at least one).
    keep: u64,
}

impl LiveVerifier {
    /// A verifier for the swarm of `key`. `params.munro` is trusted when
    /// `size_known`, else learned from the first munro that verifies.
    /// Munros covering the newest `window_chunks` chunks are kept
    /// (rounded up to whole munros; `None`: all).
    pub fn new(
        key: LivePublicKey,
        params: LiveParams,
        size_known: bool,
        window_chunks: Option<u64>,
    ) -> Self {
        let params = params.normalised();
        let size_known = size_known || params.method == LiveMethod::SignAll;
        let mut v = LiveVerifier {
            key,
            params,
            size_known,
            candidate: None,
            pending: None,
            trusted: BTreeMap::new(),
            window_chunks,
            keep: u64::MAX,
        };
        v.size_window();
        v
    }

    /// The window in munros of the current size.
    fn size_window(&mut self) {
        let per = self.params.munro.chunks();
        self.keep = self
            .window_chunks
            .map_or(u64::MAX, |w| w.div_ceil(per).max(1));
    }

    /// The discard window in chunks, as given (`None`: keep all).
    pub fn window_chunks(&self) -> Option<u64> {
        self.window_chunks
    }

    /// The swarm's parameters (the munro size as learned so far).
    pub fn params(&self) -> LiveParams {
        self.params
    }

    /// Takes an INTEGRITY hash: an uncle inside a trusted munro, or a
    /// munro hash that a SIGNED_INTEGRITY should follow.
    pub fn offer_hash(&mut self, bin: Bin, hash: Hash) {
        self.candidate = Some((bin, hash));
        let layer = self.params.munro.layer();
        if bin.is_none() || bin.layer() >= layer {
            return;
        }
        let index = (bin.base_left().raw() / 2) >> layer;
        if let Some(t) = self.trusted.get_mut(&index) {
            t.nodes.offer(bin, hash);
        }
    }

    /// Takes a SIGNED_INTEGRITY for the munro `bin`: trusted if its hash
    /// came just before and the signature verifies.
    pub fn offer_signed(
        &mut self,
        bin: Bin,
        timestamp: NtpTimestamp,
        signature: &[u8],
    ) -> Result<MunroVerdict, LiveError> {
        let size = if self.size_known {
            self.params.munro
        } else {
            MunroSize::of_bin(bin).ok_or(LiveError::WrongMunroSize(bin))?
        };
        let index = size.index_of(bin).ok_or(LiveError::WrongMunroSize(bin))?;
        if self.size_known && self.trusted.contains_key(&index) {
            return Ok(MunroVerdict::Known);
        }
        if self.window_start_index().is_some_and(|first| index < first) {
            return Err(LiveError::OutsideWindow(bin));
        }
        if self.params.method == LiveMethod::SignAll {
            // Over the chunk's bytes: checked with its DATA.
            self.pending = Some((bin, timestamp, signature.to_vec()));
            return Ok(MunroVerdict::Pending);
        }
        let hash = match self.candidate {
            Some((b, h)) if b == bin => h,
            _ => return Err(LiveError::NoMunroHash(bin)),
        };
        let p = self.params;
        let signed = p.profile.signed_bytes(bin, p.addressing, timestamp, &hash);
        if !self.key.verify(&signed, signature) {
            return Err(LiveError::BadSignature(bin));
        }
        if !self.size_known {
            self.params.munro = size;
            self.size_known = true;
            self.size_window();
        }
        self.candidate = None;
        let munro = SignedMunro {
            bin,
            hash,
            timestamp,
            signature: signature.to_vec(),
        };
        let nodes = MunroNodes::trusting(bin, hash);
        self.trusted.insert(index, Trusted { munro, nodes });
        self.discard();
        Ok(MunroVerdict::New)
    }

    /// Drops the munros that fell out of the window.
    fn discard(&mut self) {
        if let Some(first) = self.window_start_index() {
            self.trusted = self.trusted.split_off(&first);
        }
    }

    /// The oldest munro index the window keeps, once a munro is trusted.
    fn window_start_index(&self) -> Option<u64> {
        let newest = *self.trusted.keys().next_back()?;
        Some(newest.saturating_sub(self.keep - 1))
    }

    /// Checks a received chunk against its munro; on success its hashes
    /// are trusted (and can be served on).
    pub fn verify_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> Result<(), LiveError> {
        if self.params.method == LiveMethod::SignAll {
            return self.verify_signed_chunk(chunk, data);
        }
        let hf = self.params.hash_function;
        let t = self.find_mut(chunk).ok_or(LiveError::NoMunro(chunk))?;
        t.nodes
            .verify(chunk, hf.digest(data), hf)
            .map_err(|e| match e {
                ClimbError::MissingUncle(b) => LiveError::MissingUncle(chunk, b),
                ClimbError::Mismatch => LiveError::Mismatch(chunk),
            })
    }

    /// Sign All (RFC 7574 §6.1.1): the chunk verifies against the
    /// signature sent just before it, and is trusted as a munro of one.
    fn verify_signed_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> Result<(), LiveError> {
        if self.has_chunk(chunk) {
            return Ok(());
        }
        let leaf = Bin::leaf(chunk).ok_or(LiveError::NoMunro(chunk))?;
        let (bin, timestamp, signature) = match self.pending.take() {
            Some(p) if p.0 == leaf => p,
            other => {
                self.pending = other;
                return Err(LiveError::NoMunro(chunk));
            }
        };
        let sig = ChunkSignature {
            chunk,
            timestamp,
            signature,
        };
        if !sign_all::verify_chunk(&self.key, &sig, self.params.addressing, data) {
            return Err(LiveError::BadSignature(bin));
        }
        let hash = self.params.hash_function.digest(data);
        let mut nodes = MunroNodes::trusting(bin, hash);
        nodes
            .verify(chunk, hash, self.params.hash_function)
            .map_err(|_| LiveError::Mismatch(chunk))?;
        let munro = SignedMunro {
            bin,
            hash,
            timestamp,
            signature: sig.signature,
        };
        self.trusted.insert(chunk.0, Trusted { munro, nodes });
        self.discard();
        Ok(())
    }

    /// Whether chunks come with their own signatures (Sign All).
    pub fn signs_all(&self) -> bool {
        self.params.method == LiveMethod::SignAll
    }

    fn index_of(&self, chunk: ChunkIndex) -> u64 {
        chunk.0 >> self.params.munro.layer()
    }

    fn find_mut(&mut self, chunk: ChunkIndex) -> Option<&mut Trusted> {
        if !self.size_known {
            return None;
        }
        let index = self.index_of(chunk);
        self.trusted.get_mut(&index)
    }

    fn find(&self, chunk: ChunkIndex) -> Option<&Trusted> {
        if !self.size_known {
            return None;
        }
        self.trusted.get(&self.index_of(chunk))
    }

    /// Whether `chunk` verified here.
    pub fn has_chunk(&self, chunk: ChunkIndex) -> bool {
        self.find(chunk).is_some_and(|t| t.nodes.has_leaf(chunk))
    }

    /// The signed munro covering `chunk`, to relay before its DATA.
    pub fn munro_for(&self, chunk: ChunkIndex) -> Option<&SignedMunro> {
        self.find(chunk).map(|t| &t.munro)
    }

    /// The trusted uncle hashes a receiver of ours needs for `chunk`.
    pub fn uncles(
        &self,
        chunk: ChunkIndex,
        receiver_holds: impl FnMut(Bin) -> bool,
    ) -> Option<Vec<(Bin, Hash)>> {
        self.find(chunk)?.nodes.uncles(chunk, receiver_holds)
    }

    /// The newest trusted munro: the live edge as we know it.
    pub fn newest(&self) -> Option<&SignedMunro> {
        self.trusted.values().next_back().map(|t| &t.munro)
    }

    /// How many munros are held (bounded by the window).
    pub fn munros_held(&self) -> usize {
        self.trusted.len()
    }

    /// The first chunk the window keeps; chunks before it are discarded
    /// (a player behind it skips forward).
    pub fn window_start(&self) -> Option<ChunkIndex> {
        let first = self.params.munro.chunks_of(self.window_start_index()?)?;
        Some(first.first())
    }

    /// The chunks under the trusted munros, first to last (there may be
    /// untrusted munros between).
    pub fn trusted_span(&self) -> Option<ChunkRange> {
        let size = self.params.munro;
        let first = size.chunks_of(*self.trusted.keys().next()?)?;
        let last = size.chunks_of(*self.trusted.keys().next_back()?)?;
        ChunkRange::new(first.first(), last.last())
    }

    /// Where a joining viewer starts: the first chunk of the munro
    /// `behind` munros before the newest trusted one (libswift hooks in at
    /// the newest munro's first chunk, `behind` = 0).
    pub fn hook_in(&self, behind: u64) -> Option<ChunkIndex> {
        let newest = *self.trusted.keys().next_back()?;
        let oldest = *self.trusted.keys().next()?;
        let at = newest.saturating_sub(behind).max(oldest);
        Some(self.params.munro.chunks_of(at)?.first())
    }
}

#[cfg(test)]
#[path = "verifier_tests.rs"]
mod tests;
