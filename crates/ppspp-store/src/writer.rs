//! Checkpoints are written by a background thread, so that writing a large
//! one and flushing the content file to disk (hundreds of milliseconds
//! after a fast download) never stall the protocol loop that calls
//! `Storage::checkpoint`, and a checkpoint is never held in memory whole.
//!
//! The loop encodes the snapshot (it owns the tree) as a stream of pieces
//! of at most [`PIECE`] bytes, a few of which may be in flight; the thread
//! writes them to `PATH.ppspp.tmp`, then flushes the content file, appends
//! the trailer with the file's length and modification time and the
//! checksum, flushes, and renames over the checkpoint. One checkpoint at a
//! time: while one is being written, a routine one is skipped (the next
//! will catch up) and an urgent one waits. Dropping the writer waits for
//! the last one.
//!
//! A checkpoint that fails is abandoned: its temporary file is removed (a
//! path there that the thread did not create, e.g. a directory, is left
//! alone) and the error, naming the file and the step, is kept until the
//! next [`CheckpointWriter::begin`] or [`CheckpointWriter::wait`] hands it
//! out. One that nobody collected is printed when the writer is dropped:
//! a lost checkpoint means a rerun downloads again, which must not be a
//! surprise.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::file::{checkpoint_path, checkpoint_tmp_path, mtime_ns, sync_parent};
use crate::format::{self, Digest, Sha256};

/// Bytes per piece handed to the thread.
const PIECE: usize = 1 << 20;
/// Pieces in flight at most.
const DEPTH: usize = 4;

enum Job {
    Data(Vec<u8>),
    Finish { nodes: u64 },
}

#[derive(Default)]
struct State {
    busy: bool,
    error: Option<io::Error>,
}

struct Shared {
    state: Mutex<State>,
    idle: Condvar,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The background checkpoint writer of one download.
pub(crate) struct CheckpointWriter {
    tx: Option<SyncSender<Job>>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for CheckpointWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointWriter").finish_non_exhaustive()
    }
}

impl CheckpointWriter {
    /// A writer for the checkpoint of the content at `path`, flushing
    /// `file` (a handle on the same content) before finishing each.
    pub(crate) fn spawn(path: PathBuf, file: File) -> io::Result<CheckpointWriter> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            idle: Condvar::new(),
        });
        let (tx, rx) = mpsc::sync_channel(DEPTH);
        let worker = shared.clone();
        let thread = std::thread::Builder::new()
            .name("ppspp-checkpoint".into())
            .spawn(move || run(&worker, &rx, &path, &file))?;
        Ok(CheckpointWriter {
            tx: Some(tx),
            shared,
            thread: Some(thread),
        })
    }

    /// Starts a checkpoint: `None` when one is still being written and this
    /// one is not `urgent` (an urgent one waits for it). Returns the error
    /// of an earlier checkpoint, if one failed.
    pub(crate) fn begin(&self, urgent: bool) -> io::Result<Option<Stream<'_>>> {
        let mut st = self.shared.lock();
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        if st.busy && !urgent {
            return Ok(None);
        }
        while st.busy {
            st = self.shared.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.busy = true;
        let tx = self.tx.as_ref().ok_or_else(gone)?;
        Ok(Some(Stream {
            tx,
            buf: Vec::with_capacity(PIECE),
        }))
    }

    /// Waits until every checkpoint begun is on disk; returns a write
    /// error if one happened.
    pub(crate) fn wait(&self) -> io::Result<()> {
        let mut st = self.shared.lock();
        while st.busy {
            st = self.shared.idle.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.error.take().map_or(Ok(()), Err)
    }
}

impl Drop for CheckpointWriter {
    fn drop(&mut self) {
        self.tx = None; // The thread finishes what it has and stops.
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // Nobody waited for the last checkpoint: a library has no better
        // place than stderr for an error that would otherwise vanish.
        if let Some(e) = self.shared.lock().error.take() {
            eprintln!("ppspp-store: warning: checkpoint not written: {e}");
        }
    }
}

/// An error of `op` on `path` that says both, keeping the kind.
fn at<'a>(op: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> io::Error + 'a {
    move |e| io::Error::new(e.kind(), format!("cannot {op} {}: {e}", path.display()))
}

/// Removes the temporary file of a failed or abandoned checkpoint; a
/// failure to is only worth a note, the next open removes it too.
fn discard(tmp: &Path) {
    match std::fs::remove_file(tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            eprintln!("ppspp-store: warning: cannot remove {}: {e}", tmp.display());
        }
        _ => {}
    }
}

fn gone() -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        "the checkpoint writer has stopped",
    )
}

/// One checkpoint being encoded: bytes written to it go to the thread in
/// pieces. [`Stream::finish`] completes it; dropping it unfinished abandons
/// it (the old checkpoint stays).
pub(crate) struct Stream<'a> {
    tx: &'a SyncSender<Job>,
    buf: Vec<u8>,
}

impl Stream<'_> {
    /// Completes the checkpoint, whose body held `nodes` tree nodes.
    pub(crate) fn finish(mut self, nodes: u64) -> io::Result<()> {
        self.send_piece()?;
        self.tx.send(Job::Finish { nodes }).map_err(|_| gone())
    }

    fn send_piece(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let piece = std::mem::replace(&mut self.buf, Vec::with_capacity(PIECE));
        self.tx.send(Job::Data(piece)).map_err(|_| gone())
    }
}

impl Write for Stream<'_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= PIECE {
            self.send_piece()?;
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The thread: one checkpoint after another, each a run of pieces ended by
/// `Finish`.
fn run(shared: &Shared, rx: &Receiver<Job>, path: &Path, file: &File) {
    let tmp_path = checkpoint_tmp_path(path);
    // The temporary file, once this thread created it for the checkpoint
    // being written (only then is it ours to remove).
    let mut open: Option<(File, Sha256)> = None;
    let mut failed: Option<io::Error> = None;
    while let Ok(job) = rx.recv() {
        match job {
            Job::Data(piece) => {
                if failed.is_some() {
                    continue;
                }
                let step = (|| {
                    if open.is_none() {
                        let tmp = File::create(&tmp_path).map_err(at("create", &tmp_path))?;
                        open = Some((tmp, format::checksum()));
                    }
                    let (tmp, sum) = open.as_mut().expect("opened above");
                    sum.update(&piece);
                    tmp.write_all(&piece).map_err(at("write", &tmp_path))
                })();
                failed = step.err();
            }
            Job::Finish { nodes } => {
                let created = open.is_some();
                let result = match (failed.take(), open.take()) {
                    (Some(e), _) => Err(e),
                    (None, Some((tmp, sum))) => finish(path, &tmp_path, file, tmp, sum, nodes),
                    (None, None) => Ok(()),
                };
                if result.is_err() && created {
                    discard(&tmp_path);
                }
                let mut st = shared.lock();
                st.busy = false;
                if let Err(e) = result {
                    st.error.get_or_insert(e);
                }
                drop(st);
                shared.idle.notify_all();
            }
        }
    }
    // The writer was dropped mid-checkpoint: the old checkpoint stays.
    if open.take().is_some() {
        discard(&tmp_path);
    }
    let mut st = shared.lock();
    st.busy = false;
    drop(st);
    shared.idle.notify_all();
}

/// Flush the content (a checkpoint must never claim chunks that are not on
/// disk), append the file facts and the checksum, make it the checkpoint.
fn finish(
    path: &Path,
    tmp_path: &Path,
    file: &File,
    mut tmp: File,
    mut sum: Sha256,
    nodes: u64,
) -> io::Result<()> {
    file.sync_data().map_err(at("flush", path))?;
    let meta = file.metadata().map_err(at("stat", path))?;
    let trailer = format::trailer(nodes, meta.len(), mtime_ns(&meta));
    sum.update(trailer);
    (|| {
        tmp.write_all(&trailer)?;
        tmp.write_all(&sum.finalize())?;
        tmp.sync_all()
    })()
    .map_err(at("write", tmp_path))?;
    drop(tmp);
    let ck = checkpoint_path(path);
    std::fs::rename(tmp_path, &ck).map_err(|e| {
        let why = format!(
            "cannot rename {} to {}: {e}",
            tmp_path.display(),
            ck.display()
        );
        io::Error::new(e.kind(), why)
    })?;
    sync_parent(path).map_err(at("flush the directory of", &ck))
}
