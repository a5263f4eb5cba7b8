//! A client that sends its request head a byte at a time (slowloris) is
//! closed once `--http-header-timeout` has passed, before its head is
//! complete: it cannot hold a connection and its descriptor for ever.

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::gateway::stream;
use common::*;

#[test]
fn a_byte_at_a_time_head_is_cut_off() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(100_000, 31);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &[]);
    let s = stream(
        &seeder.url,
        &dir.path().join("out"),
        &["--http-header-timeout", "1"],
    );
    let mut tcp = TcpStream::connect(s.addr()).unwrap();
    // Each read waits this long: the pace of the bytes.
    tcp.set_read_timeout(Some(Duration::from_millis(150)))
        .unwrap();
    let head = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nX-Slow: {}\r\n\r\n",
        s.path(),
        s.addr(),
        "z".repeat(40)
    );
    // About 20 s to send the whole head, twenty times the timeout (and
    // less than hyper's own default of 30 s, so that is not what we see).
    let mut sent = 0;
    let mut answer = Vec::new();
    let mut closed = false;
    let mut buf = [0u8; 4096];
    'slow: for b in head.bytes() {
        if tcp.write_all(&[b]).is_err() {
            closed = true;
            break;
        }
        sent += 1;
        loop {
            match tcp.read(&mut buf) {
                Ok(0) => {
                    closed = true;
                    break 'slow;
                }
                Ok(n) => answer.extend_from_slice(&buf[..n]),
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => break,
                Err(_) => {
                    closed = true;
                    break 'slow;
                }
            }
        }
    }
    // The status line is enough to say what happened.
    let answer = String::from_utf8_lossy(&answer);
    let answer = answer.lines().next().unwrap_or_default();
    assert!(
        closed && sent < head.len(),
        "the connection stayed open for the whole slow head ({sent} of {} bytes sent); \
         answer: {answer:?}",
        head.len()
    );
    // If anything was said, it was no content (hyper may say 408).
    assert!(!answer.starts_with("HTTP/1.1 2"), "answered {answer:?}");
}
