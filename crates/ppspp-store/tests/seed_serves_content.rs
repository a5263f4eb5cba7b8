//! A seeding store serves the complete file chunk by chunk, the last one
//! short, and refuses writes.

use ppspp_core::storage::Storage;
use ppspp_core::{ChunkIndex, ChunkSize};
use ppspp_store::{checkpoint_path, FileStorage};

#[test]
fn a_seed_serves_every_chunk_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seed.bin");
    let data: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();

    let cs = ChunkSize::new(128).unwrap();
    let mut store = FileStorage::seed(&path, cs).unwrap();
    assert_eq!(store.content_len(), Some(1000));
    let mut buf = [0u8; 128];
    for (i, want) in data.chunks(128).enumerate() {
        let n = store.read_chunk(ChunkIndex(i as u64), &mut buf).unwrap();
        assert_eq!(&buf[..n], want, "chunk {i}");
    }
    assert!(store.read_chunk(ChunkIndex(8), &mut buf).is_err());
    assert!(store.read_chunk(ChunkIndex(u64::MAX), &mut buf).is_err());
    assert!(store.read_chunk(ChunkIndex(0), &mut buf[..100]).is_err());
    assert!(store.write_chunk(ChunkIndex(0), &data[..128]).is_err());
    assert!(store.set_content_len(10).is_err());
    assert!(store.set_content_len(1000).is_ok());
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert!(!checkpoint_path(&path).exists());

    assert!(FileStorage::seed(dir.path().join("missing"), cs).is_err());
}
