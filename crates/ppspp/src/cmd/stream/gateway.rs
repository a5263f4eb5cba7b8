//! What the HTTP side needs from the download: the content length, the
//! playback position, and the verified bytes of a range as they arrive.
//!
//! The gateway only drives the endpoint through [`NodeHandle`]: it moves
//! the playhead (RFC 7574 leaves piece picking to the implementation, §3.7;
//! our streaming pickers fetch from the playhead first) and asks which
//! chunks are verified. It never serves a byte that did not verify against
//! the swarm's Merkle root (RFC 7574 §5).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ppspp_core::play::PlayerConfig;
use ppspp_core::proto::SwarmHandle;
use ppspp_core::{ChunkIndex, ChunkSize};
use ppspp_udp::NodeHandle;
use tokio::sync::{mpsc, watch};

use super::stats::Rates;
use super::storage::SharedStorage;

/// Bytes handed to the HTTP connection at a time: big enough that a fast
/// player is not held back by per-piece overhead, small enough that the
/// playhead follows a slow one closely and that a client which reads
/// nothing costs little: one piece waits in the channel, one in hyper's
/// queue (issue 21, item 4).
const PIECE: usize = 8 * 1024;

/// How long a wait for a chunk lasts before the have-map is asked again
/// anyway. Waits end as soon as a chunk verifies (the node's watch); this
/// only bounds the cost of a missed wake-up.
const RECHECK: Duration = Duration::from_secs(1);

/// Where playback is, as the most recent request says.
#[derive(Debug, Default)]
struct Play {
    /// The number of the most recent GET of the content; only it moves
    /// the playhead, so an older response still draining does not pull
    /// the download back.
    latest: u64,
    /// The byte it is sending or waiting for.
    byte: u64,
    /// The chunk the endpoint was last told.
    chunk: Option<u64>,
    /// Whether the node's player model runs (from the first request).
    watched: bool,
}

/// The state shared by every HTTP connection.
#[derive(Debug)]
pub struct Gateway {
    /// The node.
    pub node: NodeHandle,
    /// The swarm streamed.
    pub swarm: SwarmHandle,
    /// The download's storage, read back for responses.
    pub storage: SharedStorage,
    /// Bytes per chunk.
    pub chunk_size: u64,
    /// The swarm id, lowercase hex: the path the content is served at.
    pub id: String,
    /// The media bitrate in bits per second, for buffer seconds.
    pub bitrate_bps: u64,
    /// Download and upload rates over the last seconds.
    pub rates: Mutex<Rates>,
    /// The node's player model: a viewer watching from the first request,
    /// jumping at every new one (the same model as the lab's viewers).
    player: PlayerConfig,
    verified: watch::Receiver<u64>,
    play: Mutex<Play>,
    stalls: AtomicU64,
    stall_micros: AtomicU64,
}

impl Gateway {
    /// The gateway of `swarm` on `node`, its content in `storage`.
    pub fn new(
        node: NodeHandle,
        swarm: SwarmHandle,
        storage: SharedStorage,
        chunk_size: u64,
        id: String,
        player: PlayerConfig,
    ) -> Self {
        Gateway {
            bitrate_bps: player.bitrate.bps(),
            player,
            verified: node.verified(),
            node,
            swarm,
            storage,
            chunk_size,
            id,
            rates: Mutex::new(Rates::default()),
            play: Mutex::new(Play::default()),
            stalls: AtomicU64::new(0),
            stall_micros: AtomicU64::new(0),
        }
    }

    fn play(&self) -> std::sync::MutexGuard<'_, Play> {
        self.play.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The content length; waits for it when neither the URL nor a
    /// checkpoint gave it (the last chunk's verification proves it, RFC
    /// 7574 §5.6). `None` if the node stopped first.
    pub async fn content_len(&self) -> Option<u64> {
        let mut verified = self.verified.clone();
        let mut fetching_last = false;
        loop {
            verified.borrow_and_update();
            if let Some(len) = self.storage.content_len() {
                return Some(len);
            }
            // The peak hashes give the chunk count long before the length
            // (RFC 7574 §5.6): fetch the last chunk next, as only it is
            // missing to answer. The next request's own position takes
            // over from there.
            if !fetching_last {
                if let Ok(Some(n)) = self.node.report(self.swarm).await.map(|r| r.chunk_count) {
                    let last = ChunkIndex(n.saturating_sub(1));
                    if self.node.set_playhead(self.swarm, Some(last)).is_ok() {
                        self.play().chunk = None;
                        fetching_last = true;
                    }
                }
            }
            if let Ok(Err(_)) = tokio::time::timeout(RECHECK, verified.changed()).await {
                // The node stopped.
                return self.storage.content_len();
            }
        }
    }

    /// The playback position: the byte the most recent request is sending
    /// or waiting for.
    pub fn playhead(&self) -> u64 {
        self.play().byte
    }

    /// Times a response that had started had to wait for a chunk, and the
    /// time spent waiting (a client reading ahead of the download; not
    /// the same as a stall of the player model).
    pub fn waits(&self) -> (u64, Duration) {
        (
            self.stalls.load(Ordering::Relaxed),
            Duration::from_micros(self.stall_micros.load(Ordering::Relaxed)),
        )
    }

    /// A new request for the content from `byte`: it becomes the most
    /// recent, and playback moves there. Returns its number.
    pub fn begin(&self, byte: u64) -> u64 {
        let (seq, first) = {
            let mut p = self.play();
            p.latest += 1;
            (p.latest, !std::mem::replace(&mut p.watched, true))
        };
        // The model viewer starts with the first request and jumps with
        // every later one; the responses steer the pickers themselves.
        // (The node is gone only while shutting down.)
        if first {
            if let Ok(cs) = ChunkSize::new(self.chunk_size) {
                let _ = self.node.watch(self.swarm, self.player, cs, false);
            }
        }
        let _ = self
            .node
            .seek(self.swarm, ChunkIndex(byte / self.chunk_size));
        self.seek(seq, byte);
        seq
    }

    /// Response `seq` is now at `byte`; if it is the most recent request,
    /// the playhead follows it, so the chunks it needs next are fetched
    /// first.
    fn seek(&self, seq: u64, byte: u64) {
        let chunk = byte / self.chunk_size;
        let tell = {
            let mut p = self.play();
            if p.latest != seq {
                return;
            }
            p.byte = byte;
            let moved = p.chunk != Some(chunk);
            p.chunk = Some(chunk);
            moved
        };
        if tell {
            // The node is gone only while shutting down; nothing to do then.
            let _ = self.node.set_playhead(self.swarm, Some(ChunkIndex(chunk)));
        }
    }

    /// Waits until chunk `chunk` is verified; returns how many verified
    /// chunks follow from it without a gap (at least 1) and whether it had
    /// to wait, or `None` when the node stopped or the response's reader
    /// went away.
    async fn wait_for(&self, chunk: u64, out: &mpsc::Sender<Bytes>) -> Option<(u64, bool)> {
        let mut verified = self.verified.clone();
        let mut waited = false;
        loop {
            // Marked seen before asking, so a chunk verifying between the
            // answer and the wait still wakes us.
            verified.borrow_and_update();
            let run = self
                .node
                .have_run(self.swarm, ChunkIndex(chunk))
                .await
                .ok()?;
            if run > 0 {
                return Some((run, waited));
            }
            waited = true;
            tokio::select! {
                _ = tokio::time::timeout(RECHECK, verified.changed()) => {}
                () = out.closed() => return None,
            }
        }
    }

    /// Sends bytes `first..=last` of the content into `out` as their chunks
    /// verify, moving the playhead along for request `seq`. Ends early,
    /// quietly, when the reader goes away: a player that seeks or quits
    /// just drops the connection.
    pub async fn pump(self: Arc<Self>, seq: u64, first: u64, last: u64, out: mpsc::Sender<Bytes>) {
        let cs = self.chunk_size;
        let mut pos = first;
        let mut started = false;
        while pos <= last {
            self.seek(seq, pos);
            let chunk = pos / cs;
            let waited = Instant::now();
            let Some((run, had_to_wait)) = self.wait_for(chunk, &out).await else {
                tracing::debug!("response at byte {pos} ended: reader gone");
                return;
            };
            let wait = waited.elapsed();
            // A stall is a wait after the response started sending; the
            // first wait is startup, not a stall.
            if started && had_to_wait {
                self.stalls.fetch_add(1, Ordering::Relaxed);
                self.stall_micros
                    .fetch_add(wait.as_micros() as u64, Ordering::Relaxed);
            }
            let end = chunk.saturating_add(run);
            let mut c = chunk;
            while c < end && pos <= last {
                // Room first, then the piece: a client that does not read
                // leaves the pump waiting here holding nothing, and the
                // piece in the channel is all it costs on our side.
                let Ok(permit) = out.reserve().await else {
                    tracing::debug!("response at byte {pos} ended: reader gone");
                    return;
                };
                let mut piece = BytesMut::with_capacity(PIECE.max(cs as usize));
                // Whole chunks up to PIECE bytes (at least one chunk).
                while c < end
                    && pos <= last
                    && (piece.is_empty() || piece.len() + cs as usize <= PIECE)
                {
                    // Read in place, then keep the part in range.
                    let at = piece.len();
                    piece.resize(at + cs as usize, 0);
                    let n = match self.storage.read(ChunkIndex(c), &mut piece[at..]) {
                        Ok(n) => n as u64,
                        Err(e) => {
                            // Verified chunks are stored; failing to read one
                            // back is a local problem (disk, permissions) the
                            // response cannot mend: say so, end the response.
                            eprintln!("ppspp: warning: cannot read chunk {c} back: {e}");
                            return;
                        }
                    };
                    let base = c * cs;
                    let (lo, hi) = (pos - base, (last.saturating_add(1) - base).min(n));
                    if lo >= hi {
                        return;
                    }
                    piece.copy_within(at + lo as usize..at + hi as usize, at);
                    piece.truncate(at + (hi - lo) as usize);
                    pos = base + hi;
                    c += 1;
                }
                permit.send(piece.freeze());
                started = true;
                if pos <= last {
                    self.seek(seq, pos);
                }
            }
        }
    }
}
