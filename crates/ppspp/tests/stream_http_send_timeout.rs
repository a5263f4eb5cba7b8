//! A response whose client takes no byte for `--http-send-timeout` is
//! ended: the connection closes before the whole content went out, so a
//! stalled client does not hold its connection for ever.

mod common;

use std::io::Read;
use std::time::Duration;

use common::gateway::{non_reader, stream, wait_complete};
use common::*;

#[test]
fn a_client_that_reads_nothing_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    // More than the kernel buffers of a connection hold.
    let len = 12_000_000;
    let data = random_bytes(len, 35);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &["--chunk-size", "8192"]);
    let s = stream(
        &seeder.url,
        &dir.path().join("out"),
        &["--http-send-timeout", "1"],
    );
    wait_complete(&s);
    let mut tcp = non_reader(&s.addr(), &s.path());
    // Five times the timeout without reading.
    std::thread::sleep(Duration::from_secs(5));
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut got = Vec::new();
    let end = tcp.read_to_end(&mut got);
    let head_end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(got.starts_with(b"HTTP/1.1 200"));
    let body = &got[head_end..];
    assert!(
        body.len() < len,
        "the whole content went out ({end:?}): the stalled client was kept"
    );
    assert!(body == &data[..body.len()], "wrong bytes");
}
