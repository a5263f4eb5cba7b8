//! The content file, read for serving and written as chunks verify, and
//! the checkpoint written beside it.

use std::ffi::OsString;
use std::fs::{File, Metadata};
use std::io;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use ppspp_core::storage::{Snapshot, Storage};
use ppspp_core::{Binmap, ChunkIndex, ChunkSize, PartialTree};

use crate::buffer::{ReadCache, WriteBatch, BLOCK};
use crate::format::{self, Header};
use crate::writer::CheckpointWriter;
use crate::{StoreError, SwarmMeta};

/// Where the checkpoint of content at `content` lives: `content` with
/// `.ppspp` appended (`movie.mp4` → `movie.mp4.ppspp`).
pub fn checkpoint_path(content: &Path) -> PathBuf {
    with_suffix(content, ".ppspp")
}

/// The temporary file a checkpoint is written to before the rename
/// (`movie.mp4.ppspp.tmp`); it never outlives a process that exits
/// normally, and opening the download removes one left by a killed one.
pub fn checkpoint_tmp_path(content: &Path) -> PathBuf {
    with_suffix(content, ".ppspp.tmp")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(path.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

/// The modification time of a file in nanoseconds since the Unix epoch, if
/// the platform reports one.
pub(crate) fn mtime_ns(meta: &Metadata) -> Option<i128> {
    let t = meta.modified().ok()?;
    Some(match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i128::try_from(d.as_nanos()).ok()?,
        Err(e) => -i128::try_from(e.duration().as_nanos()).ok()?,
    })
}

/// What the last checkpoint recorded, to skip one when nothing changed.
#[derive(Debug)]
pub(crate) struct Saved {
    pub have: Binmap,
    pub chunk_count: Option<u64>,
    pub content_len: Option<u64>,
    pub trusted: u64,
    pub verified: u64,
}

impl Saved {
    pub(crate) fn of(have: &Binmap, tree: &PartialTree) -> Saved {
        Saved {
            have: have.clone(),
            chunk_count: tree.proven_chunk_count(),
            content_len: tree.content_len(),
            trusted: tree.trusted_count(),
            verified: tree.verified_count(),
        }
    }

    /// Whether `have` and `tree` are still what was saved (without cloning).
    fn matches(&self, have: &Binmap, tree: &PartialTree) -> bool {
        self.chunk_count == tree.proven_chunk_count()
            && self.content_len == tree.content_len()
            && self.trusted == tree.trusted_count()
            && self.verified == tree.verified_count()
            && self.have == *have
    }
}

/// A download's checkpoint bookkeeping.
#[derive(Debug)]
pub(crate) struct Download {
    pub swarm: SwarmMeta,
    /// Bytes written or the length changed since the last checkpoint.
    pub dirty: bool,
    /// What the last checkpoint (written or restored) holds.
    pub last: Option<Saved>,
    /// Writes checkpoints off the caller's thread.
    pub writer: CheckpointWriter,
}

/// A swarm's content in one file, with a resume checkpoint beside it for
/// downloads (see the [crate documentation](crate)).
///
/// Reads and writes are positioned (`pread`/`pwrite` on Unix), so the file
/// is never read through a shared cursor. Nothing stops two processes from
/// opening the same download; do not.
#[derive(Debug)]
pub struct FileStorage {
    pub(crate) path: PathBuf,
    pub(crate) file: File,
    pub(crate) chunk_size: ChunkSize,
    pub(crate) content_len: Option<u64>,
    /// `None` when seeding: read-only, no checkpoint.
    pub(crate) download: Option<Download>,
    /// Blocks read recently.
    pub(crate) cache: ReadCache,
    /// Consecutive chunk writes not yet issued.
    pub(crate) pending: WriteBatch,
}

impl FileStorage {
    /// Serves the complete content at `path`, read-only; the caller builds
    /// the Merkle tree (e.g. with `MerkleTree::from_reader`). Writes fail
    /// and checkpoints keep nothing.
    pub fn seed(path: impl AsRef<Path>, chunk_size: ChunkSize) -> Result<FileStorage, StoreError> {
        let path = path.as_ref().to_path_buf();
        let file = File::open(&path).map_err(StoreError::io("open", &path))?;
        let len = file
            .metadata()
            .map_err(StoreError::io("stat", &path))?
            .len();
        Ok(FileStorage {
            path,
            file,
            chunk_size,
            content_len: Some(len),
            download: None,
            cache: ReadCache::default(),
            pending: WriteBatch::default(),
        })
    }

    /// The content file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The chunk size.
    pub fn chunk_size(&self) -> ChunkSize {
        self.chunk_size
    }

    /// The content length, when known.
    pub fn content_len(&self) -> Option<u64> {
        self.content_len
    }

    /// Where chunk `chunk` starts and how long it is at most.
    fn span(&self, chunk: ChunkIndex) -> io::Result<(u64, usize)> {
        let cs = self.chunk_size.bytes_usize();
        let start = chunk
            .0
            .checked_mul(self.chunk_size.bytes_u64())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "chunk offset overflows"))?;
        match self.content_len {
            Some(len) if start >= len => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "chunk past the end",
            )),
            Some(len) => Ok((
                start,
                usize::try_from(len - start).map_or(cs, |r| r.min(cs)),
            )),
            None => Ok((start, cs)),
        }
    }

    /// Writes the checkpoint of `snapshot`: content data to disk first, then
    /// the checkpoint through a temporary file and a rename.
    pub(crate) fn write_checkpoint(&mut self, snapshot: &Snapshot<'_>) -> io::Result<()> {
        let Some(download) = &self.download else {
            return Ok(());
        };
        let tree = snapshot.tree;
        let swarm = &download.swarm;
        if tree.root() != swarm.root
            || tree.hash_function() != swarm.hash_fn
            || tree.chunk_size() != swarm.chunk_size
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "snapshot of another swarm",
            ));
        }
        if !download.dirty
            && download
                .last
                .as_ref()
                .is_some_and(|l| l.matches(snapshot.have, tree))
        {
            return Ok(());
        }
        // Everything the snapshot claims must have been handed to the OS.
        self.pending.flush(&self.file)?;
        let saved = Saved::of(snapshot.have, tree);
        // The writer thread flushes the content file (a checkpoint must
        // never claim chunks that are not on disk) and then fills in its
        // length and modification time.
        let header = Header {
            hash_fn: swarm.hash_fn,
            root: swarm.root,
            chunk_size: swarm.chunk_size,
            chunk_count: saved.chunk_count,
            content_len: saved.chunk_count.and(saved.content_len),
            file_len: 0,
            mtime_ns: None,
        };
        // Without a proven size nothing can be restored: save no chunks.
        let empty = Binmap::new();
        let have = if header.chunk_count.is_some() {
            snapshot.have
        } else {
            &empty
        };
        let Some(d) = &mut self.download else {
            return Ok(());
        };
        // Streamed to the writer thread; skipped (still dirty) while the
        // previous checkpoint is being written, unless urgent.
        let Some(mut stream) = d.writer.begin(snapshot.urgent)? else {
            return Ok(());
        };
        let nodes = format::encode_body(&mut stream, &header, have, tree)?;
        stream.finish(nodes)?;
        d.dirty = false;
        d.last = Some(saved);
        Ok(())
    }

    /// Waits until every checkpoint asked for is on disk (they are written
    /// in the background); returns a write error if one happened and was
    /// not returned before (the error names the file and the step).
    pub fn wait_checkpoint(&self) -> io::Result<()> {
        match &self.download {
            Some(d) => d.writer.wait(),
            None => Ok(()),
        }
    }
}

/// Flushes the directory holding `content`, so a rename in it is durable.
pub(crate) fn sync_parent(content: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match content.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

fn read_only() -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        "seeding storage is read-only",
    )
}

impl Storage for FileStorage {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> io::Result<usize> {
        let (start, len) = self.span(chunk)?;
        let buf = out
            .get_mut(..len)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "buffer too small"))?;
        // The cache reads whole blocks: gathered writes anywhere in the
        // blocks this read touches must reach the file first, or the cache
        // would keep the bytes that were there before them.
        let block_start = start - start % BLOCK;
        let block_end = (start + len as u64).div_ceil(BLOCK) * BLOCK;
        if self.pending.overlaps(block_start, block_end - block_start) {
            self.pending.flush(&self.file)?;
        }
        let got = self.cache.read(&self.file, start, buf)?;
        // With the length known the chunk must be whole; without it only
        // the last chunk may be short, and an empty one is missing.
        if got == 0 || (self.content_len.is_some() && got < len) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "chunk missing from the content file",
            ));
        }
        Ok(got)
    }

    fn write_chunk(&mut self, chunk: ChunkIndex, data: &[u8]) -> io::Result<()> {
        let Some(download) = &mut self.download else {
            return Err(read_only());
        };
        let cs = self.chunk_size.bytes_usize();
        let start = chunk.0.checked_mul(self.chunk_size.bytes_u64());
        let end = start.and_then(|s| s.checked_add(data.len() as u64));
        let fits = match (end, self.content_len) {
            (Some(end), Some(len)) => end <= len,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if data.is_empty() || data.len() > cs || !fits {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "chunk does not fit the content",
            ));
        }
        download.dirty = true;
        let start = start.unwrap_or(0);
        self.cache.invalidate(start, data.len() as u64);
        self.pending.write(&self.file, start, data)
    }

    fn set_content_len(&mut self, len: u64) -> io::Result<()> {
        let Some(download) = &mut self.download else {
            return if self.content_len == Some(len) {
                Ok(())
            } else {
                Err(read_only())
            };
        };
        download.dirty = true;
        self.pending.flush(&self.file)?;
        self.cache = ReadCache::default();
        self.content_len = Some(len);
        // Drops stale bytes past the end, or makes room (sparse) up to it.
        if self.file.metadata()?.len() != len {
            self.file.set_len(len)?;
        }
        Ok(())
    }

    /// A full snapshot: flushes the content file, then writes every run of
    /// verified chunks and the trusted frontier of the tree (about
    /// `hash_len + 1` bytes per trusted leaf, so `N·(hash_len + 1)` bytes
    /// when complete) to a new file, in time linear in the tree size.
    /// Skipped when nothing was written and neither the verified set nor
    /// the trusted hashes changed since the last checkpoint.
    fn checkpoint(&mut self, snapshot: &Snapshot<'_>) -> io::Result<()> {
        self.write_checkpoint(snapshot)
    }

    fn wait_checkpoint(&mut self) -> io::Result<()> {
        FileStorage::wait_checkpoint(self)
    }
}

impl Drop for FileStorage {
    fn drop(&mut self) {
        // Chunks still gathered go to the file; the checkpoint writer (a
        // field dropped after this) then finishes its last checkpoint and
        // reports an error nobody collected. These chunks are in no
        // checkpoint, so losing them costs a re-download, not integrity.
        if let Err(e) = self.pending.flush(&self.file) {
            eprintln!(
                "ppspp-store: warning: cannot write {}: {e}",
                self.path.display()
            );
        }
    }
}
