//! Upload policies are chosen by name on the command line; an unknown
//! name fails before anything starts, naming the ones that exist.

mod common;
use common::ppspp;

#[test]
fn unknown_policy_names_are_refused_with_the_known_ones() {
    let o = ppspp(&["seed", "Cargo.toml", "--choking", "tit-for-tat"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("unknown choking 'tit-for-tat' (known: rotation, unchoke-all, delay-slots)"),
        "{err}"
    );
    let o = ppspp(&[
        "get",
        "ppspp://127.0.0.1:1/00",
        "--upload-scheduling",
        "lifo",
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(
        err.contains("unknown upload scheduling 'lifo' (known: fifo, wfq)"),
        "{err}"
    );
    let o = ppspp(&[
        "seed",
        "Cargo.toml",
        "--weighted-uploads",
        "--upload-scheduling",
        "fifo",
    ]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
}
