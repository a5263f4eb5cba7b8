//! `ppspp stream` answers byte ranges (RFC 7233) with exactly the content's
//! bytes: 206 with Content-Range for a first-last, open-ended or suffix
//! range, 200 for a whole GET, Content-Length on HEAD, 416 when no byte
//! is in range.

mod common;

use common::gateway::{stream, Streamer};
use common::*;

fn range(s: &Streamer, spec: &str) -> common::gateway::Response {
    s.request("GET", &s.path(), &[("Range", spec)])
}

/// Checks a 206 for bytes `first..=last` of `data`.
fn assert_part(s: &Streamer, spec: &str, data: &[u8], first: usize, last: usize) {
    let r = range(s, spec);
    assert_eq!(r.status, 206, "{spec}");
    let want = format!("bytes {first}-{last}/{}", data.len());
    assert_eq!(r.header("content-range"), Some(want.as_str()), "{spec}");
    let n = (last - first + 1).to_string();
    assert_eq!(r.header("content-length"), Some(n.as_str()), "{spec}");
    assert!(r.body == data[first..=last], "{spec}: wrong bytes");
}

#[test]
fn ranges_whole_head_and_unsatisfiable() {
    let dir = tempfile::tempdir().unwrap();
    let len = 3 * 1024 * 1024 + 17;
    let data = random_bytes(len, 11);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &[]);
    let s = stream(&seeder.url, &dir.path().join("out"), &[]);

    // Before the download is done too: the middle first, then the rest.
    assert_part(&s, "bytes=1500000-1600000", &data, 1_500_000, 1_600_000);
    assert_part(&s, "bytes=0-0", &data, 0, 0);
    assert_part(&s, "bytes=0-99999", &data, 0, 99_999);
    assert_part(&s, "bytes=-1234", &data, len - 1234, len - 1);
    assert_part(&s, "bytes=3000000-", &data, 3_000_000, len - 1);
    // A last position past the end is cut to the end.
    assert_part(&s, "bytes=3145000-99999999", &data, 3_145_000, len - 1);

    let whole = s.request("GET", &s.path(), &[]);
    assert_eq!(whole.status, 200);
    assert_eq!(whole.header("accept-ranges"), Some("bytes"));
    assert_eq!(
        whole.header("content-length"),
        Some(len.to_string().as_str())
    );
    assert!(whole.body == data, "whole GET: wrong bytes");

    let head = s.request("HEAD", &s.path(), &[]);
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-length"),
        Some(len.to_string().as_str())
    );
    assert_eq!(head.header("accept-ranges"), Some("bytes"));
    assert!(head.body.is_empty());
    // Range is for GET only (RFC 7233 §3.1).
    let head = s.request("HEAD", &s.path(), &[("Range", "bytes=0-9")]);
    assert_eq!(head.status, 200);
    assert_eq!(
        head.header("content-length"),
        Some(len.to_string().as_str())
    );

    for spec in ["bytes=3145745-", "bytes=99999999-", "bytes=-0"] {
        let r = range(&s, spec);
        assert_eq!(r.status, 416, "{spec}");
        let want = format!("bytes */{len}");
        assert_eq!(r.header("content-range"), Some(want.as_str()), "{spec}");
    }
    // A header we must ignore (RFC 7233 §2.1, §3.1) gets the whole content.
    let r = range(&s, "bytes=500-400");
    assert_eq!(r.status, 200);
    assert!(r.body == data);

    assert_eq!(s.request("GET", "/0123", &[]).status, 404);
    assert_eq!(s.request("POST", &s.path(), &[]).status, 405);
}

/// With a bare swarm id the length is unknown until the last chunk
/// verifies; a request waits for it rather than answering without one, and
/// the last chunk is fetched first so the wait is short (the seeder is
/// limited so that the whole download takes about 8 s).
#[test]
fn a_bare_id_waits_for_the_length() {
    let dir = tempfile::tempdir().unwrap();
    let len = 4_000_003;
    let data = random_bytes(len, 12);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--upload-limit", "4Mbit/s"]);
    let id = seeder.id();
    // linear fetches strictly in order from the playhead, so without the
    // last chunk being asked for first the length would come last.
    let s = stream(
        &id,
        &dir.path().join("out"),
        &["--peer", &seeder.addr(), "--algorithm", "linear"],
    );
    assert!(s.url.ends_with(&id), "{}", s.url);
    assert_part(&s, "bytes=10-20", &data, 10, 20);
    let st = s.stats();
    assert_eq!(st["content_length"], len as u64);
    assert_eq!(st["complete"], false, "waited for the whole download: {st}");
    assert_part(&s, "bytes=-10", &data, len - 10, len - 1);
}
