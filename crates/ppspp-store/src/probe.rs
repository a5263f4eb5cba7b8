//! What a download's path already holds, looked at without changing
//! anything: a download of this swarm begun earlier, or a file that is not
//! ours to overwrite.

use std::fs;
use std::io;
use std::path::Path;

use crate::file::checkpoint_path;
use crate::format;
use crate::{StoreError, SwarmMeta};

/// What is at a download's content path (see [`probe_download`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Existing {
    /// No content file.
    Nothing,
    /// A content file with a checkpoint of this swarm beside it: a download
    /// begun (or completed) earlier. `chunks`: how many chunks the
    /// checkpoint claims; `complete`: whether that is all of them.
    Download {
        /// Chunks the checkpoint claims (0: the download stored nothing).
        chunks: u64,
        /// Whether those are all the content's chunks.
        complete: bool,
    },
    /// A content file with no checkpoint of this swarm beside it: not a
    /// download of this swarm, so writing to it would destroy what it
    /// holds (unless it is empty).
    Other {
        /// The file's length in bytes.
        len: u64,
        /// What is beside it instead: no checkpoint, one of another swarm,
        /// or one that cannot be read.
        why: String,
    },
}

/// Looks at `path` and its checkpoint `PATH.ppspp` without creating or
/// changing anything. A checkpoint belongs to `swarm` when it decodes and
/// names the same root, hash function and chunk size; whether its hashes
/// and size check out is for [`FileStorage::open_download`](crate::FileStorage::open_download)
/// to decide (a damaged body of the same swarm is still this swarm's
/// download).
///
/// Fails on I/O errors other than a missing file.
pub fn probe_download(path: impl AsRef<Path>, swarm: &SwarmMeta) -> Result<Existing, StoreError> {
    let path = path.as_ref();
    let len = match fs::metadata(path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Existing::Nothing),
        Err(e) => return Err(StoreError::io("stat", path)(e)),
    };
    let ck = checkpoint_path(path);
    let bytes = match fs::read(&ck) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Existing::Other {
                len,
                why: format!("there is no checkpoint {} beside it", ck.display()),
            });
        }
        Err(e) => return Err(StoreError::io("read", &ck)(e)),
    };
    let decoded = match format::decode(&bytes) {
        Ok(d) => d,
        Err(e) => {
            return Ok(Existing::Other {
                len,
                why: format!("its checkpoint {} is unreadable: {e}", ck.display()),
            });
        }
    };
    let h = &decoded.header;
    if h.root != swarm.root || h.hash_fn != swarm.hash_fn || h.chunk_size != swarm.chunk_size {
        return Ok(Existing::Other {
            len,
            why: format!(
                "its checkpoint {} belongs to another swarm ({} root {})",
                ck.display(),
                h.hash_fn,
                h.root
            ),
        });
    }
    let chunks = decoded.have.count();
    Ok(Existing::Download {
        chunks,
        complete: h.chunk_count.is_some_and(|n| n > 0 && chunks >= n),
    })
}
