//! Clients that GET the content and never read fill `--max-connections`
//! but do not lock out a player: once they have taken nothing for a
//! moment, a newcomer takes the place of one of them (a 503 with
//! Retry-After meanwhile), long before the send timeout.

mod common;

use std::time::Duration;

use common::gateway::{non_reader, request, stream, wait_complete};
use common::*;

#[test]
fn non_readers_do_not_lock_out_a_player() {
    let dir = tempfile::tempdir().unwrap();
    // More than the kernel buffers of a connection hold, so that a client
    // that does not read stalls its response.
    let len = 12_000_000;
    let data = random_bytes(len, 34);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--chunk-size", "8192"]);
    let s = stream(
        &seeder.url,
        &dir.path().join("out"),
        &["--max-connections", "3", "--http-send-timeout", "3600"],
    );
    wait_complete(&s);
    let hogs: Vec<_> = (0..6).map(|_| non_reader(&s.addr(), &s.path())).collect();

    // Retry-After says 1 s; thirty tries are far more than the 2 s a
    // stalled connection needs to give way, far less than the send timeout.
    let mut answers = Vec::new();
    let got = (0..30).find_map(|_| {
        let r = request(&s.addr(), "GET", &s.path(), &[("Range", "bytes=0-99999")]);
        answers.push(r.status);
        if r.status == 206 {
            return Some(r);
        }
        assert_eq!(r.status, 503, "neither served nor asked to retry");
        std::thread::sleep(Duration::from_secs(1));
        None
    });
    let r = got.unwrap_or_else(|| panic!("never served; answers {answers:?}"));
    assert!(r.body == data[..100_000], "wrong bytes");
    drop(hogs);
}
