//! The HTTP side of a live viewer: the stream as it arrives, as one
//! endless MPEG-TS response (`/<id>`, `/<id>.ts`: what mpv, VLC and ffplay
//! read) and as an HLS sliding-window playlist (`/<id>/live.m3u8`, RFC
//! 8216 §6.2.2) of segments (`/<id>/seg/<n>.ts`), plus `/<id>/stats`.
//!
//! Only verified chunks are served (the node reads back what passed its
//! signature and Merkle checks, RFC 7574 §6.1.2). A response starts near
//! the live edge (the hook-in, or `delay` behind the edge for a later
//! client); one that falls behind the discard window skips forward to it.

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use hyper::body::Incoming;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use ppspp_core::proto::SwarmHandle;
use ppspp_core::ChunkIndex;
use ppspp_http::target::{Resource, Target};
use ppspp_udp::{LiveRead, NodeHandle};
use serde_json::json;
use tokio::sync::{mpsc, watch};

use crate::cmd::stream::http::{plain, refuse_method, Body};
use crate::cmd::stream::server::Site;
use ppspp_http::hls::{packet_start, Segments};
use ppspp_http::ts_entry::EntryScan;

/// Chunks read from the node at a time for a response.
const READ_CHUNKS: usize = 16;
/// Segments listed in the playlist: a window of about 12 s with 2 s
/// segments, more than the three target durations a client stays behind
/// the end (RFC 8216 §6.3.3).
const PLAYLIST_SEGMENTS: u64 = 6;
/// How long a request waits for the stream to start or a segment to
/// complete before it is answered 503 / 404.
const WAIT: Duration = Duration::from_secs(20);
/// A response waiting for a missing chunk skips to the next verified one
/// once the edge is this many times the start delay ahead of it.
const SKIP_BEHIND_FACTOR: u64 = 2;
/// How long a wait for the next chunk lasts before asking again anyway.
const RECHECK: Duration = Duration::from_millis(500);

/// A live viewer's gateway.
pub struct LiveGateway {
    pub node: NodeHandle,
    pub swarm: SwarmHandle,
    /// The swarm id in lowercase hex: the path served.
    pub id: String,
    pub chunk_size: u64,
    pub bitrate_bps: u64,
    /// How far behind the edge a new response starts, in chunks.
    pub delay_chunks: u64,
    pub segments: Segments,
    verified: watch::Receiver<u64>,
    /// The chunk the most recent endless response sends.
    playing: AtomicU64,
    /// Chunks responses skipped (they fell behind the window).
    skipped: AtomicU64,
    /// Times a started response waited for the next chunk.
    waits: AtomicU64,
}

impl LiveGateway {
    pub fn new(
        node: NodeHandle,
        swarm: SwarmHandle,
        id: String,
        chunk_size: u64,
        bitrate_bps: u64,
        delay: Duration,
    ) -> Self {
        let delay_bytes = delay.as_secs_f64() * bitrate_bps as f64 / 8.0;
        LiveGateway {
            verified: node.verified(),
            node,
            swarm,
            id,
            chunk_size,
            bitrate_bps,
            delay_chunks: (delay_bytes / chunk_size as f64).ceil() as u64,
            segments: Segments::new(2.0, bitrate_bps, chunk_size),
            playing: AtomicU64::new(u64::MAX),
            skipped: AtomicU64::new(0),
            waits: AtomicU64::new(0),
        }
    }

    async fn read(&self, from: u64, max: usize) -> Option<LiveRead> {
        self.node
            .read_live(self.swarm, ChunkIndex(from), max)
            .await
            .ok()
    }

    /// Waits for any chunk to verify (or `RECHECK`); false once the node
    /// stopped.
    async fn wait(&self, verified: &mut watch::Receiver<u64>) -> bool {
        !matches!(
            tokio::time::timeout(RECHECK, verified.changed()).await,
            Ok(Err(_))
        )
    }

    /// Where a new response starts: `delay` behind the edge, not before
    /// the floor; `None` until the stream has started here.
    async fn start_chunk(&self) -> Option<u64> {
        let mut verified = self.verified.clone();
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            verified.borrow_and_update();
            let r = self.read(0, 0).await?;
            if let (Some(floor), Some(edge)) = (r.floor, r.edge) {
                let from = (edge.0 + 1).saturating_sub(self.delay_chunks).max(floor.0);
                return Some(from);
            }
            if tokio::time::Instant::now() >= deadline || !self.wait(&mut verified).await {
                return None;
            }
        }
    }

    /// Sends the stream from chunk `from` into `out` until the reader goes
    /// away: from the first keyframe on (with the tables before it,
    /// `entry.rs`), skipping forward when it falls out of the window.
    async fn pump(self: Arc<Self>, mut next: u64, out: mpsc::Sender<Bytes>) {
        let cs = self.chunk_size;
        let mut verified = self.verified.clone();
        let mut align = true;
        // While set, looking for where a decoder can start.
        let mut entry: Option<EntryScan> = None;
        let mut started = false;
        loop {
            verified.borrow_and_update();
            let Some(r) = self.read(next, READ_CHUNKS).await else {
                return;
            };
            if r.start.0 > next {
                // The window moved past us: skip to its start.
                self.skipped.fetch_add(r.start.0 - next, Ordering::Relaxed);
                next = r.start.0;
                align = true;
            }
            if r.chunks.is_empty() {
                // Too far behind the edge waiting for a chunk that may never
                // come (no peer had it in time): skip to the next one there
                // is, as a live player would rather than stall for good.
                let behind = r.edge.map_or(0, |e| e.0.saturating_sub(next));
                if let Some(c) = r.next_verified.filter(|c| c.0 > next) {
                    if behind > SKIP_BEHIND_FACTOR * self.delay_chunks.max(1) {
                        self.skipped.fetch_add(c.0 - next, Ordering::Relaxed);
                        next = c.0;
                        align = true;
                        continue;
                    }
                }
                if started {
                    self.waits.fetch_add(1, Ordering::Relaxed);
                }
                tokio::select! {
                    alive = self.wait(&mut verified) => if !alive { return },
                    () = out.closed() => return,
                }
                continue;
            }
            let _ = self.node.set_playhead(self.swarm, Some(ChunkIndex(next)));
            self.playing.store(next, Ordering::Relaxed);
            let mut piece = Vec::with_capacity(r.chunks.iter().map(Vec::len).sum());
            for c in &r.chunks {
                piece.extend_from_slice(c);
            }
            if std::mem::take(&mut align) {
                let skip = packet_start(next * cs, &piece);
                piece.drain(..skip);
                entry = Some(EntryScan::default());
            }
            next += r.chunks.len() as u64;
            if let Some(scan) = &mut entry {
                match scan.feed(&piece) {
                    Some(e) => {
                        piece = e.bytes;
                        entry = None;
                    }
                    None => continue,
                }
            }
            if out.send(Bytes::from(piece)).await.is_err() {
                return;
            }
            started = true;
        }
    }

    /// The endless response.
    async fn stream(self: Arc<Self>, head: bool) -> Response<Body> {
        let Some(from) = self.start_chunk().await else {
            return plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "the stream has not started yet",
            );
        };
        let body = if head {
            Body::Full(None)
        } else {
            let (tx, rx) = mpsc::channel(1);
            tokio::spawn(self.clone().pump(from, tx));
            Body::Stream(rx)
        };
        let mut r = Response::new(body);
        let h = r.headers_mut();
        h.insert(header::CONTENT_TYPE, HeaderValue::from_static("video/mp2t"));
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        r
    }

    /// The verified run of chunks from the floor: (floor, end exclusive).
    async fn verified_span(&self) -> Option<(u64, u64)> {
        let r = self.read(0, 0).await?;
        let floor = r.floor?.0;
        let run = self
            .node
            .have_run(self.swarm, ChunkIndex(floor))
            .await
            .ok()?;
        Some((floor, floor + run))
    }

    /// The HLS playlist: the newest complete segments, a sliding window.
    async fn playlist(&self) -> Response<Body> {
        let mut verified = self.verified.clone();
        let deadline = tokio::time::Instant::now() + WAIT;
        let (first, end) = loop {
            verified.borrow_and_update();
            if let Some((floor, end)) = self.verified_span().await {
                let first = self.segments.first_from(floor);
                let end = self.segments.complete_before(end);
                if end > first {
                    break (first.max(end.saturating_sub(PLAYLIST_SEGMENTS)), end);
                }
            }
            if tokio::time::Instant::now() >= deadline || !self.wait(&mut verified).await {
                return plain(StatusCode::SERVICE_UNAVAILABLE, "no whole segment yet");
            }
        };
        let seconds = self.segments.target as f64 * 8.0 / self.bitrate_bps.max(1) as f64;
        let mut text = format!(
            "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:{}\n#EXT-X-MEDIA-SEQUENCE:{first}\n",
            seconds.ceil() as u64
        );
        for n in first..end {
            text.push_str(&format!("#EXTINF:{seconds:.3},\nseg/{n}.ts\n"));
        }
        let mut r = Response::new(Body::Full(Some(Bytes::from(text))));
        let h = r.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/vnd.apple.mpegurl"),
        );
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        r
    }

    /// Segment `n`, whole, once all its chunks are verified.
    async fn segment(&self, n: u64) -> Response<Body> {
        let (first, end) = self.segments.chunks(n);
        // A segment not yet begun at the edge is not waited for: a client
        // naming far-future segments holds no connection for long.
        let edge = self
            .read(0, 0)
            .await
            .and_then(|r| r.edge)
            .map_or(0, |e| e.0);
        if first > edge.saturating_add(end - first) || end == first {
            return plain(StatusCode::NOT_FOUND, "no such segment");
        }
        let want = usize::try_from(end - first).unwrap_or(usize::MAX);
        let mut verified = self.verified.clone();
        let deadline = tokio::time::Instant::now() + WAIT;
        let chunks = loop {
            verified.borrow_and_update();
            let Some(r) = self.read(first, want).await else {
                return plain(StatusCode::SERVICE_UNAVAILABLE, "the node has stopped");
            };
            if r.start.0 > first {
                return plain(StatusCode::NOT_FOUND, "the segment left the window");
            }
            if r.chunks.len() == want {
                break r.chunks;
            }
            if tokio::time::Instant::now() >= deadline || !self.wait(&mut verified).await {
                return plain(StatusCode::NOT_FOUND, "no such segment yet");
            }
        };
        let bytes: Vec<u8> = chunks.concat();
        let base = first * self.chunk_size;
        let lo = (self.segments.start(n) - base) as usize;
        let hi = ((self.segments.start(n + 1) - base) as usize).min(bytes.len());
        let mut r = Response::new(Body::Full(Some(Bytes::from(bytes).slice(lo..hi))));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static("video/mp2t"));
        r
    }

    /// The status document: where the stream is and how far behind.
    async fn stats(&self) -> Response<Body> {
        let (Ok(report), Some(r)) = (self.node.report(self.swarm).await, self.read(0, 0).await)
        else {
            return plain(StatusCode::SERVICE_UNAVAILABLE, "the node has stopped");
        };
        let playing = Some(self.playing.load(Ordering::Relaxed)).filter(|&p| p != u64::MAX);
        let at = match playing {
            Some(p) => self.read(p, 0).await,
            None => None,
        };
        let now_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        // How old the chunk being sent is, by the source's signature time:
        // its lag behind the source (clocks assumed in step).
        let lag = at
            .and_then(|a| a.signed_at)
            .map(|t| now_us.saturating_sub(t) as f64 / 1e6);
        let per_s = self.bitrate_bps as f64 / 8.0 / self.chunk_size as f64;
        let behind = match (playing, r.edge) {
            (Some(p), Some(e)) => Some((e.0 + 1).saturating_sub(p) as f64 / per_s),
            _ => None,
        };
        let s = &report.stats;
        let doc = json!({
            "swarm": self.id,
            "live": true,
            "chunk_size": self.chunk_size,
            "bitrate_bps": self.bitrate_bps,
            "hook_in_chunk": s.live_hook_in.map(|c| c.0),
            "floor_chunk": r.floor.map(|c| c.0),
            "edge_chunk": r.edge.map(|c| c.0),
            "playing_chunk": playing,
            "lag_s": lag,
            "behind_edge_s": behind,
            "chunks_verified": s.chunks_verified,
            "chunks_skipped": s.live_chunks_skipped + self.skipped.load(Ordering::Relaxed),
            "munros_refused": s.live_munros_refused,
            "waits": self.waits.load(Ordering::Relaxed),
            "payload_bytes_received": s.payload_bytes_received,
            "payload_bytes_sent": s.payload_bytes_sent,
            "peers_connected": s.peers_connected,
        });
        let mut resp = Response::new(Body::Full(Some(Bytes::from(doc.to_string()))));
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        resp
    }

    async fn route(self: Arc<Self>, req: Request<Incoming>) -> Response<Body> {
        let resource = match Target::parse(req.uri().path()) {
            Some(t) if t.swarm.eq_ignore_ascii_case(&self.id) => t.resource,
            _ => return plain(StatusCode::NOT_FOUND, "no such swarm here"),
        };
        if let Some(refusal) = refuse_method(&req) {
            return refusal;
        }
        let head = req.method() == Method::HEAD;
        let mut r = match resource {
            Resource::Content => return self.stream(head).await,
            Resource::Stats => self.stats().await,
            Resource::Playlist => self.playlist().await,
            Resource::Segment(n) => self.segment(n).await,
        };
        if head {
            *r.body_mut() = Body::Full(None);
        }
        r
    }
}

impl Site for LiveGateway {
    fn route(
        self: Arc<Self>,
        req: Request<Incoming>,
    ) -> Pin<Box<dyn std::future::Future<Output = Response<Body>> + Send>> {
        Box::pin(LiveGateway::route(self, req))
    }
}
