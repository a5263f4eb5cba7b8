//! libswift, the reference implementation, as a test peer: the built
//! `swift` in `../shared/tools/libswift/` beside the repository (or where
//! `PPSPP_LIBSWIFT` points). Its README gives the command lines used here.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use super::Proc;

/// The `swift` binary, when there is one.
pub fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PPSPP_LIBSWIFT") {
        return Some(PathBuf::from(p));
    }
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tools/libswift/swift");
    beside.is_file().then_some(beside)
}

/// A free loopback address for libswift to bind itself.
pub fn free_addr() -> String {
    super::closed_port().to_string()
}

/// A running libswift seeder of a scratch copy of `file` (it writes its
/// `.mhash` and `.mbinmap` beside the file it seeds), with its debug
/// output (`-B`) in `log`.
pub struct SwiftSeeder {
    pub proc: Proc,
    pub addr: String,
    pub log: PathBuf,
}

impl SwiftSeeder {
    /// Its debug output so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

pub fn seed(swift: &Path, file: &Path, scratch: &Path) -> SwiftSeeder {
    std::fs::create_dir_all(scratch).unwrap();
    let copy = scratch.join("content");
    std::fs::copy(file, &copy).unwrap();
    let addr = free_addr();
    let log = scratch.join("seed.log");
    let child = Command::new(swift)
        .arg("-f")
        .arg(&copy)
        .args(["-l", &addr, "-B"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("spawn libswift seeder");
    let seeder = SwiftSeeder {
        proc: Proc(child),
        addr,
        log,
    };
    // It hashes the file before it listens; its .mhash appears when done.
    let mhash = scratch.join("content.mhash");
    let start = Instant::now();
    while !mhash.exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    seeder
}

/// A running libswift download; its stderr (a line or more per datagram)
/// goes to a file, since a pipe nobody reads would fill and block it.
pub struct SwiftGet {
    pub proc: Proc,
    pub log: PathBuf,
}

impl SwiftGet {
    /// Fails the test with `what` and the last lines of libswift's log.
    fn fail(&self, what: &str) -> ! {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let tail: Vec<&str> = log.lines().rev().take(20).collect();
        panic!(
            "libswift {what}; its last lines, newest first:\n{}",
            tail.join("\n")
        );
    }
}

/// Starts a libswift download of `root` from `tracker` into `dir` (the
/// file lands at `dir/ROOT`), listening on `listen` when given so that
/// other peers can fetch from it too.
pub fn spawn_get(
    swift: &Path,
    tracker: &str,
    root: &str,
    dir: &Path,
    listen: Option<&str>,
) -> SwiftGet {
    std::fs::create_dir_all(dir).unwrap();
    let log = dir.with_extension("log");
    let mut cmd = Command::new(swift);
    cmd.args(["-t", tracker, "-h", root])
        .arg("-o")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap());
    if let Some(l) = listen {
        cmd.args(["-l", l]);
    }
    let proc = Proc(cmd.spawn().expect("spawn libswift download"));
    SwiftGet { proc, log }
}

/// Waits for a libswift download to exit (it does once its file is
/// complete), at most `limit`: a hang guard, not a speed bound. Panics
/// with the tail of its log if it does not.
pub fn wait(mut get: SwiftGet, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = get.proc.0.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() > limit {
            get.fail(&format!("did not finish within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits until `path` holds exactly `data`, at most `limit`: a libswift
/// download that listens (`-l`) seeds on after completion and never exits
/// by itself. Panics with the tail of its log if the file never completes.
pub fn wait_for_file(get: &SwiftGet, path: &Path, data: &[u8], limit: Duration) {
    let start = Instant::now();
    while std::fs::read(path).ok().as_deref() != Some(data) {
        if start.elapsed() > limit {
            get.fail(&format!("left {path:?} incomplete for {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// What a libswift live swarm is on the wire (`docs/libswift-live.md`):
/// its signature profile, 32-chunk munros, P-256, no discard window,
/// 32-bit chunk ranges, 1 KiB chunks, 64-byte signatures.
pub fn live_swarm() -> (
    ppspp_core::live::LiveParams,
    ppspp_core::live::LiveShape,
    ppspp_core::wire::SwarmParams,
) {
    use ppspp_core::live::{LiveParams, LiveShape, SignatureProfile};
    use ppspp_core::wire::{ChunkAddressing, DiscardWindow, LiveSignatureAlgorithm, SwarmParams};
    let params = LiveParams {
        profile: SignatureProfile::Libswift,
        ..LiveParams::default()
    };
    let shape = LiveShape {
        params,
        algorithm: LiveSignatureAlgorithm::ECDSAP256SHA256,
        window: DiscardWindow::KeepAll,
        chunk_size: None,
    };
    let wire = SwarmParams {
        addressing: ChunkAddressing::ChunkRanges32,
        signature_len: Some(64),
        chunk_size: Some(1024),
        ..SwarmParams::default()
    };
    (params, shape, wire)
}
