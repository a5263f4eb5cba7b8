//! A kept-alive connection that sits idle after its response is closed
//! once `--http-header-timeout` has passed without a new request head.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::gateway::stream;
use common::*;

#[test]
fn an_idle_kept_alive_connection_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let data = random_bytes(100_000, 32);
    let src = write_file(dir.path(), "src", &data);
    let seeder = seed(&src, &[]);
    let s = stream(
        &seeder.url,
        &dir.path().join("out"),
        &["--http-header-timeout", "1"],
    );
    let mut tcp = TcpStream::connect(s.addr()).unwrap();
    // Thirty times the idle timeout: without one, this read times out.
    tcp.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let req = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nRange: bytes=0-9\r\n\r\n",
        s.path(),
        s.addr()
    );
    tcp.write_all(req.as_bytes()).unwrap();
    let mut r = BufReader::new(tcp);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 206"), "{line:?}");
    let mut len = None;
    loop {
        let mut h = String::new();
        r.read_line(&mut h).unwrap();
        if h.trim_end().is_empty() {
            break;
        }
        if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
            len = v.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0u8; len.expect("a Content-Length")];
    r.read_exact(&mut body).unwrap();
    assert!(body == data[..10]);
    // Kept alive (HTTP/1.1's default), then idle: the server closes it.
    let mut rest = Vec::new();
    match r.read_to_end(&mut rest) {
        Ok(_) => assert!(rest.is_empty(), "unexpected bytes {rest:?}"),
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("the idle connection was not closed: {e}"),
    }
}
