//! A damaged checkpoint (any byte flipped) is ignored with a warning: the
//! download starts afresh and the content file is kept.

mod common;

use common::{content_path, open, seeder};
use ppspp_core::HashFunction;
use ppspp_store::checkpoint_path;

#[test]
fn a_flipped_byte_makes_the_checkpoint_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(9 * 64, 64, 12, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    for c in 0..6 {
        a.receive(&s, c);
    }
    a.checkpoint();
    drop(a);
    let ck = checkpoint_path(&path);
    let good = std::fs::read(&ck).unwrap();

    // The magic, the version, a header field, the verified runs, a node
    // hash and the checksum itself.
    for at in [
        0,
        8,
        13,
        60,
        good.len() / 2,
        good.len() - 40,
        good.len() - 1,
    ] {
        let mut bad = good.clone();
        bad[at] ^= 0x04;
        std::fs::write(&ck, &bad).unwrap();
        let (b, report) = open(&path, &s.meta);
        let warning = report.warning.expect("a warning");
        assert!(warning.contains("ignored"), "{warning}");
        assert!(b.have.is_empty(), "byte {at}");
        assert_eq!(b.tree.verified_count(), 0);
        assert_eq!((report.rehashed, report.dropped), (0, 0));
        assert_eq!(std::fs::read(&path).unwrap(), s.data[..6 * 64]);
    }

    // A checkpoint cut short is damaged too.
    std::fs::write(&ck, &good[..good.len() - 1]).unwrap();
    let (b, report) = open(&path, &s.meta);
    assert!(report.warning.is_some());
    assert!(b.have.is_empty());

    std::fs::write(&ck, &good).unwrap();
    let (b, report) = open(&path, &s.meta);
    assert_eq!(report.warning, None);
    assert_eq!(b.have.count(), 6);
}
