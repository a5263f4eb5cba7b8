//! A checkpoint that cannot be written is reported by the final wait,
//! naming the file, and leaves no temporary file behind; the content and
//! the previous checkpoint stay usable.

mod common;

use common::{chunks_of, content_path, open, seeder};
use ppspp_core::storage::{Snapshot, Storage};
use ppspp_core::HashFunction;
use ppspp_store::{checkpoint_path, checkpoint_tmp_path};

/// Hands the storage an urgent checkpoint of what the leecher holds; it is
/// written in the background.
fn begin_checkpoint(l: &mut common::Leecher) {
    let snapshot = Snapshot {
        have: &l.have,
        tree: &l.tree,
        urgent: true,
    };
    l.storage.checkpoint(&snapshot).unwrap();
}

/// The temporary path is taken by a directory (which a root process
/// cannot write through either): the wait reports it, naming the path.
#[test]
fn the_wait_reports_an_uncreatable_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(10 * 16, 16, 21, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    for c in [0, 1] {
        a.receive(&s, c);
    }
    let tmp = checkpoint_tmp_path(&path);
    std::fs::create_dir(&tmp).unwrap();
    // Begun in the background: the failure comes with the wait.
    begin_checkpoint(&mut a);
    let err = a
        .storage
        .wait_checkpoint()
        .expect_err("the checkpoint failed");
    let msg = err.to_string();
    assert!(msg.contains(&tmp.display().to_string()), "{msg}");
    // Reported once; the directory is not ours and stays.
    a.storage.wait_checkpoint().unwrap();
    assert!(tmp.is_dir());
    // The checkpoint written at open (of nothing yet) is still there.
    assert!(checkpoint_path(&path).is_file());
}

/// The rename fails (a directory sits where the checkpoint goes): the
/// temporary file written is removed, and the error says what failed.
#[test]
fn a_failed_rename_removes_the_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(10 * 16, 16, 22, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    for c in [0, 1, 2] {
        a.receive(&s, c);
    }
    let ck = checkpoint_path(&path);
    // In place of the checkpoint written at open.
    std::fs::remove_file(&ck).unwrap();
    std::fs::create_dir(&ck).unwrap();
    std::fs::write(ck.join("keep"), b"x").unwrap();
    begin_checkpoint(&mut a);
    let err = a.storage.wait_checkpoint().expect_err("the rename failed");
    let msg = err.to_string();
    assert!(
        msg.contains("rename") && msg.contains(&ck.display().to_string()),
        "{msg}"
    );
    assert!(
        !checkpoint_tmp_path(&path).exists(),
        "temporary checkpoint left behind"
    );
    drop(a);

    // With the way cleared, a new start has no checkpoint and starts over,
    // keeping the content file.
    std::fs::remove_dir_all(&ck).unwrap();
    let (b, report) = open(&path, &s.meta);
    assert!(chunks_of(&b.have).is_empty());
    assert_eq!(report.warning, None);
}

/// A stale temporary file from a killed process is gone as soon as the
/// content file exists (it is removed first), so nothing of it can be
/// mistaken for this run's.
#[test]
fn a_stale_temporary_file_is_removed_before_the_content_file_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(4 * 16, 16, 23, HashFunction::Sha1);
    let tmp = checkpoint_tmp_path(&path);
    std::fs::write(&tmp, b"half a checkpoint").unwrap();
    let (_a, _) = open(&path, &s.meta);
    assert!(path.exists());
    assert!(!tmp.exists());
}

/// A new download has its checkpoint (of nothing yet) before any chunk is
/// written: a process killed before its first progress checkpoint leaves a
/// content file the next run recognises as this swarm's download.
#[test]
fn a_new_download_is_checkpointed_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = content_path(&dir);
    let s = seeder(4 * 16, 16, 24, HashFunction::Sha1);
    let (mut a, _) = open(&path, &s.meta);
    assert!(checkpoint_path(&path).is_file());
    a.receive(&s, 0);
    // Killed: nothing more is written.
    std::mem::forget(a);
    let existing = ppspp_store::probe_download(&path, &s.meta).unwrap();
    assert!(
        matches!(existing, ppspp_store::Existing::Download { .. }),
        "{existing:?}"
    );
}
