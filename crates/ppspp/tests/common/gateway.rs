//! Helpers for the `ppspp stream` tests: a real video made with ffmpeg, the
//! gateway process, and a minimal HTTP/1.1 client over a raw TCP stream.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::{bin, first_line, Proc};

/// Fails with a clear message when ffmpeg is missing: these tests need it
/// (`.ci/run` installs it), and skipping them would hide a broken gateway.
pub fn require_ffmpeg() {
    let ok = Command::new("ffmpeg")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "ffmpeg is not installed or not on PATH: these tests need it \
         (apt-get install -y --no-install-recommends ffmpeg; .ci/run does this)"
    );
}

/// A `secs`-second H.264 MP4 of ffmpeg's test pattern at about 1 Mbit/s
/// (constant bitrate, so the file is about `secs × 125 kB`), moov atom first
/// (`+faststart`) like files prepared for progressive download.
pub fn make_video(dir: &Path, secs: u32) -> PathBuf {
    require_ffmpeg();
    let out = dir.join("video.mp4");
    let res = Command::new("ffmpeg")
        .args(["-y", "-v", "error", "-f", "lavfi", "-i"])
        .arg(format!("testsrc=duration={secs}:size=640x360:rate=25"))
        .args(["-c:v", "libx264", "-preset", "veryfast", "-b:v", "1M"])
        .args(["-minrate", "1M", "-maxrate", "1M", "-bufsize", "1M"])
        .args(["-x264-params", "nal-hrd=cbr", "-pix_fmt", "yuv420p"])
        .args(["-movflags", "+faststart"])
        .arg(&out)
        .output()
        .expect("run ffmpeg");
    assert!(
        res.status.success(),
        "ffmpeg could not make the test video: {}",
        String::from_utf8_lossy(&res.stderr)
    );
    out
}

/// A running `ppspp stream` and the HTTP URL it printed.
pub struct Streamer {
    pub proc: Proc,
    /// `http://127.0.0.1:PORT/<id>`
    pub url: String,
}

impl Streamer {
    /// `127.0.0.1:PORT`
    pub fn addr(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string()
    }

    /// `/<id>`
    pub fn path(&self) -> String {
        format!("/{}", self.url.splitn(4, '/').nth(3).unwrap())
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        self.proc.0.try_wait().expect("try_wait").is_none()
    }

    /// One request to this gateway.
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Response {
        request(&self.addr(), method, path, headers)
    }

    /// The status document.
    pub fn stats(&self) -> serde_json::Value {
        let r = self.request("GET", &format!("{}/stats", self.path()), &[]);
        assert_eq!(r.status, 200, "stats: {}", String::from_utf8_lossy(&r.body));
        serde_json::from_slice(&r.body).expect("stats are JSON")
    }
}

/// Starts `ppspp stream TARGET -o OUT ARGS…` on loopback and waits for its
/// URL line.
pub fn stream(target: &str, out: &Path, args: &[&str]) -> Streamer {
    let child = Command::new(bin())
        .arg("stream")
        .arg(target)
        .arg("-o")
        .arg(out)
        .args(["--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn stream");
    let (proc, url) = first_line(child, "stream", "http://");
    Streamer { proc, url }
}

/// A parsed HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends a request (with `Connection: close`) and returns the connection
/// positioned at the body, with the status line and headers read.
pub fn send(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (BufReader<TcpStream>, u16, Vec<(String, String)>) {
    let mut tcp = TcpStream::connect(addr).expect("connect to the gateway");
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    tcp.write_all(req.as_bytes()).unwrap();
    let mut r = BufReader::new(tcp);
    let mut line = String::new();
    r.read_line(&mut line).expect("status line");
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut hs = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).expect("header line");
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':').expect("header has a colon");
        hs.push((k.trim().to_string(), v.trim().to_string()));
    }
    (r, status, hs)
}

/// One whole request and response (the body read to the connection's end).
pub fn request(addr: &str, method: &str, path: &str, headers: &[(&str, &str)]) -> Response {
    let (mut r, status, headers) = send(addr, method, path, headers);
    let mut body = Vec::new();
    r.read_to_end(&mut body).expect("body");
    Response {
        status,
        headers,
        body,
    }
}

/// Waits up to 120 s until the gateway's download is complete.
pub fn wait_complete(s: &Streamer) {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while s.stats()["complete"] != true {
        assert!(
            std::time::Instant::now() < deadline,
            "the download did not complete in 120 s"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A client that asks for the whole content and never reads the answer.
pub fn non_reader(addr: &str, path: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(addr).expect("connect to the gateway");
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    tcp.write_all(req.as_bytes()).unwrap();
    tcp
}
