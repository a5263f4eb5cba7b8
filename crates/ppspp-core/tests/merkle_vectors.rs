//! Merkle roots that libswift and an independent implementation agree on
//! (docs/ppspp-wire.md, "Merkle roots"), and the hashes of the captured
//! libswift exchange of a 3000-byte file.

use ppspp_core::merkle::{self, BuildOptions, Parallelism};
use ppspp_core::{Bin, ChunkIndex, ChunkSize, HashFunction, MerkleError, MerkleTree};

fn pat251(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

fn dollar(n: usize) -> Vec<u8> {
    vec![b'$'; n]
}

fn zero(n: usize) -> Vec<u8> {
    vec![0; n]
}

fn vectors() -> Vec<(&'static str, Vec<u8>, u64, &'static str)> {
    vec![
        (
            "123\\n",
            b"123\n".to_vec(),
            1024,
            "a8fdc205a9f19cc1c7507a60c4f01b13d11d7fd0",
        ),
        (
            "a",
            b"a".to_vec(),
            1024,
            "86f7e437faa5a7fce15d1ddcb9eaeaea377667b8",
        ),
        (
            "dollar(1024)",
            dollar(1024),
            1024,
            "4d38c7459a659d769bb956c2d758d266008199a4",
        ),
        (
            "dollar(1028)",
            dollar(1028),
            1024,
            "5b53677d3a695f29f1b4e18ab6d705312ef7f8c3",
        ),
        (
            "dollar(1028)",
            dollar(1028),
            8192,
            "75c6da265c89ae4c96943fafc89c3478fdb17757",
        ),
        (
            "pat251(2048)",
            pat251(2048),
            1024,
            "a43ccf0e830f045806ac8da973c9dce22bf6b146",
        ),
        (
            "pat251(3000)",
            pat251(3000),
            1024,
            "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a",
        ),
        (
            "pat251(3000)",
            pat251(3000),
            8192,
            "5e25a94c1eb80894140b670c6ae18f72d3358eec",
        ),
        (
            "zero(5120)",
            zero(5120),
            1024,
            "2857f8d88fa98b6a54a94be8841913492885c1f7",
        ),
        (
            "zero(5120)",
            zero(5120),
            8192,
            "ec8d8db07ace21ae014c4d7dbe42297dfe61976a",
        ),
        (
            "pat251(1000000)",
            pat251(1_000_000),
            1024,
            "1e1f88d862496e4db2b81edf33aab0195cb80107",
        ),
        (
            "pat251(1048576)",
            pat251(1_048_576),
            1024,
            "36ac6d9ac717c5fa85937a8397f0e418ece3ac9f",
        ),
        (
            "pat251(1048576)",
            pat251(1_048_576),
            8192,
            "1e14fd569e6bb4a0f1a9cc1d155a2ed8db225a60",
        ),
    ]
}

#[test]
fn table_roots_from_bytes() {
    for (name, data, cs, root) in vectors() {
        let cs = ChunkSize::new(cs).unwrap();
        let tree = MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap();
        assert_eq!(tree.root().to_hex(), root, "{name} / {cs}");
        assert_eq!(tree.content_len(), data.len() as u64);
        assert_eq!(tree.chunk_count(), cs.chunks_in(data.len() as u64));
        let par = MerkleTree::from_bytes_with(&data, cs, HashFunction::Sha1, Parallelism::Parallel);
        assert_eq!(
            par.unwrap().root().to_hex(),
            root,
            "{name} / {cs} in parallel"
        );
    }
}

#[test]
fn table_roots_from_reader() {
    for (name, data, cs, root) in vectors() {
        let cs = ChunkSize::new(cs).unwrap();
        let tree = MerkleTree::from_reader(&data[..], cs, HashFunction::Sha1).unwrap();
        assert_eq!(tree.root().to_hex(), root, "{name} / {cs}");
        // Small blocks: many blocks, a merge stack and a partial last block.
        for parallelism in [Parallelism::Sequential, Parallelism::Parallel] {
            let opts = BuildOptions {
                block_bytes: 4 * cs.bytes_usize(),
                queue_depth: 1,
                parallelism,
            };
            let tree =
                MerkleTree::from_reader_with(&data[..], cs, HashFunction::Sha1, &opts).unwrap();
            assert_eq!(
                tree.root().to_hex(),
                root,
                "{name} / {cs} in 4-chunk blocks, {parallelism:?}"
            );
        }
    }
}

#[test]
fn table_roots_from_reader_root_only() {
    for (name, data, cs, root) in vectors() {
        let cs = ChunkSize::new(cs).unwrap();
        let info = merkle::root_from_reader(&data[..], cs, HashFunction::Sha1).unwrap();
        assert_eq!(info.root.to_hex(), root, "{name} / {cs}");
        assert_eq!(info.content_len, data.len() as u64);
        assert_eq!(info.chunk_count, cs.chunks_in(data.len() as u64));
        for parallelism in [Parallelism::Sequential, Parallelism::Parallel] {
            let opts = BuildOptions {
                block_bytes: 2 * cs.bytes_usize(),
                queue_depth: 3,
                parallelism,
            };
            let info =
                merkle::root_from_reader_with(&data[..], cs, HashFunction::Sha1, &opts).unwrap();
            assert_eq!(
                info.root.to_hex(),
                root,
                "{name} / {cs} in 2-chunk blocks, {parallelism:?}"
            );
        }
    }
}

#[test]
fn libswift_capture_hashes() {
    // INTEGRITY(0-1) INTEGRITY(2-2) INTEGRITY(1-1) DATA(0) in the capture.
    let data = pat251(3000);
    let tree = MerkleTree::from_reader(&data[..], ChunkSize::DEFAULT, HashFunction::Sha1).unwrap();
    let peaks: Vec<(Bin, String)> = tree
        .peaks()
        .into_iter()
        .map(|(b, h)| (b, h.to_hex()))
        .collect();
    assert_eq!(
        peaks,
        vec![
            (
                Bin(1),
                "a43ccf0e830f045806ac8da973c9dce22bf6b146".to_string()
            ),
            (
                Bin(4),
                "7db790459d841efa44194597ab0c4b1d44de08c6".to_string()
            ),
        ]
    );
    let uncles = tree.uncles(ChunkIndex(0), |_| false);
    assert_eq!(uncles.len(), 1);
    assert_eq!(uncles[0].0, Bin(2));
    assert_eq!(
        uncles[0].1.to_hex(),
        "12cb9b5124006e2075855a436aa9774ff8c00467"
    );
    assert_eq!(tree.peaks_needed(false).len(), 2);
    assert!(tree.peaks_needed(true).is_empty());
}

#[test]
fn empty_content_is_an_error() {
    let cs = ChunkSize::DEFAULT;
    let f = HashFunction::Sha1;
    assert!(matches!(
        MerkleTree::from_bytes(&[], cs, f),
        Err(MerkleError::EmptyContent)
    ));
    assert!(matches!(
        MerkleTree::from_reader(&[][..], cs, f),
        Err(MerkleError::EmptyContent)
    ));
    assert!(matches!(
        merkle::root_from_reader(&[][..], cs, f),
        Err(MerkleError::EmptyContent)
    ));
    let no_chunks: [&[u8]; 0] = [];
    assert!(matches!(
        MerkleTree::from_chunks(no_chunks, cs, f),
        Err(MerkleError::EmptyContent)
    ));
}
