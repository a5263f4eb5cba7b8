//! What `get` says: one summary line at the end (size, time, this run's
//! mean rate, peers, bytes resumed), "resuming at X of Y" when it resumes,
//! "already complete" when there is nothing to do, binary units (MiB)
//! throughout and "1 peer" in the singular.

mod common;

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;

use common::*;

const MIB: usize = 1024 * 1024;

#[test]
fn summary_resume_and_already_complete() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(2 * MIB, 11);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &[]);
    let out = dir.path().join("out");
    let shown = out.display().to_string();

    // A fresh download: the summary, and nothing about resuming.
    let res = get(&seeder.url, &out, &[]);
    assert_ok(&res, "fresh download");
    let err = stderr_of(&res);
    let summary = format!("ppspp: {shown} complete (2.0 MiB): 2.0 MiB in ");
    assert!(err.contains(&summary), "{err}");
    assert!(err.contains(" MiB/s from 1 peer\n"), "{err}");
    assert!(!err.contains("resum"), "{err}");

    // Run again: already complete, said once, no summary of a download.
    let res = get(&seeder.url, &out, &[]);
    assert_ok(&res, "complete file");
    assert_eq!(
        stderr_of(&res),
        format!("ppspp: {shown} is already complete (2.0 MiB)\n")
    );

    // Spoil the second half: those chunks fail their hashes on the next
    // run and are fetched again; the first half is resumed.
    let f = OpenOptions::new().write(true).open(&out).unwrap();
    f.write_all_at(&vec![0u8; MIB], MIB as u64).unwrap();
    drop(f);
    let res = get(&seeder.url, &out, &[]);
    assert_ok(&res, "resumed download");
    let err = stderr_of(&res);
    let resuming = format!("ppspp: resuming {shown} at 1.0 MiB of 2.0 MiB (50.0%)\n");
    assert!(err.contains(&resuming), "{err}");
    // The summary counts only this run's bytes in the transfer and rate.
    let summary = format!("ppspp: {shown} complete (2.0 MiB): 1.0 MiB in ");
    assert!(err.contains(&summary), "{err}");
    assert!(err.contains(" from 1 peer, 1.0 MiB resumed\n"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), data);
    // One unit system: no decimal units anywhere.
    for decimal in [" kB", " MB", " GB"] {
        assert!(!err.contains(decimal), "{decimal} in {err}");
    }
}
