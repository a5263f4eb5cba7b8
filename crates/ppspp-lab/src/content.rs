//! Synthetic content: chunk bytes derived from the chunk index, so no
//! simulated peer stores any, and one hash tree per swarm shared by every
//! peer (architecture note, "Storage"). A chunk still travels as real bytes
//! and is still verified against its leaf hash by the receiving core.

use std::io;
use std::sync::Arc;

use ppspp_core::storage::Storage;
use ppspp_core::{ChunkIndex, ChunkSize, HashFunction, MerkleError, MerkleTree};

/// The bytes of chunk `index`: a cheap, index-dependent pattern (so that
/// every chunk hashes differently and a misplaced chunk fails
/// verification).
pub fn fill_chunk(index: u64, out: &mut [u8]) {
    let mut x = index.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x2545_f491_4f6c_dd1d;
    for word in out.chunks_mut(8) {
        // xorshift64: one step per 8 bytes.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let bytes = x.to_le_bytes();
        word.copy_from_slice(&bytes[..word.len()]);
    }
}

/// A synthetic storage's read: the first `n` bytes of `out` filled as
/// chunk `chunk` ([`fill_chunk`]); an error if `out` is shorter.
pub(crate) fn read_filled(chunk: ChunkIndex, n: usize, out: &mut [u8]) -> io::Result<usize> {
    let out = out
        .get_mut(..n)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "buffer too small"))?;
    fill_chunk(chunk.0, out);
    Ok(n)
}

/// A piece of synthetic content and its (shared) hash tree.
#[derive(Debug)]
pub struct SyntheticContent {
    len: u64,
    chunk_size: ChunkSize,
    tree: Arc<MerkleTree>,
}

impl SyntheticContent {
    /// Content of `len` bytes in chunks of `chunk_size`, hashed with
    /// `hash`: builds the tree once.
    pub fn new(len: u64, chunk_size: ChunkSize, hash: HashFunction) -> Result<Self, MerkleError> {
        let n = chunk_size.chunks_in(len);
        let cs = chunk_size.bytes_u64();
        let mut buf = vec![0u8; chunk_size.bytes_usize()];
        let leaves = (0..n).map(|i| {
            let this = if i + 1 == n { len - i * cs } else { cs } as usize;
            fill_chunk(i, &mut buf[..this]);
            hash.digest(&buf[..this])
        });
        let tree = MerkleTree::from_leaf_hashes(hash, leaves, len, chunk_size)?;
        Ok(SyntheticContent {
            len,
            chunk_size,
            tree: Arc::new(tree),
        })
    }

    /// The shared hash tree.
    pub fn tree(&self) -> Arc<MerkleTree> {
        Arc::clone(&self.tree)
    }

    /// Bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the content is empty (never: the tree refuses that).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunks.
    pub fn chunk_count(&self) -> u64 {
        self.tree.chunk_count()
    }

    /// A store for one peer: it serves derived bytes and keeps nothing.
    pub fn storage(&self) -> SyntheticStorage {
        SyntheticStorage {
            len: self.len,
            chunk_size: self.chunk_size,
        }
    }
}

/// A peer's view of synthetic content: reads derive the bytes, writes of
/// (verified) chunks are accepted and dropped. Which chunks a peer has is
/// the core's binmap, not this store's business.
#[derive(Clone, Copy, Debug)]
pub struct SyntheticStorage {
    len: u64,
    chunk_size: ChunkSize,
}

impl Storage for SyntheticStorage {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> io::Result<usize> {
        let cs = self.chunk_size.bytes_u64();
        let start = chunk.0.checked_mul(cs).filter(|s| *s < self.len);
        let Some(start) = start else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "chunk past the end of the content",
            ));
        };
        let n = (self.len - start).min(cs) as usize;
        read_filled(chunk, n, out)
    }

    fn write_chunk(&mut self, _chunk: ChunkIndex, _data: &[u8]) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_matches_materialised_content() {
        let cs = ChunkSize::new(1024).unwrap();
        let c = SyntheticContent::new(5000, cs, HashFunction::Sha1).unwrap();
        let mut all = Vec::new();
        let mut st = c.storage();
        let mut buf = vec![0u8; 1024];
        for i in 0..c.chunk_count() {
            let n = st.read_chunk(ChunkIndex(i), &mut buf).unwrap();
            all.extend_from_slice(&buf[..n]);
        }
        assert_eq!(all.len(), 5000);
        let direct = MerkleTree::from_bytes(&all, cs, HashFunction::Sha1).unwrap();
        assert_eq!(direct.root(), c.tree().root());
        assert!(st.read_chunk(ChunkIndex(5), &mut buf).is_err());
    }

    #[test]
    fn chunks_differ() {
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        fill_chunk(1, &mut a);
        fill_chunk(2, &mut b);
        assert_ne!(a, b);
        let mut c = [0u8; 64];
        fill_chunk(1, &mut c);
        assert_eq!(a, c);
    }
}
