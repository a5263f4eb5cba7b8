//! At `--max-connections`, a new client is answered at once with a 503 and
//! Retry-After, and the players already being served go on receiving the
//! content to its last byte.

mod common;

use std::io::Read;

use common::gateway::{send, stream};
use common::*;

#[test]
fn at_the_cap_newcomers_get_503_and_players_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let len = 2_000_000;
    let data = random_bytes(len, 33);
    let src = write_file(dir.path(), "src", &data);
    // About 8 s of download: the two players' responses wait for chunks
    // (busy, not stalled) for all of this test.
    let seeder = seed(&src, &["--upload-limit", "2Mbit/s"]);
    let s = stream(
        &seeder.url,
        &dir.path().join("out"),
        &["--max-connections", "2"],
    );
    let players: Vec<_> = (0..2)
        .map(|_| {
            let (r, status, _) = send(&s.addr(), "GET", &s.path(), &[]);
            assert_eq!(status, 200);
            r
        })
        .collect();
    let readers: Vec<_> = players
        .into_iter()
        .map(|mut r| {
            std::thread::spawn(move || {
                let mut body = Vec::new();
                r.read_to_end(&mut body).map(|_| body)
            })
        })
        .collect();

    let (mut r, status, headers) = send(&s.addr(), "GET", &s.path(), &[]);
    assert_eq!(status, 503, "a third connection at a cap of 2");
    let retry = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
        .map(|(_, v)| v.as_str());
    assert_eq!(retry, Some("1"));
    let mut text = String::new();
    r.read_to_string(&mut text).unwrap();
    assert!(text.contains("too many connections"), "{text:?}");

    for (i, h) in readers.into_iter().enumerate() {
        let body = h.join().unwrap().expect("the player's connection");
        assert_eq!(body.len(), len, "player {i} got {} bytes", body.len());
        assert!(body == data, "player {i}: wrong bytes");
    }
}
