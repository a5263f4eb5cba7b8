//! The receiver's partial tree: incremental verification of chunks against
//! the root (RFC 7574 §5.2).
//!
//! Trust starts at the root (the swarm id). Peak hashes that hash up to the
//! root become trusted and tell N (§5.6). Uncle hashes are only candidates
//! until a chunk's hash, combined with them, reaches a trusted node; then the
//! whole path and the uncles used become trusted too (§5.2). A wrong chunk
//! or a wrong uncle never enters the trusted set, so it cannot poison later
//! verifications.

use std::collections::VecDeque;
use std::fmt;

mod claim;
mod serve;
mod snapshot;

pub use snapshot::TrustedNodes;

use super::peaks::root_bin;
use super::{alloc_zeroed, flat_bytes, node_kind, slot, slot_mut, NodeKind, VerifyError};
use crate::bin::Bin;
use crate::chunk::{ChunkIndex, ChunkSize};
use crate::hash::{Hash, HashFunction};

/// What the receiver trusts once it knows the chunk count.
struct Known {
    chunk_count: u64,
    root_bin: Bin,
    /// Hashes of filled nodes, indexed by bin; meaningful where `trusted`
    /// has the bit set.
    hashes: Vec<u8>,
    /// One bit per filled-node slot (bins `0 .. 2N − 1`).
    trusted: Vec<u64>,
    /// One bit per chunk: verified chunks.
    verified: Vec<u64>,
    /// How many chunks have verified.
    verified_count: u64,
    /// How many nodes are trusted (filled and spine), a cheap change marker.
    trusted_count: u64,
    /// Trusted incomplete (spine) nodes, at most one per layer.
    spine: Vec<(Bin, Hash)>,
}

impl Known {
    fn new(hash_fn: HashFunction, root: Hash, chunk_count: u64) -> Result<Known, VerifyError> {
        let too_large = VerifyError::TooLarge {
            chunks: chunk_count,
        };
        let root_bin = root_bin(chunk_count).ok_or(too_large.clone())?;
        let hashes = flat_bytes(chunk_count, hash_fn.len())
            .and_then(alloc_zeroed)
            .ok_or(too_large.clone())?;
        // 2N − 1 ≤ 2^64 − 1 because N ≤ 2^63 (checked by `root_bin`).
        let slots = 2 * (chunk_count - 1) + 1;
        let trusted = alloc_bits(slots).ok_or(too_large.clone())?;
        let verified = alloc_bits(chunk_count).ok_or(too_large)?;
        let mut known = Known {
            chunk_count,
            root_bin,
            hashes,
            trusted,
            verified,
            verified_count: 0,
            trusted_count: 0,
            spine: Vec::new(),
        };
        known.set_trusted(hash_fn, root_bin, &root);
        Ok(known)
    }

    fn trusted(&self, hash_fn: HashFunction, bin: Bin) -> Option<Hash> {
        match node_kind(self.chunk_count, self.root_bin, bin)? {
            NodeKind::Filled => get_bit(&self.trusted, bin.0)
                .then(|| slot(&self.hashes, hash_fn.len(), bin.0))
                .flatten()
                .map(Hash::from_slice),
            NodeKind::Empty => Some(hash_fn.zero()),
            NodeKind::Incomplete => self.spine.iter().find(|(b, _)| *b == bin).map(|p| p.1),
        }
    }

    fn set_trusted(&mut self, hash_fn: HashFunction, bin: Bin, hash: &Hash) {
        match node_kind(self.chunk_count, self.root_bin, bin) {
            Some(NodeKind::Filled) => {
                if let Some(s) = slot_mut(&mut self.hashes, hash_fn.len(), bin.0) {
                    s.copy_from_slice(hash.as_bytes());
                    if !get_bit(&self.trusted, bin.0) {
                        set_bit(&mut self.trusted, bin.0);
                        self.trusted_count += 1;
                    }
                }
            }
            Some(NodeKind::Incomplete) => {
                if !self.spine.iter().any(|(b, _)| *b == bin) {
                    self.spine.push((bin, *hash));
                    self.trusted_count += 1;
                }
            }
            Some(NodeKind::Empty) | None => {}
        }
    }
}

/// A zeroed bitset of `bits` bits, or `None` when it cannot be allocated
/// (lazily committed, like [`alloc_zeroed`]).
fn alloc_bits(bits: u64) -> Option<Vec<u64>> {
    let words = usize::try_from(bits.div_ceil(64)).ok()?;
    let mut probe: Vec<u64> = Vec::new();
    probe.try_reserve_exact(words).ok()?;
    drop(probe);
    Some(vec![0; words])
}

fn get_bit(bits: &[u64], i: u64) -> bool {
    usize::try_from(i / 64)
        .ok()
        .and_then(|w| bits.get(w))
        .is_some_and(|w| w & (1 << (i % 64)) != 0)
}

fn set_bit(bits: &mut [u64], i: u64) {
    if let Some(w) = usize::try_from(i / 64).ok().and_then(|w| bits.get_mut(w)) {
        *w |= 1 << (i % 64);
    }
}

/// Walks up from `leaf` (whose hash is `hash`) until a trusted node, taking
/// each sibling from the trusted nodes, the implicit zeros past the end, or
/// the candidate uncles (newest first). Records the nodes computed in `path`
/// and the candidates used in `used`; returns whether the computed hash
/// matched the trusted one.
fn walk_up(
    known: &Known,
    hash_fn: HashFunction,
    leaf: Bin,
    mut hash: Hash,
    pending: &VecDeque<(Bin, Hash)>,
    path: &mut Vec<(Bin, Hash)>,
    used: &mut Vec<(Bin, Hash)>,
) -> Result<bool, VerifyError> {
    let mut cur = leaf;
    loop {
        if let Some(t) = known.trusted(hash_fn, cur) {
            return Ok(t == hash);
        }
        // The root is trusted, so an untrusted node has a parent here.
        let (Some(parent), Some(sibling)) = (cur.parent(), cur.sibling()) else {
            return Ok(false);
        };
        let sib_hash = match known.trusted(hash_fn, sibling) {
            Some(h) => h,
            None => match pending.iter().rev().find(|(b, _)| *b == sibling) {
                Some(&(b, h)) => {
                    used.push((b, h));
                    h
                }
                None => return Err(VerifyError::MissingHash(sibling)),
            },
        };
        path.push((cur, hash));
        // `cur` covers a real chunk, so its parent is never "two empty
        // subtrees" and is always H(left ‖ right) (RFC 7574 §5.1).
        hash = if cur.is_left() {
            hash_fn.parent(&hash, &sib_hash)
        } else {
            hash_fn.parent(&sib_hash, &hash)
        };
        cur = parent;
    }
}

/// The receiver's view of a Merkle tree: the trusted root, the nodes
/// verified so far, and a bounded set of candidate uncle hashes
/// (RFC 7574 §5.2).
///
/// Memory once N is known: about `(2N − 1)·(hash_len + 1/8)` bytes.
pub struct PartialTree {
    hash_fn: HashFunction,
    chunk_size: ChunkSize,
    root: Hash,
    known: Option<Known>,
    /// Where N came from: peak hashes (tentative until the last chunk
    /// verifies, see `claim.rs`) or the caller (metadata, fixed).
    size_from_peaks: bool,
    /// A chunk that cannot be the children of an inner node (its length is
    /// not two hashes) verified under N: the claimed tree has the real
    /// tree's height, so N is at least the true count (see `claim.rs`).
    height_proven: bool,
    /// The largest N a peak claim may set (see [`PartialTree::with_max_chunks`]).
    max_chunks: u64,
    /// Candidate hashes not yet connected to a trusted node, oldest first;
    /// evicted oldest-first when full (deterministic, no hash map).
    pending: VecDeque<(Bin, Hash)>,
    content_len: Option<u64>,
    /// Reused by [`PartialTree::verify_chunk`] so that verifying a chunk
    /// does not allocate.
    scratch_path: Vec<(Bin, Hash)>,
    scratch_used: Vec<(Bin, Hash)>,
}

/// The largest chunk count peak hashes may claim by default: 2^28 chunks
/// (256 GiB in 1 KiB chunks, 2 TiB in 8 KiB chunks).
///
/// Peaks alone cannot pin the size: a single peak equal to the root passes
/// the root check at any layer (RFC 7574 §5.6.1), so a lying peer can claim
/// N = 2^k for any k. The claim can never make a wrong chunk verify, but the
/// node store is sized from it, so it is capped. Swarm metadata that carries
/// the content length avoids the question ([`PartialTree::with_chunk_count`]).
pub const DEFAULT_MAX_CHUNKS: u64 = 1 << 28;

impl PartialTree {
    /// A receiver that trusts `root` (the swarm id) and does not know the
    /// content size yet: it learns it from peak hashes
    /// ([`accept_peaks`](Self::accept_peaks)).
    ///
    /// Fails when `root` does not have `hash_fn`'s length.
    pub fn new(
        hash_fn: HashFunction,
        root: Hash,
        chunk_size: ChunkSize,
    ) -> Result<PartialTree, VerifyError> {
        if root.len() != hash_fn.len() {
            return Err(VerifyError::HashLength {
                expected: hash_fn.len(),
                got: root.len(),
            });
        }
        Ok(PartialTree {
            hash_fn,
            chunk_size,
            root,
            known: None,
            size_from_peaks: false,
            height_proven: false,
            max_chunks: DEFAULT_MAX_CHUNKS,
            pending: VecDeque::new(),
            content_len: None,
            scratch_path: Vec::new(),
            scratch_used: Vec::new(),
        })
    }

    /// A receiver that also knows the number of chunks `chunk_count` (for
    /// example from a previous session); it allocates the node store now.
    pub fn with_chunk_count(
        hash_fn: HashFunction,
        root: Hash,
        chunk_size: ChunkSize,
        chunk_count: u64,
    ) -> Result<PartialTree, VerifyError> {
        let mut tree = Self::new(hash_fn, root, chunk_size)?;
        tree.known = Some(Known::new(hash_fn, root, chunk_count)?);
        Ok(tree)
    }

    /// Caps the chunk count that peak hashes may claim (default
    /// [`DEFAULT_MAX_CHUNKS`]); larger claims fail with
    /// [`VerifyError::TooLarge`].
    pub fn with_max_chunks(mut self, max_chunks: u64) -> Self {
        self.max_chunks = max_chunks;
        self
    }

    /// How many chunks have verified so far.
    pub fn verified_count(&self) -> u64 {
        self.known.as_ref().map_or(0, |k| k.verified_count)
    }

    /// How many nodes are trusted, empty subtrees not counted; it only
    /// grows while the size stays the same, so a checkpoint can tell
    /// whether anything changed.
    pub fn trusted_count(&self) -> u64 {
        self.known.as_ref().map_or(0, |k| k.trusted_count)
    }

    /// The trusted root hash.
    pub fn root(&self) -> Hash {
        self.root
    }

    /// The hash function.
    pub fn hash_function(&self) -> HashFunction {
        self.hash_fn
    }

    /// The chunk size.
    pub fn chunk_size(&self) -> ChunkSize {
        self.chunk_size
    }

    /// The number of chunks, once known.
    pub fn chunk_count(&self) -> Option<u64> {
        self.known.as_ref().map(|k| k.chunk_count)
    }

    /// The content length in bytes, known once the last chunk has verified
    /// (its real length is not covered by anything else, RFC 7574 §5.6).
    pub fn content_len(&self) -> Option<u64> {
        self.content_len
    }

    /// Whether `chunk` has been verified.
    pub fn is_verified(&self, chunk: ChunkIndex) -> bool {
        self.known
            .as_ref()
            .is_some_and(|k| chunk.0 < k.chunk_count && get_bit(&k.verified, chunk.0))
    }

    /// The trusted hash of `bin`, if any. Subtrees past the end of the
    /// content are trusted to be all zeros once N is known.
    pub fn trusted(&self, bin: Bin) -> Option<Hash> {
        self.known.as_ref()?.trusted(self.hash_fn, bin)
    }

    /// The number of candidate uncle hashes held.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// The most candidate hashes held at once: 4·(height + 1) + 64, enough
    /// for the uncles of a few chunks in flight (the height is taken as 63
    /// while N is unknown).
    pub fn pending_capacity(&self) -> usize {
        let height = self.known.as_ref().map_or(63, |k| k.root_bin.layer()) as usize;
        4 * (height + 1) + 64
    }

    /// Stores a candidate uncle hash for `bin` (an INTEGRITY message,
    /// RFC 7574 §5.4), to be used by the next verifications.
    ///
    /// Fails at once when the hash contradicts a trusted one
    /// ([`VerifyError::BadHash`]) or `bin` is outside the tree. A second
    /// candidate for the same bin replaces the first.
    pub fn accept_uncle(&mut self, bin: Bin, hash: Hash) -> Result<(), VerifyError> {
        self.check_len([&hash])?;
        if bin.is_none() {
            return Err(VerifyError::BinOutOfRange(bin));
        }
        if let Some(k) = &self.known {
            if node_kind(k.chunk_count, k.root_bin, bin).is_none() {
                return Err(VerifyError::BinOutOfRange(bin));
            }
            if let Some(t) = k.trusted(self.hash_fn, bin) {
                return if t == hash {
                    Ok(())
                } else {
                    Err(VerifyError::BadHash(bin))
                };
            }
        }
        self.pending.retain(|(b, _)| *b != bin);
        self.pending.push_back((bin, hash));
        while self.pending.len() > self.pending_capacity() {
            self.pending.pop_front();
        }
        Ok(())
    }

    /// Verifies `data` as chunk `chunk` (RFC 7574 §5.2): hashes the leaf and
    /// walks up, taking each sibling from the trusted nodes, the implicit
    /// zeros past the end, or the candidate uncles, until it reaches a
    /// trusted node, and compares.
    ///
    /// On success the path and the uncles used become trusted and the chunk
    /// is marked verified. On a mismatch nothing new is trusted and the
    /// candidates used are dropped ([`VerifyError::BadChunk`]): the sender
    /// must send them again with the right data.
    ///
    /// Under a count only claimed by peaks, a chunk may also show that the
    /// content ends with it, and so shrink the count (see `claim.rs`).
    pub fn verify_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> Result<(), VerifyError> {
        let cs = self.chunk_size.bytes_usize();
        if (1..cs).contains(&data.len()) && self.could_end_at(chunk.0) {
            // Too short for anything but the last chunk.
            let leaf = self.hash_fn.digest(data);
            self.end_at_if_proven(chunk.0, leaf)?;
        }
        self.verify_in_tree(chunk, data)?;
        if data.len() == cs && self.could_end_at(chunk.0) {
            if let Some(leaf) = Bin::leaf(chunk).and_then(|b| self.trusted(b)) {
                self.end_at_if_proven(chunk.0, leaf)?;
            }
        }
        Ok(())
    }

    /// [`verify_chunk`](Self::verify_chunk) in the tree of the count held.
    fn verify_in_tree(&mut self, chunk: ChunkIndex, data: &[u8]) -> Result<(), VerifyError> {
        let hash_fn = self.hash_fn;
        let cs = self.chunk_size.bytes_usize();
        let known = self.known.as_ref().ok_or(VerifyError::UnknownSize)?;
        let n = known.chunk_count;
        let leaf =
            Bin::leaf(chunk)
                .filter(|_| chunk.0 < n)
                .ok_or(VerifyError::ChunkOutOfRange {
                    chunk,
                    chunk_count: n,
                })?;
        let is_last = chunk.0 == n - 1;
        let len_ok = if is_last {
            (1..=cs).contains(&data.len())
        } else {
            data.len() == cs
        };
        if !len_ok {
            return Err(VerifyError::BadLength {
                chunk,
                len: data.len(),
            });
        }
        if self.ambiguous(data.len()) {
            return Err(VerifyError::Ambiguous(chunk));
        }

        // Reuse the scratch lists: verification runs for every chunk received.
        let mut path = std::mem::take(&mut self.scratch_path);
        let mut used = std::mem::take(&mut self.scratch_used);
        path.clear();
        used.clear();
        let walked = walk_up(
            known,
            hash_fn,
            leaf,
            hash_fn.digest(data),
            &self.pending,
            &mut path,
            &mut used,
        );
        let result = match walked {
            Ok(true) => {
                self.trust_verified(chunk, data.len(), is_last, &path, &used);
                Ok(())
            }
            Ok(false) => {
                self.pending
                    .retain(|(b, _)| !used.iter().any(|(u, _)| u == b));
                Err(VerifyError::BadChunk(chunk))
            }
            Err(e) => Err(e),
        };
        self.scratch_path = path;
        self.scratch_used = used;
        result
    }

    /// After a successful walk: the path and the uncles used become trusted,
    /// the chunk verified, and the content length known with the last chunk.
    fn trust_verified(
        &mut self,
        chunk: ChunkIndex,
        len: usize,
        is_last: bool,
        path: &[(Bin, Hash)],
        used: &[(Bin, Hash)],
    ) {
        let hash_fn = self.hash_fn;
        if let Some(k) = self.known.as_mut() {
            let n = k.chunk_count;
            for (bin, h) in path.iter().chain(used) {
                k.set_trusted(hash_fn, *bin, h);
            }
            if !get_bit(&k.verified, chunk.0) {
                set_bit(&mut k.verified, chunk.0);
                k.verified_count += 1;
            }
            if is_last {
                self.content_len = Some((n - 1) * self.chunk_size.bytes_u64() + len as u64);
            }
        }
        if len != 2 * hash_fn.len() {
            self.height_proven = true;
        }
        self.prune_pending();
    }

    /// Drops candidates that are outside the tree or already trusted (equal
    /// or not: a trusted hash always wins).
    fn prune_pending(&mut self) {
        let hash_fn = self.hash_fn;
        if let Some(k) = &self.known {
            self.pending.retain(|(b, _)| {
                node_kind(k.chunk_count, k.root_bin, *b).is_some()
                    && k.trusted(hash_fn, *b).is_none()
            });
        }
        let cap = self.pending_capacity();
        while self.pending.len() > cap {
            self.pending.pop_front();
        }
    }

    fn check_len<'a>(&self, hashes: impl IntoIterator<Item = &'a Hash>) -> Result<(), VerifyError> {
        let expected = self.hash_fn.len();
        match hashes.into_iter().find(|h| h.len() != expected) {
            Some(h) => Err(VerifyError::HashLength {
                expected,
                got: h.len(),
            }),
            None => Ok(()),
        }
    }
}

impl fmt::Debug for PartialTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartialTree")
            .field("hash_fn", &self.hash_fn)
            .field("chunk_size", &self.chunk_size)
            .field("root", &self.root)
            .field("chunk_count", &self.chunk_count())
            .field("content_len", &self.content_len)
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merkle::MerkleTree;

    const F: HashFunction = HashFunction::Sha1;

    fn cs() -> ChunkSize {
        ChunkSize::new(4).unwrap()
    }

    fn content(len: usize) -> (Vec<u8>, MerkleTree) {
        let data: Vec<u8> = (0..len).map(|i| (i * 13 % 256) as u8).collect();
        let tree = MerkleTree::from_bytes(&data, cs(), F).unwrap();
        (data, tree)
    }

    fn chunk(data: &[u8], i: usize) -> &[u8] {
        data.chunks(4).nth(i).unwrap()
    }

    #[test]
    fn one_chunk_content_verifies_against_the_root_alone() {
        let (data, tree) = content(3);
        let mut rx = PartialTree::new(F, tree.root(), cs()).unwrap();
        assert_eq!(
            rx.verify_chunk(ChunkIndex(0), &data),
            Err(VerifyError::UnknownSize)
        );
        let mut known = PartialTree::with_chunk_count(F, tree.root(), cs(), 1).unwrap();
        assert_eq!(
            known.verify_chunk(ChunkIndex(0), b"xyz"),
            Err(VerifyError::BadChunk(ChunkIndex(0)))
        );
        assert_eq!(known.verify_chunk(ChunkIndex(0), &data), Ok(()));
        assert_eq!(known.content_len(), Some(3));
        assert_eq!(rx.accept_peaks(&tree.peaks()), Ok(1));
        assert_eq!(rx.verify_chunk(ChunkIndex(0), &data), Ok(()));
        assert!(rx.is_verified(ChunkIndex(0)));
    }

    #[test]
    fn lengths_and_ranges_are_checked() {
        let (data, tree) = content(9); // chunks of 4, 4, 1
        let mut rx = PartialTree::new(F, tree.root(), cs()).unwrap();
        rx.accept_peaks(&tree.peaks()).unwrap();
        let bad_len = |c: u64, len: usize| {
            Err(VerifyError::BadLength {
                chunk: ChunkIndex(c),
                len,
            })
        };
        assert_eq!(rx.verify_chunk(ChunkIndex(0), &data[..3]), bad_len(0, 3));
        assert_eq!(rx.verify_chunk(ChunkIndex(1), &data[..5]), bad_len(1, 5));
        assert_eq!(rx.verify_chunk(ChunkIndex(2), &[]), bad_len(2, 0));
        assert_eq!(rx.verify_chunk(ChunkIndex(2), &data[..5]), bad_len(2, 5));
        for c in [3, u64::MAX >> 1, u64::MAX] {
            assert_eq!(
                rx.verify_chunk(ChunkIndex(c), &data[..4]),
                Err(VerifyError::ChunkOutOfRange {
                    chunk: ChunkIndex(c),
                    chunk_count: 3
                })
            );
        }
        assert_eq!(rx.verify_chunk(ChunkIndex(2), &data[8..]), Ok(()));
        assert_eq!(rx.content_len(), Some(9));
        assert!(!rx.is_verified(ChunkIndex(u64::MAX)));
    }

    #[test]
    fn missing_uncles_are_named() {
        let (data, tree) = content(32); // 8 chunks
        let mut rx = PartialTree::new(F, tree.root(), cs()).unwrap();
        rx.accept_peaks(&tree.peaks()).unwrap();
        assert_eq!(
            rx.verify_chunk(ChunkIndex(5), chunk(&data, 5)),
            Err(VerifyError::MissingHash(Bin(8)))
        );
        rx.accept_uncle(Bin(8), tree.node(Bin(8)).unwrap()).unwrap();
        assert_eq!(
            rx.verify_chunk(ChunkIndex(5), chunk(&data, 5)),
            Err(VerifyError::MissingHash(Bin(13)))
        );
        rx.accept_uncle(Bin(13), tree.node(Bin(13)).unwrap())
            .unwrap();
        rx.accept_uncle(Bin(3), tree.node(Bin(3)).unwrap()).unwrap();
        assert_eq!(rx.verify_chunk(ChunkIndex(5), chunk(&data, 5)), Ok(()));
        // Its sibling needs nothing more; re-verifying is idempotent.
        assert_eq!(rx.verify_chunk(ChunkIndex(4), chunk(&data, 4)), Ok(()));
        assert_eq!(rx.verify_chunk(ChunkIndex(5), chunk(&data, 5)), Ok(()));
        assert_eq!(
            rx.verify_chunk(ChunkIndex(5), chunk(&data, 4)),
            Err(VerifyError::BadChunk(ChunkIndex(5)))
        );
        assert!(rx.is_verified(ChunkIndex(5)));
    }

    #[test]
    fn known_size_without_peaks_verifies_through_the_spine() {
        // 3 chunks, no peaks: chunk 2 climbs 4 → 5 (spine, H(leaf ‖ 0)) → 3.
        let (data, tree) = content(9);
        let mut rx = PartialTree::with_chunk_count(F, tree.root(), cs(), 3).unwrap();
        assert_eq!(
            rx.verify_chunk(ChunkIndex(2), chunk(&data, 2)),
            Err(VerifyError::MissingHash(Bin(1)))
        );
        rx.accept_uncle(Bin(1), tree.node(Bin(1)).unwrap()).unwrap();
        assert_eq!(rx.verify_chunk(ChunkIndex(2), chunk(&data, 2)), Ok(()));
        assert_eq!(rx.trusted(Bin(5)), tree.node(Bin(5)));
        assert_eq!(rx.trusted(Bin(6)), Some(F.zero()));
        // An empty subtree can only be zero.
        assert_eq!(rx.accept_uncle(Bin(6), F.zero()), Ok(()));
        assert_eq!(
            rx.accept_uncle(Bin(6), F.digest(b"x")),
            Err(VerifyError::BadHash(Bin(6)))
        );
        // Peaks must now agree: another content's do not make the root, and
        // this content's padded peaks of 4 chunks (the root alone) do but
        // cannot change a size the caller fixed.
        assert_eq!(rx.accept_peaks(&tree.peaks()), Ok(3));
        let (_, four) = content(16);
        assert_eq!(rx.accept_peaks(&four.peaks()), Err(VerifyError::BadPeaks));
        assert_eq!(
            rx.accept_peaks(&[(Bin(3), tree.root())]),
            Err(VerifyError::SizeMismatch {
                known: 3,
                claimed: 4
            })
        );
    }

    #[test]
    fn bad_peaks_are_refused_without_learning_anything() {
        let (_, tree) = content(12);
        let mut rx = PartialTree::new(F, tree.root(), cs()).unwrap();
        let mut peaks = tree.peaks();
        peaks[1].1 = F.digest(b"forged");
        assert_eq!(rx.accept_peaks(&peaks), Err(VerifyError::BadPeaks));
        assert_eq!(rx.chunk_count(), None);
        assert_eq!(rx.accept_peaks(&[]), Err(VerifyError::BadPeaks));
        assert_eq!(
            rx.accept_peaks(&[(Bin(2), tree.root())]),
            Err(VerifyError::BadPeaks)
        );
        assert_eq!(
            rx.accept_peaks(&[(Bin::NONE, tree.root())]),
            Err(VerifyError::BadPeaks)
        );
        let short = [(Bin(1), Hash::zero(3)), (Bin(4), Hash::zero(3))];
        assert_eq!(
            rx.accept_peaks(&short),
            Err(VerifyError::HashLength {
                expected: 20,
                got: 3
            })
        );
        // A claim of 2^63 chunks with the wrong hash costs nothing.
        assert_eq!(
            rx.accept_peaks(&[(Bin::ALL, F.zero())]),
            Err(VerifyError::BadPeaks)
        );
        // A single peak equal to the root checks out at any layer (RFC 7574
        // §5.6 cannot tell them apart); absurd sizes fail without aborting.
        assert_eq!(
            rx.accept_peaks(&[(Bin::ALL, tree.root())]),
            Err(VerifyError::TooLarge { chunks: 1 << 63 })
        );
        assert_eq!(rx.chunk_count(), None);
        assert_eq!(rx.accept_peaks(&tree.peaks()), Ok(3));
        assert_eq!(rx.trusted(Bin(1)), tree.node(Bin(1)));
        assert_eq!(rx.trusted(Bin(3)), Some(tree.root()));
    }

    #[test]
    fn uncles_are_bounded_and_checked() {
        let (_, tree) = content(32);
        let mut rx = PartialTree::new(F, tree.root(), cs()).unwrap();
        assert_eq!(
            rx.accept_uncle(Bin::NONE, F.zero()),
            Err(VerifyError::BinOutOfRange(Bin::NONE))
        );
        assert_eq!(
            rx.accept_uncle(Bin(1), Hash::zero(5)),
            Err(VerifyError::HashLength {
                expected: 20,
                got: 5
            })
        );
        // Unknown size: anything goes into the bounded pending set.
        for b in 0..1000u64 {
            rx.accept_uncle(Bin(b * 1_000_003), F.digest(&b.to_be_bytes()))
                .unwrap();
        }
        assert_eq!(rx.pending_len(), rx.pending_capacity());
        assert_eq!(rx.pending_capacity(), 4 * 64 + 64);
        rx.accept_peaks(&tree.peaks()).unwrap();
        // Out-of-tree candidates are dropped once N is known.
        assert!(rx.pending_len() <= 1);
        assert_eq!(rx.pending_capacity(), 4 * 4 + 64);
        for b in [Bin(15), Bin(16), Bin::ALL, Bin(u64::MAX - 1)] {
            assert_eq!(
                rx.accept_uncle(b, F.zero()),
                Err(VerifyError::BinOutOfRange(b))
            );
        }
        assert_eq!(
            rx.accept_uncle(Bin(7), F.zero()),
            Err(VerifyError::BadHash(Bin(7)))
        );
        assert_eq!(rx.accept_uncle(Bin(7), tree.root()), Ok(()));
        for i in 0..500u64 {
            rx.accept_uncle(Bin(2 * (i % 8)), F.digest(&i.to_be_bytes()))
                .unwrap();
        }
        assert!(rx.pending_len() <= 8, "one candidate per bin");
    }

    #[test]
    fn a_size_claimed_by_peaks_is_tentative_until_a_chunk_verifies() {
        // 12 bytes = 3 chunks. A liar claims N = 2^5 with one peak equal to
        // the root, which passes the root check at any layer.
        let (data, tree) = content(12);
        let mut rx = PartialTree::new(F, tree.root(), cs()).unwrap();
        assert_eq!(
            rx.accept_peaks(&[(Bin::new(5, 0).unwrap(), tree.root())]),
            Ok(32)
        );
        // Nothing can verify under the lie; the honest peaks replace it.
        assert_eq!(rx.accept_peaks(&tree.peaks()), Ok(3));
        for (bin, h) in tree.uncles(ChunkIndex(0), |_| false) {
            rx.accept_uncle(bin, h).unwrap();
        }
        assert_eq!(rx.verify_chunk(ChunkIndex(0), chunk(&data, 0)), Ok(()));
        assert_eq!(rx.verified_count(), 1);
        // Now the size is proven: another claim is a mismatch.
        assert_eq!(
            rx.accept_peaks(&[(Bin::new(5, 0).unwrap(), tree.root())]),
            Err(VerifyError::SizeMismatch {
                known: 3,
                claimed: 32
            })
        );
        // Claims above the cap are refused before anything is allocated.
        let mut capped = PartialTree::new(F, tree.root(), cs())
            .unwrap()
            .with_max_chunks(16);
        assert_eq!(
            capped.accept_peaks(&[(Bin::new(5, 0).unwrap(), tree.root())]),
            Err(VerifyError::TooLarge { chunks: 32 })
        );
        let mut default = PartialTree::new(F, tree.root(), cs()).unwrap();
        let huge = Bin::new(40, 0).unwrap();
        assert_eq!(
            default.accept_peaks(&[(huge, tree.root())]),
            Err(VerifyError::TooLarge { chunks: 1 << 40 })
        );
        assert_eq!(default.chunk_count(), None);
    }

    #[test]
    fn constructors_refuse_impossible_trees() {
        let root = F.digest(b"r");
        assert!(matches!(
            PartialTree::new(F, Hash::zero(32), cs()),
            Err(VerifyError::HashLength { .. })
        ));
        for n in [0, (1 << 63) + 1, u64::MAX, 1 << 62] {
            assert_eq!(
                PartialTree::with_chunk_count(F, root, cs(), n).map(|_| ()),
                Err(VerifyError::TooLarge { chunks: n })
            );
        }
        let rx = PartialTree::new(F, root, cs()).unwrap();
        assert_eq!(rx.trusted(Bin(0)), None);
        assert!(!rx.is_verified(ChunkIndex(0)));
        assert!(format!("{rx:?}").contains("PartialTree"));
    }
}
