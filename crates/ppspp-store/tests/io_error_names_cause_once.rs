//! A store error names the operation and the path; the OS error is its
//! source, not repeated in the message, so that a caller printing the
//! chain (anyhow's `{:#}`) shows it once.

mod common;

use common::seeder;
use ppspp_core::HashFunction;

#[test]
fn io_errors_name_the_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing-dir").join("content.bin");
    let s = seeder(64, 32, 23, HashFunction::Sha1);
    let err = ppspp_store::FileStorage::open_download(&path, &s.meta).unwrap_err();
    assert_eq!(err.to_string(), format!("cannot open {}", path.display()));
    let source = std::error::Error::source(&err).expect("the OS error as source");
    assert_eq!(source.to_string(), "No such file or directory (os error 2)");
}
