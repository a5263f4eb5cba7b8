//! Fuzz incremental Merkle verification with hostile peaks, uncles and
//! chunks: nothing may panic, and a chunk may only verify when its bytes are
//! the real content's (RFC 7574 §5.2).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ppspp_core::{Bin, ChunkIndex, ChunkSize, Hash, HashFunction, MerkleTree, PartialTree};

/// Reads operations from the fuzz input.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    fn u64(&mut self) -> Option<u64> {
        let (head, rest) = self.0.split_at_checked(8)?;
        self.0 = rest;
        Some(u64::from_le_bytes(head.try_into().ok()?))
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input(data);
    let (Some(n), Some(cs), Some(mode)) = (input.byte(), input.byte(), input.byte()) else {
        return;
    };
    // Real content: 1..=64 chunks of 1..=16 bytes, derived from the seed bytes.
    let cs = ChunkSize::new(u64::from(cs % 16) + 1).unwrap();
    let chunks = u64::from(n % 64) + 1;
    let len = (chunks - 1) * cs.bytes_u64() + u64::from(mode) % cs.bytes_u64() + 1;
    let content: Vec<u8> = (0..len).map(|i| (i * 7 + u64::from(n)) as u8).collect();
    let hf = HashFunction::Sha1;
    let tree = MerkleTree::from_bytes(&content, cs, hf).unwrap();
    let mut partial = if mode & 0x80 != 0 {
        PartialTree::with_chunk_count(hf, tree.root(), cs, chunks).unwrap()
    } else {
        PartialTree::new(hf, tree.root(), cs).unwrap().with_max_chunks(1 << 16)
    };
    let real_chunk = |i: u64| {
        let start = (i * cs.bytes_u64()) as usize;
        &content[start..(start + cs.bytes_usize()).min(content.len())]
    };
    while let Some(op) = input.byte() {
        match op % 6 {
            // The true peaks.
            0 => {
                let _ = partial.accept_peaks(&tree.peaks());
            }
            // Forged peaks: arbitrary bins, hashes from the input or the tree.
            1 => {
                let count = input.byte().unwrap_or(0) % 4;
                let mut peaks = Vec::new();
                for _ in 0..count {
                    let bin = Bin(input.u64().unwrap_or(0));
                    let hash = match input.byte() {
                        Some(b) if b % 2 == 0 => tree.node(bin).unwrap_or(tree.root()),
                        Some(b) => hf.digest(&[b]),
                        None => tree.root(),
                    };
                    peaks.push((bin, hash));
                }
                let _ = partial.accept_peaks(&peaks);
            }
            // A true uncle, or a node hash, for some bin.
            2 => {
                let bin = Bin(input.u64().unwrap_or(0) % 256);
                if let Some(h) = tree.node(bin) {
                    let _ = partial.accept_uncle(bin, h);
                }
            }
            // A forged uncle.
            3 => {
                let bin = Bin(input.u64().unwrap_or(0));
                let hash = hf.digest(&[input.byte().unwrap_or(0)]);
                let _ = partial.accept_uncle(bin, hash);
            }
            // The true chunk with the uncles the sender would send.
            4 => {
                let i = u64::from(input.byte().unwrap_or(0)) % chunks;
                for (bin, h) in tree.uncles(ChunkIndex(i), |b| partial.trusted(b).is_some()) {
                    let _ = partial.accept_uncle(bin, h);
                }
                let _ = partial.verify_chunk(ChunkIndex(i), real_chunk(i));
            }
            // A forged chunk: must never verify.
            _ => {
                let i = input.u64().unwrap_or(0);
                let flen = usize::from(input.byte().unwrap_or(0) % 20);
                let mut fake: Vec<u8> = real_chunk(i % chunks).to_vec();
                fake.resize(flen, input.byte().unwrap_or(1));
                let is_real = i < chunks && fake.as_slice() == real_chunk(i);
                let ok = partial.verify_chunk(ChunkIndex(i), &fake).is_ok();
                assert!(!ok || is_real, "forged chunk {i} verified");
            }
        }
        // Whatever is trusted is the real tree's hash — once the receiver
        // has the real size. Peaks alone cannot pin the size: one peak equal
        // to the root passes the root check at any layer (RFC 7574 §5.6.1),
        // so a liar can make a receiver without metadata believe in
        // N = 2^k. Even then no forged chunk verifies (checked above).
        if partial.chunk_count() != Some(chunks) {
            continue;
        }
        for b in 0..(2 * chunks) {
            if let (Some(t), Some(real)) = (partial.trusted(Bin(b)), tree.node(Bin(b))) {
                assert_eq!(t, real, "bin {b} trusted with a wrong hash");
            }
        }
        let _: Option<Hash> = partial.trusted(Bin::ALL);
    }
});
