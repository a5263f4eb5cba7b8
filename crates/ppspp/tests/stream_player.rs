//! `--player` starts the player on the URL and `ppspp stream` exits when it
//! does; a player that is not installed is a clear error; Ctrl-C (SIGINT)
//! ends the stream cleanly, its progress checkpointed.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::gateway::{make_video, stream};
use common::*;

/// Waits for `child` to exit, at most `secs` seconds.
fn wait(child: &mut Child, secs: u64) -> ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(t.elapsed() < Duration::from_secs(secs), "did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An executable shell script `dir/name`.
fn script(dir: &Path, name: &str, body: &str) {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `ppspp stream URL --player PLAYER` with `bin_dir` first on PATH.
fn with_player(url: &str, out: &Path, player: &str, path: &str) -> Child {
    Command::new(bin())
        .args(["stream", url, "--listen", "127.0.0.1:0", "--player", player])
        .arg("-o")
        .arg(out)
        .env("PATH", path)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn stream")
}

fn stderr_of(mut child: Child) -> String {
    let mut s = String::new();
    use std::io::Read;
    child.stderr.take().unwrap().read_to_string(&mut s).unwrap();
    s
}

#[test]
fn the_player_gets_the_url_and_its_exit_ends_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let video = make_video(dir.path(), 5);
    let seeder = seed(&video, &[]);
    let bin_dir = dir.path().join("bin");
    std::fs::create_dir(&bin_dir).unwrap();
    let said = dir.path().join("url");
    // A stand-in for ffplay without a window: notes the URL it is given,
    // decodes the stream, exits.
    script(
        &bin_dir,
        "ffplay",
        &format!(
            "echo \"$1\" > '{}'\nexec ffmpeg -nostdin -v error -i \"$1\" -f null -",
            said.display()
        ),
    );
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = with_player(&seeder.url, &dir.path().join("out"), "ffplay", &path);
    let status = wait(&mut child, 60);
    assert!(status.success(), "{status}: {}", stderr_of(child));
    let url = std::fs::read_to_string(&said).unwrap();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let id = seeder.id();
    assert!(url.trim().ends_with(&format!("/{id}")), "{url}");

    // A player that fails makes the stream fail, saying so.
    script(&bin_dir, "mpv", "exit 3");
    let mut child = with_player(&seeder.url, &dir.path().join("out2"), "mpv", &path);
    let status = wait(&mut child, 60);
    assert!(!status.success());
    assert!(stderr_of(child).contains("mpv exited"));
}

#[test]
fn a_missing_player_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let src = write_file(dir.path(), "src", &random_bytes(10_000, 32));
    let seeder = seed(&src, &[]);
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let mut child = with_player(
        &seeder.url,
        &dir.path().join("out"),
        "vlc",
        empty.to_str().unwrap(),
    );
    let status = wait(&mut child, 60);
    assert!(!status.success());
    let err = stderr_of(child);
    assert!(
        err.contains("cannot start vlc: it is not installed"),
        "{err}"
    );
}

#[test]
fn ctrl_c_ends_the_stream_with_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let src = write_file(dir.path(), "src", &random_bytes(2_000_000, 33));
    let seeder = seed(&src, &["--upload-limit", "4Mbit/s"]);
    let out = dir.path().join("out");
    let mut s = stream(&seeder.url, &out, &[]);
    // Some progress first: a checkpoint records chunks verified, and a
    // loaded machine may take a while to verify the first.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while s.stats()["chunks_verified"].as_u64().unwrap_or(0) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "nothing verified in 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // The shell's kill builtin: no procps needed.
    let pid = s.proc.0.id();
    let kill = Command::new("sh")
        .arg("-c")
        .arg(format!("kill -INT {pid}"))
        .status()
        .unwrap();
    assert!(kill.success());
    let status = wait(&mut s.proc.0, 30);
    assert!(status.success(), "{status}");
    assert!(
        ppspp_checkpoint(&out).exists(),
        "no checkpoint beside {out:?}"
    );
}

fn ppspp_checkpoint(out: &Path) -> std::path::PathBuf {
    let mut p = out.as_os_str().to_owned();
    p.push(".ppspp");
    p.into()
}
