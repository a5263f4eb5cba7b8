//! What a checkpoint costs as a download grows: run by
//! `bench/checkpoint_cost.py`, which prints the table.
//!
//! Usage: `checkpoint_cost SIZE_MIB [CHUNK_SIZE]`. Writes SIZE_MIB of
//! pseudo-random content in a temporary directory, hashes it (SHA-1), then
//! "downloads" it chunk by chunk into a `FileStorage` (uncles and chunks
//! verified as a receiver would) and, at a few points, checkpoints twice:
//! once as the download would (flushing everything written since the
//! previous one), and once more right after with one more chunk, which
//! isolates the checkpoint's own cost from the content flush. Prints one
//! tab-separated line per point: MiB verified, checkpoint bytes, encode ms
//! (on the caller's thread), ms until durable with the content flush, ms
//! until durable without it.

use std::io::Write;
use std::time::Instant;

use ppspp_core::merkle::BuildOptions;
use ppspp_core::storage::{Snapshot, Storage};
use ppspp_core::{Bin, Binmap, ChunkIndex, ChunkSize, HashFunction, MerkleTree, PartialTree};
use ppspp_store::{checkpoint_path, FileStorage, SwarmMeta};

fn main() {
    let mut args = std::env::args().skip(1);
    let mib: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(100);
    let cs: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1024);
    let dir = std::env::temp_dir().join(format!("ppspp-ckcost-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("src");
    let len = mib << 20;
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&src).unwrap());
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut buf = vec![0u8; 1 << 20];
        for _ in 0..mib {
            for b in buf.chunks_mut(8) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b.copy_from_slice(&x.to_le_bytes()[..b.len()]);
            }
            f.write_all(&buf).unwrap();
        }
    }
    let size = ChunkSize::new(cs).unwrap();
    let file = std::fs::File::open(&src).unwrap();
    let options = BuildOptions::parallel();
    let tree = MerkleTree::from_reader_with(file, size, HashFunction::Sha1, &options).unwrap();
    let data = std::fs::read(&src).unwrap();
    let meta = SwarmMeta::new(HashFunction::Sha1, tree.root(), size).with_content_len(len);
    let out = dir.join("out");
    let (mut storage, resume) = FileStorage::open_download(&out, &meta).unwrap();
    let mut rx: PartialTree = resume.tree;
    let mut have = Binmap::new();
    rx.accept_peaks(&tree.peaks()).unwrap();
    let n = tree.chunk_count();
    let points: Vec<u64> = [1u64, 10, 25, 50, 100]
        .iter()
        .map(|p| (n * p / 100).max(1))
        .collect();
    let mut c = 0u64;
    for &point in &points {
        while c < point {
            let holds = |b: Bin| b.chunks().is_some_and(|r| have.count_in(r) > 0);
            for (bin, hash) in tree.uncles(ChunkIndex(c), holds) {
                rx.accept_uncle(bin, hash).unwrap();
            }
            let start = (c * cs) as usize;
            let chunk = &data[start..(start + cs as usize).min(data.len())];
            rx.verify_chunk(ChunkIndex(c), chunk).unwrap();
            storage.write_chunk(ChunkIndex(c), chunk).unwrap();
            have.set_chunk(ChunkIndex(c));
            c += 1;
        }
        let (encode, with_flush) = checkpoint(&mut storage, &have, &rx);
        let bytes = std::fs::metadata(checkpoint_path(&out)).unwrap().len();
        // Once more, nothing new but the last chunk again: the checkpoint
        // alone (a chunk re-written makes it dirty).
        let last = ChunkIndex(c - 1);
        let start = (last.0 * cs) as usize;
        let chunk = &data[start..(start + cs as usize).min(data.len())];
        storage.write_chunk(last, chunk).unwrap();
        let (_, alone) = checkpoint(&mut storage, &have, &rx);
        println!(
            "{:.1}\t{bytes}\t{encode:.1}\t{with_flush:.1}\t{alone:.1}",
            (c * cs) as f64 / (1 << 20) as f64
        );
    }
    drop(storage);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Checkpoints and waits: (ms on the caller's thread, ms until durable).
fn checkpoint(storage: &mut FileStorage, have: &Binmap, tree: &PartialTree) -> (f64, f64) {
    let t = Instant::now();
    let snapshot = Snapshot {
        have,
        tree,
        urgent: true,
    };
    storage.checkpoint(&snapshot).unwrap();
    let encode = t.elapsed().as_secs_f64() * 1e3;
    storage.wait_checkpoint().unwrap();
    (encode, t.elapsed().as_secs_f64() * 1e3)
}
