//! Checkpoints are written by a background thread, so that flushing the
//! content file to disk (hundreds of milliseconds after a fast download)
//! never stalls the protocol loop that calls `Storage::checkpoint`.
//!
//! The loop encodes the snapshot (it owns the tree) and hands the bytes
//! over; the thread flushes the content file, stamps its length and
//! modification time into the checkpoint and replaces the old one
//! atomically. Only the newest pending checkpoint is written. Dropping the
//! writer waits for the last one, so a process that exits normally leaves
//! its latest checkpoint on disk.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::file::{mtime_ns, write_atomically};
use crate::format;

#[derive(Default)]
struct State {
    /// The newest checkpoint not yet written.
    pending: Option<Vec<u8>>,
    /// The writer is working on one.
    busy: bool,
    /// The first error since the caller last asked.
    error: Option<io::Error>,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// The background checkpoint writer of one download.
pub(crate) struct CheckpointWriter {
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
    /// `file` (a handle on the same content) before each.
    pub(crate) fn spawn(path: PathBuf, file: File) -> io::Result<CheckpointWriter> {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let worker = shared.clone();
        let thread = std::thread::Builder::new()
            .name("ppspp-checkpoint".into())
            .spawn(move || run(&worker, &path, &file))?;
        Ok(CheckpointWriter {
            shared,
            thread: Some(thread),
        })
    }

    /// Queues `bytes` (an encoded checkpoint whose file facts the writer
    /// fills in), replacing one still waiting. Returns the error of an
    /// earlier write, if one failed.
    pub(crate) fn submit(&self, bytes: Vec<u8>) -> io::Result<()> {
        let mut st = lock(&self.shared);
        st.pending = Some(bytes);
        let err = st.error.take();
        drop(st);
        self.shared.wake.notify_one();
        err.map_or(Ok(()), Err)
    }

    /// Waits until everything submitted is on disk.
    pub(crate) fn wait(&self) -> io::Result<()> {
        let mut st = lock(&self.shared);
        while st.pending.is_some() || st.busy {
            st = self.shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.error.take().map_or(Ok(()), Err)
    }
}

impl Drop for CheckpointWriter {
    fn drop(&mut self) {
        lock(&self.shared).stop = true;
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, State> {
    shared.state.lock().unwrap_or_else(|e| e.into_inner())
}

fn run(shared: &Shared, path: &std::path::Path, file: &File) {
    loop {
        let mut st = lock(shared);
        while st.pending.is_none() && !st.stop {
            st = shared.wake.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        let Some(mut bytes) = st.pending.take() else {
            return; // Stopping with nothing left to write.
        };
        st.busy = true;
        drop(st);
        let result = write_one(path, file, &mut bytes);
        let mut st = lock(shared);
        st.busy = false;
        if let Err(e) = result {
            st.error.get_or_insert(e);
        }
        drop(st);
        shared.wake.notify_all();
    }
}

/// Flush the content (a checkpoint must never claim chunks that are not on
/// disk), stamp the file facts, replace the checkpoint.
fn write_one(path: &std::path::Path, file: &File, bytes: &mut [u8]) -> io::Result<()> {
    file.sync_data()?;
    let meta = file.metadata()?;
    format::set_file_facts(bytes, meta.len(), mtime_ns(&meta));
    write_atomically(path, bytes)
}
