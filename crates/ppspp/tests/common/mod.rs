//! Helpers for tests that run `ppspp` processes over loopback UDP.

#![allow(dead_code)]

pub mod gateway;
pub mod libswift;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The lab's small test swarm (1 seeder, 5 leechers arriving 5 s apart).
pub const SMALL: &str = include_str!("../../../ppspp-lab/tests/small_swarm.toml");

/// Runs `ppspp ARGS…` to its end.
pub fn ppspp(args: &[&str]) -> Output {
    Command::new(bin()).args(args).output().expect("run ppspp")
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_ppspp")
}

/// A child process killed when dropped.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `ppspp seed` and the URL it printed.
pub struct Seeder {
    pub proc: Proc,
    pub url: String,
}

impl Seeder {
    /// The swarm id (the Merkle root in hex), from its URL.
    pub fn id(&self) -> String {
        let path = self.url.split('/').nth(3).unwrap_or_default();
        path.split('?').next().unwrap_or_default().to_string()
    }

    /// The `host:port` of the seeder, from its URL.
    pub fn addr(&self) -> String {
        self.url
            .trim_start_matches("ppspp://")
            .split('/')
            .next()
            .unwrap()
            .to_string()
    }
}

/// Starts `ppspp seed FILE ARGS…` on loopback and waits for its URL line.
pub fn seed(file: &Path, args: &[&str]) -> Seeder {
    let child = Command::new(bin())
        .arg("seed")
        .arg(file)
        .args(["--listen", "127.0.0.1:0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn seeder");
    let (proc, url) = first_line(child, "seeder", "ppspp://");
    Seeder { proc, url }
}

/// Runs `ppspp get TARGET -o OUT ARGS…` to its end (with a 30 s idle
/// timeout unless ARGS set one).
pub fn get(target: &str, out: &Path, args: &[&str]) -> Output {
    let idle: &[&str] = if args.contains(&"--idle-timeout") {
        &[]
    } else {
        &["--idle-timeout", "30"]
    };
    Command::new(bin())
        .arg("get")
        .arg(target)
        .arg("-o")
        .arg(out)
        .args(["--listen", "127.0.0.1:0"])
        .args(idle)
        .args(args)
        .output()
        .expect("run get")
}

/// Starts `ppspp get` without waiting.
pub fn spawn_get(target: &str, out: &Path, args: &[&str]) -> Proc {
    let child = Command::new(bin())
        .arg("get")
        .arg(target)
        .arg("-o")
        .arg(out)
        .args(["--listen", "127.0.0.1:0", "--idle-timeout", "60"])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn get");
    Proc(child)
}

/// Pseudo-random bytes from a seed (xorshift), so content is not compressible
/// or periodic.
pub fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

pub fn stats(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).expect("stats json");
    serde_json::from_str(&text).expect("valid json")
}

pub fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what}: exit {:?}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits up to 60 s for the first line `child` prints on stdout, which
/// must start with `prefix`; returns the process and the trimmed line.
pub fn first_line(mut child: Child, what: &str, prefix: &str) -> (Proc, String) {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    let proc = Proc(child);
    let line = rx
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("{what} printed no URL"));
    assert!(line.starts_with(prefix), "{what} printed {line:?}");
    (proc, line.trim().to_string())
}

/// What a finished process printed on stderr.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Asserts that the process failed and that its stderr contains every
/// one of `parts`; returns its stderr.
pub fn assert_fails_with(out: &Output, parts: &[&str]) -> String {
    let err = stderr_of(out);
    assert!(
        !out.status.success(),
        "expected a failure, got exit {:?}\nstderr: {err}",
        out.status
    );
    for p in parts {
        assert!(err.contains(p), "stderr lacks {p:?}:\n{err}");
    }
    err
}

/// A UDP socket on loopback that never answers: a peer that drops every
/// datagram (a firewall, a host that is down). Keep it alive while used.
pub fn silent_peer() -> std::net::UdpSocket {
    std::net::UdpSocket::bind("127.0.0.1:0").expect("bind a silent peer")
}

/// Asserts that `get` left neither a content file nor a checkpoint at `out`.
pub fn assert_no_output(out: &Path) {
    assert!(!out.exists(), "{} left behind", out.display());
    let ck = ppspp_store::checkpoint_path(out);
    assert!(!ck.exists(), "{} left behind", ck.display());
}

/// A loopback UDP port nobody listens on (bound once, then released).
pub fn closed_port() -> std::net::SocketAddr {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    s.local_addr().unwrap()
}
