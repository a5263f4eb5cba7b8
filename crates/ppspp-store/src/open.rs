//! Opening a download: restoring the checkpoint, checking it against the
//! swarm and the content file, and re-hashing when the file changed.

use std::fs::{self, File};
use std::io;
use std::path::Path;

use ppspp_core::storage::Snapshot;
use ppspp_core::{Bin, Binmap, ChunkIndex, PartialTree};
use rayon::prelude::*;

use crate::file::{checkpoint_path, checkpoint_tmp_path, mtime_ns, Download, Saved};
use crate::format::{self, Header};
use crate::pio::read_full_at;
use crate::writer::CheckpointWriter;
use crate::{FileStorage, Resume, StoreError, SwarmMeta};

/// A checkpoint that passed every check.
struct Restored {
    header: Header,
    have: Binmap,
    tree: PartialTree,
}

impl FileStorage {
    /// Opens (or creates) the content file at `path` for downloading swarm
    /// `swarm`, and resumes from its checkpoint `PATH.ppspp` when there is
    /// a usable one.
    ///
    /// A damaged checkpoint, one of another format version or of another
    /// swarm (root, hash function, chunk size or size disagree) is ignored:
    /// the download starts afresh, the content file is kept, and
    /// [`Resume::warning`] says why. When the content file's length or
    /// modification time is not what the checkpoint recorded, every chunk it
    /// claims is hashed again (in parallel) against the restored tree and
    /// those that fail are dropped; the result is checkpointed at once. A
    /// `PATH.ppspp.tmp` left by a killed
    /// checkpoint writer is removed; the previous checkpoint stands.
    ///
    /// Fails on I/O errors other than a missing checkpoint, and when the
    /// metadata itself is inconsistent.
    pub fn open_download(
        path: impl AsRef<Path>,
        swarm: &SwarmMeta,
    ) -> Result<(FileStorage, Resume), StoreError> {
        let path = path.as_ref().to_path_buf();
        let meta_count = swarm.known_chunk_count()?;
        let fresh_tree = || match meta_count {
            Some(n) => {
                PartialTree::with_chunk_count(swarm.hash_fn, swarm.root, swarm.chunk_size, n)
            }
            None => PartialTree::new(swarm.hash_fn, swarm.root, swarm.chunk_size),
        };
        let fresh = fresh_tree()?;

        // A checkpoint writer killed before its rename left this; removed
        // before the content file is created, so that once the content
        // file exists no stale temporary one does. Something there that
        // cannot be removed (a directory) would make every checkpoint
        // fail: better refused now than after the download.
        let tmp = checkpoint_tmp_path(&path);
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(StoreError::io("remove", &tmp)(e));
            }
            _ => {}
        }
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(StoreError::io("open", &path))?;
        let file_meta = file.metadata().map_err(StoreError::io("stat", &path))?;

        let ck = checkpoint_path(&path);
        let bytes = match fs::read(&ck) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(StoreError::io("read", &ck)(e)),
        };

        let had_checkpoint = bytes.is_some();
        let mut resume = Resume {
            have: Binmap::new(),
            tree: fresh,
            rehashed: 0,
            dropped: 0,
            warning: None,
        };
        let mut last = None;
        if let Some(bytes) = bytes {
            match restore(&bytes, swarm, meta_count) {
                Err(why) => {
                    resume.warning = Some(format!("checkpoint {} ignored: {why}", ck.display()));
                }
                Ok(r) => {
                    let unchanged = r.header.file_len == file_meta.len()
                        && r.header.mtime_ns.is_some()
                        && r.header.mtime_ns == mtime_ns(&file_meta);
                    resume.have = r.have;
                    resume.tree = r.tree;
                    // A checkpoint without the size holds nothing; the
                    // metadata's size is better than none.
                    if resume.tree.chunk_count().is_none() && meta_count.is_some() {
                        resume.tree = fresh_tree()?;
                    }
                    if unchanged {
                        last = Some(Saved::of(&resume.have, &resume.tree));
                    } else {
                        let failed = rehash(&path, &resume.tree, &resume.have);
                        resume.rehashed = resume.have.count();
                        resume.dropped = failed.len() as u64;
                        for c in failed {
                            resume.have.clear_chunk(c);
                            resume.tree.forget_chunk(c);
                        }
                    }
                }
            }
        }

        let writer_file = file.try_clone().map_err(StoreError::io("open", &path))?;
        let writer = CheckpointWriter::spawn(path.clone(), writer_file)
            .map_err(StoreError::io("start the checkpoint writer for", &path))?;
        let mut storage = FileStorage {
            content_len: resume.tree.content_len().or(swarm.content_len),
            path,
            file,
            chunk_size: swarm.chunk_size,
            download: Some(Download {
                swarm: swarm.clone(),
                dirty: false,
                last,
                writer,
            }),
            cache: Default::default(),
            pending: Default::default(),
        };
        if resume.rehashed > 0 || !had_checkpoint {
            // Record the re-hash at once, so that another crash before the
            // first checkpoint does not repeat it. A new download gets its
            // checkpoint (of nothing yet) before a chunk is written: killed
            // before its first progress checkpoint, it would otherwise
            // leave a content file without one, which the next run must
            // refuse as someone else's file.
            let snapshot = Snapshot {
                have: &resume.have,
                tree: &resume.tree,
                urgent: true,
            };
            storage
                .write_checkpoint(&snapshot)
                .and_then(|()| storage.wait_checkpoint())
                .map_err(StoreError::io("write checkpoint", &ck))?;
        }
        Ok((storage, resume))
    }
}

/// Decodes and checks a checkpoint against the swarm; the reason it is not
/// usable otherwise.
fn restore(bytes: &[u8], swarm: &SwarmMeta, meta_count: Option<u64>) -> Result<Restored, String> {
    let decoded = format::decode(bytes).map_err(|e| e.to_string())?;
    let h = &decoded.header;
    if h.hash_fn != swarm.hash_fn || h.root != swarm.root {
        return Err(format!(
            "it belongs to another swarm ({} root {})",
            h.hash_fn, h.root
        ));
    }
    if h.chunk_size != swarm.chunk_size {
        return Err(format!(
            "chunk size {} differs from the swarm's {}",
            h.chunk_size, swarm.chunk_size
        ));
    }
    let disagree = |a: Option<u64>, b: Option<u64>| matches!((a, b), (Some(x), Some(y)) if x != y);
    if disagree(h.chunk_count, meta_count) || disagree(h.content_len, swarm.content_len) {
        return Err("its content size differs from the swarm metadata".into());
    }
    let mut nodes = decoded.nodes;
    let tree = PartialTree::restore(
        h.hash_fn,
        h.root,
        h.chunk_size,
        h.chunk_count,
        h.content_len,
        &mut nodes,
        &decoded.have,
    );
    nodes.finish().map_err(|e| e.to_string())?;
    let tree = tree.map_err(|e| format!("its hashes do not check out: {e}"))?;
    Ok(Restored {
        header: decoded.header,
        have: decoded.have,
        tree,
    })
}

/// Hashes every chunk of `have` in the content file at `path` against the
/// trusted leaf hashes of `tree`; returns those that fail (missing, short,
/// unreadable or different), in order. Each worker reads through its own
/// file handle.
fn rehash(path: &Path, tree: &PartialTree, have: &Binmap) -> Vec<ChunkIndex> {
    let chunks: Vec<u64> = have
        .filled_runs()
        .flat_map(|r| r.first().0..=r.last().0)
        .collect();
    let cs = tree.chunk_size().bytes_usize();
    let mut failed: Vec<ChunkIndex> = chunks
        .par_iter()
        .map_init(
            || (File::open(path).ok(), vec![0u8; cs]),
            |(file, buf), &c| {
                let ok = file
                    .as_ref()
                    .is_some_and(|f| chunk_matches(f, tree, ChunkIndex(c), buf));
                (!ok).then_some(ChunkIndex(c))
            },
        )
        .flatten()
        .collect();
    failed.sort_unstable();
    failed
}

/// Whether chunk `chunk` in `file` hashes to its trusted leaf in `tree`.
fn chunk_matches(file: &File, tree: &PartialTree, chunk: ChunkIndex, buf: &mut [u8]) -> bool {
    let (Some(n), Some(leaf)) = (tree.chunk_count(), Bin::leaf(chunk)) else {
        return false;
    };
    let Some(trusted) = tree.trusted(leaf) else {
        return false;
    };
    let cs = tree.chunk_size().bytes_u64();
    let start = chunk.0 * cs;
    // Every chunk but the last is whole; the last one's length is known
    // from the content length (else: whatever the file holds, up to a chunk).
    let want = match tree.content_len() {
        Some(len) if chunk.0 + 1 == n => len.saturating_sub(start).min(cs) as usize,
        _ => buf.len(),
    };
    let Some(buf) = buf.get_mut(..want) else {
        return false;
    };
    match read_full_at(file, buf, start) {
        Ok(got) if got == want || (got > 0 && chunk.0 + 1 == n && tree.content_len().is_none()) => {
            tree.hash_function().digest(&buf[..got]) == trusted
        }
        _ => false,
    }
}
