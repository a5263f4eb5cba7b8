//! Shared test fixtures: a seeder's content and tree, and a leecher that
//! receives chunks as a real receiver would and stores them in a
//! [`FileStorage`].

#![allow(dead_code)]

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use ppspp_core::storage::{Snapshot, Storage};
use ppspp_core::{Bin, Binmap, ChunkIndex, ChunkSize, HashFunction, MerkleTree, PartialTree};
use ppspp_store::{FileStorage, Resume, SwarmMeta};

/// A seeder: the content, its tree, and the swarm's metadata.
pub struct Seeder {
    pub data: Vec<u8>,
    pub cs: usize,
    pub tree: MerkleTree,
    pub meta: SwarmMeta,
}

/// Content of `len` bytes in chunks of `cs`, derived from `salt`.
pub fn seeder(len: usize, cs: usize, salt: u8, f: HashFunction) -> Seeder {
    let data: Vec<u8> = (0..len)
        .map(|i| {
            (i as u64)
                .wrapping_mul(0x9e37_79b9)
                .rotate_left(u32::from(salt)) as u8
                ^ salt
        })
        .collect();
    let size = ChunkSize::new(cs as u64).unwrap();
    let tree = MerkleTree::from_bytes(&data, size, f).unwrap();
    let meta = SwarmMeta::new(f, tree.root(), size);
    Seeder {
        data,
        cs,
        tree,
        meta,
    }
}

impl Seeder {
    pub fn chunk(&self, c: u64) -> &[u8] {
        self.data.chunks(self.cs).nth(c as usize).unwrap()
    }

    pub fn chunk_count(&self) -> u64 {
        self.tree.chunk_count()
    }
}

/// A leecher's state: what the core would hold.
pub struct Leecher {
    pub storage: FileStorage,
    pub have: Binmap,
    pub tree: PartialTree,
}

/// The content file of a test.
pub fn content_path(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("content.bin")
}

/// The resume report without the restored state.
#[derive(Debug, PartialEq, Eq)]
pub struct Report {
    pub rehashed: u64,
    pub dropped: u64,
    pub warning: Option<String>,
}

/// Opens the download: the leecher holding the restored state, and the
/// rest of the resume report.
pub fn open(path: &Path, meta: &SwarmMeta) -> (Leecher, Report) {
    let (storage, resume) = FileStorage::open_download(path, meta).unwrap();
    let Resume {
        have,
        tree,
        rehashed,
        dropped,
        warning,
    } = resume;
    let report = Report {
        rehashed,
        dropped,
        warning,
    };
    (
        Leecher {
            storage,
            have,
            tree,
        },
        report,
    )
}

/// A clean report: the checkpoint was trusted as it was.
pub fn trusted() -> Report {
    Report {
        rehashed: 0,
        dropped: 0,
        warning: None,
    }
}

impl Leecher {
    /// Receives chunk `c` from `seeder` over the "wire": peaks while the
    /// leecher has nothing, the uncles the seeder picks from what it
    /// knows the leecher holds, then the chunk, verified and stored.
    pub fn receive(&mut self, seeder: &Seeder, c: u64) {
        let chunk = ChunkIndex(c);
        let have = &self.have;
        if have.is_empty() {
            self.tree.accept_peaks(&seeder.tree.peaks()).unwrap();
        }
        let holds = |b: Bin| b.chunks().is_some_and(|r| have.count_in(r) > 0);
        for (bin, hash) in seeder.tree.uncles(chunk, holds) {
            self.tree.accept_uncle(bin, hash).unwrap();
        }
        let data = seeder.chunk(c);
        self.tree.verify_chunk(chunk, data).unwrap();
        if c + 1 == seeder.chunk_count() {
            self.storage
                .set_content_len(self.tree.content_len().unwrap())
                .unwrap();
        }
        self.storage.write_chunk(chunk, data).unwrap();
        self.have.set_chunk(chunk);
    }

    pub fn checkpoint(&mut self) {
        let snapshot = Snapshot {
            have: &self.have,
            tree: &self.tree,
            urgent: true,
        };
        self.storage.checkpoint(&snapshot).unwrap();
        // Checkpoints are written in the background; these tests look at
        // the file right after.
        self.storage.wait_checkpoint().unwrap();
    }

    /// Reads chunk `c` back as the leecher would to serve it.
    pub fn read(&mut self, c: u64) -> Vec<u8> {
        let mut buf = vec![0u8; self.storage.chunk_size().bytes_usize()];
        let n = self.storage.read_chunk(ChunkIndex(c), &mut buf).unwrap();
        buf.truncate(n);
        buf
    }
}

/// The chunks of a binmap, in order.
pub fn chunks_of(map: &Binmap) -> Vec<u64> {
    map.filled_runs()
        .flat_map(|r| r.first().0..=r.last().0)
        .collect()
}

/// Sets the file's modification time to a fixed moment (2001-09-09).
pub fn set_mtime(path: &Path, secs: u64) {
    let file = File::options().write(true).open(path).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
        .unwrap();
}
