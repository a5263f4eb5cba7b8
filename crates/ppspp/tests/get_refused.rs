//! `get` of a swarm the peer does not have (a wrong root hash): the peer
//! refuses the handshake; `get` tries it again within the handshake budget
//! (`--connect-timeout`) and then fails saying so, naming the peer and the
//! swarm; it creates no output, and a file that was there (empty) is left
//! as it was.

mod common;

use common::*;

const OTHER: &str = "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a";

#[test]
fn a_wrong_swarm_id_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let src = write_file(dir.path(), "src", &random_bytes(50_000, 5));
    let seeder = seed(&src, &[]);
    let out = dir.path().join("out");
    let res = get(
        OTHER,
        &out,
        &["--peer", &seeder.addr(), "--idle-timeout", "600"],
    );
    let refused = format!("{} refused swarm {OTHER}", seeder.addr());
    assert_fails_with(
        &res,
        &[
            "ppspp: error: no peer has this swarm: ",
            &refused,
            "check the swarm id",
        ],
    );
    assert_no_output(&out);

    // An empty file given as the output stays, empty; no checkpoint.
    let empty = write_file(dir.path(), "empty", b"");
    let res = get(
        OTHER,
        &empty,
        &["--peer", &seeder.addr(), "--connect-timeout", "2"],
    );
    assert_fails_with(&res, &["no peer has this swarm"]);
    assert_eq!(std::fs::read(&empty).unwrap(), b"");
    assert!(!ppspp_store::checkpoint_path(&empty).exists());
}
