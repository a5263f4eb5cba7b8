//! The file a download writes (`get -o`, `stream -o`): it refuses to
//! overwrite a file that is not a download of the swarm, tells what is
//! resumed, and leaves nothing behind when nothing was stored.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use ppspp_core::{Binmap, ChunkIndex};
use ppspp_store::{checkpoint_path, probe_download, Existing, FileStorage, Resume, SwarmMeta};

use super::progress::human_bytes;

/// The content file of a download and what was there before this run.
#[derive(Debug)]
pub struct Target {
    path: PathBuf,
    meta: SwarmMeta,
    /// The content file's length before this run (`None`: there was none).
    len_before: Option<u64>,
    /// Whether its checkpoint did.
    checkpoint_existed: bool,
}

/// A download opened for writing.
pub struct Opened {
    /// Where it goes.
    pub target: Target,
    /// The content file.
    pub storage: FileStorage,
    /// What it resumes from.
    pub resume: Resume,
}

/// Opens the download of `meta` at `path`. A non-empty file without a
/// checkpoint of this swarm beside it is someone else's: refused unless
/// `force` (then it is written over chunk by chunk). A file with its
/// checkpoint is a download to resume, or one already complete. Prints the
/// store's warnings on stderr.
pub fn open(path: &Path, meta: &SwarmMeta, force: bool) -> Result<Opened> {
    let shown = path.display();
    let existing = probe_download(path, meta)?;
    match &existing {
        Existing::Other { len, why } if *len > 0 && !force => bail!(
            "{shown} exists and is not a download of this swarm: {why}; \
             choose another --output, or give --force to overwrite it"
        ),
        _ => {}
    }
    let checkpoint_existed = checkpoint_path(path).exists();
    // Errors name the file and the operation; the cause is their source.
    let (storage, resume) = FileStorage::open_download(path, meta)?;
    if let Some(w) = &resume.warning {
        eprintln!("ppspp: warning: {w}");
    }
    if resume.dropped > 0 {
        eprintln!(
            "ppspp: {} in {shown} no longer matched their hashes and will be fetched again",
            super::progress::count(resume.dropped as usize, "chunk", "chunks")
        );
    }
    Ok(Opened {
        target: Target {
            path: path.to_path_buf(),
            meta: meta.clone(),
            len_before: match &existing {
                Existing::Nothing => None,
                Existing::Other { len, .. } => Some(*len),
                Existing::Download { .. } => std::fs::metadata(path).ok().map(|m| m.len()),
            },
            checkpoint_existed,
        },
        storage,
        resume,
    })
}

impl Opened {
    /// Bytes of content already stored.
    pub fn stored_bytes(&self) -> u64 {
        stored_bytes(
            &self.resume.have,
            self.target.meta.chunk_size.bytes_u64(),
            self.resume.tree.chunk_count(),
            self.content_len(),
        )
    }

    /// The content's size, when known (from the URL or the checkpoint).
    pub fn content_len(&self) -> Option<u64> {
        self.resume
            .tree
            .content_len()
            .or(self.target.meta.content_len)
    }

    /// Whether every chunk is stored already.
    pub fn complete(&self) -> bool {
        self.resume
            .tree
            .chunk_count()
            .is_some_and(|n| n > 0 && self.resume.have.count() >= n)
    }

    /// What a user should hear before the download starts: that it resumes
    /// (and from where), or that it is complete already; nothing for a
    /// fresh start.
    pub fn status(&self) -> Option<String> {
        let path = self.target.path.display();
        let stored = self.stored_bytes();
        let total = self.content_len().or_else(|| {
            let n = self.resume.tree.chunk_count()?;
            Some(n * self.target.meta.chunk_size.bytes_u64())
        });
        if self.complete() {
            return Some(format!(
                "{path} is already complete ({})",
                human_bytes(stored as f64)
            ));
        }
        if self.resume.have.count() == 0 {
            return None;
        }
        Some(match total {
            Some(t) => format!(
                "resuming {path} at {} of {} ({:.1}%)",
                human_bytes(stored as f64),
                human_bytes(t as f64),
                100.0 * stored as f64 / t.max(1) as f64
            ),
            None => format!("resuming {path} at {}", human_bytes(stored as f64)),
        })
    }
}

impl Target {
    /// The content file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes what this run created if no chunk ended up stored (its
    /// checkpoint claims none, or there is none): an empty or sparse
    /// content file and a checkpoint of nothing must not look like a
    /// download begun, and a next run with another `-o` should not find
    /// litter. A file or checkpoint that was there before is never removed
    /// (an empty file is left empty again).
    /// Call once the storage is closed (its last checkpoint written).
    /// Returns whether the content file was removed; a failure to look or
    /// to remove is a warning, not the error the command ends with.
    pub fn discard_if_empty(&self) -> bool {
        self.try_discard().unwrap_or_else(|e| {
            eprintln!("ppspp: warning: {e:#}");
            false
        })
    }

    fn try_discard(&self) -> Result<bool> {
        let stored = match probe_download(&self.path, &self.meta)? {
            Existing::Nothing => return Ok(false),
            Existing::Download { chunks, .. } => chunks > 0,
            // Without a checkpoint of this swarm no chunk can be resumed.
            Existing::Other { .. } => false,
        };
        if stored {
            return Ok(false);
        }
        if !self.checkpoint_existed {
            remove_if_there(&checkpoint_path(&self.path))?;
        }
        match self.len_before {
            None => {
                remove_if_there(&self.path)?;
                Ok(true)
            }
            // The size learned from peers made it a sparse file of zeros;
            // it was empty, and is again.
            Some(0) => {
                let f = std::fs::OpenOptions::new().write(true).open(&self.path);
                f.and_then(|f| f.set_len(0)).map_err(|e| {
                    anyhow::Error::new(e)
                        .context(format!("cannot truncate {}", self.path.display()))
                })?;
                Ok(false)
            }
            Some(_) => Ok(false),
        }
    }
}

fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(anyhow::Error::new(e).context(format!("cannot remove {}", path.display())))
        }
        _ => Ok(()),
    }
}

/// Bytes in the chunks of `have`: whole chunks, but the last chunk of the
/// content only as long as the content length leaves it.
pub fn stored_bytes(
    have: &Binmap,
    chunk_size: u64,
    chunk_count: Option<u64>,
    content_len: Option<u64>,
) -> u64 {
    let whole = have.count() * chunk_size;
    match (chunk_count, content_len) {
        (Some(n), Some(len)) if n > 0 && have.contains(ChunkIndex(n - 1)) => {
            whole - (n * chunk_size).saturating_sub(len)
        }
        _ => whole,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ppspp_core::storage::Storage;
    use ppspp_core::{ChunkRange, ChunkSize, Hash, HashFunction};

    fn meta() -> SwarmMeta {
        let root = Hash::from_hex("d6e7fb96c98bd9ffc4d71aed40b0d351096d993a").unwrap();
        SwarmMeta::new(HashFunction::Sha1, root, ChunkSize::DEFAULT).with_content_len(5000)
    }

    #[test]
    fn the_last_chunk_counts_its_own_length() {
        let mut have = Binmap::new();
        have.set(ChunkRange::with_len(0, 2).unwrap());
        // 3 chunks of 1000 bytes, 2500 in all: the first two are whole.
        assert_eq!(stored_bytes(&have, 1000, Some(3), Some(2500)), 2000);
        have.set_chunk(ChunkIndex(2));
        assert_eq!(stored_bytes(&have, 1000, Some(3), Some(2500)), 2500);
        assert_eq!(stored_bytes(&have, 1000, None, None), 3000);
    }

    #[test]
    fn a_file_created_for_nothing_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let opened = open(&path, &meta(), false).unwrap();
        assert!(path.exists());
        drop(opened.storage);
        assert!(opened.target.discard_if_empty());
        assert!(!path.exists());
        assert!(!checkpoint_path(&path).exists());
    }

    /// The size learned from peers makes the content file sparse at full
    /// length; an empty file given as the output is left empty again.
    #[test]
    fn an_empty_file_given_is_left_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        std::fs::write(&path, b"").unwrap();
        let mut opened = open(&path, &meta(), false).unwrap();
        opened.storage.set_content_len(5000).unwrap();
        drop(opened.storage);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 5000);
        assert!(!opened.target.discard_if_empty());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    }

    #[test]
    fn a_file_not_ours_is_refused_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("notes");
        std::fs::write(&path, b"notes").unwrap();
        let err = open(&path, &meta(), false).err().expect("refused");
        assert!(format!("{err:#}").contains("--force"), "{err:#}");
        assert!(!checkpoint_path(&path).exists());
        let opened = open(&path, &meta(), true).unwrap();
        drop(opened.storage);
        // Forced, but nothing stored: the file was there, so it stays.
        assert!(!opened.target.discard_if_empty());
        assert_eq!(std::fs::read(&path).unwrap(), b"notes");
    }
}
