//! `get -o FILE` where FILE exists but is not a download of the swarm (no
//! checkpoint of it beside it) refuses, leaving the file alone, unless
//! `--force`; a download of the swarm (the file with its checkpoint) is
//! resumed or found complete as before.

mod common;

use common::*;

#[test]
fn an_existing_file_is_not_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(300_000, 12);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &[]);
    let notes = write_file(dir.path(), "notes.txt", b"my precious notes");
    let shown = notes.display().to_string();

    let res = get(&seeder.url, &notes, &[]);
    let err = assert_fails_with(&res, &[]);
    assert_eq!(
        err,
        format!(
            "ppspp: error: {shown} exists and is not a download of this swarm: there is no \
             checkpoint {shown}.ppspp beside it; choose another --output, or give --force to \
             overwrite it\n"
        )
    );
    assert_eq!(std::fs::read(&notes).unwrap(), b"my precious notes");
    assert!(!ppspp_store::checkpoint_path(&notes).exists());

    // Another swarm's download is not ours either.
    let other_src = write_file(dir.path(), "other-src", &random_bytes(5000, 13));
    let other = seed(&other_src, &[]);
    let theirs = dir.path().join("theirs");
    assert_ok(&get(&other.url, &theirs, &[]), "the other download");
    let res = get(&seeder.url, &theirs, &[]);
    assert_fails_with(
        &res,
        &[
            "exists and is not a download of this swarm",
            "another swarm",
        ],
    );
    assert_eq!(std::fs::read(&theirs).unwrap().len(), 5000);

    // --force writes over it.
    let res = get(&seeder.url, &notes, &["--force"]);
    assert_ok(&res, "--force");
    assert_eq!(std::fs::read(&notes).unwrap(), data);

    // Now it is our download, complete: no --force needed to run again.
    let res = get(&seeder.url, &notes, &[]);
    assert_ok(&res, "our complete download");
    assert!(stderr_of(&res).contains("is already complete"));
}
