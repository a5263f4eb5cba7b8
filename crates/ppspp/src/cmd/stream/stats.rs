//! Live status of a stream, served as JSON at `/<swarm-id>/stats`.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ppspp_core::ChunkIndex;
use serde_json::{json, Value};

use super::gateway::Gateway;

/// How far back the rates look.
const WINDOW: Duration = Duration::from_secs(3);
/// How often the counters are sampled for the rates.
const SAMPLE_EVERY: Duration = Duration::from_millis(250);

/// Samples of the swarm's byte counters, for rates over the last
/// [`WINDOW`].
#[derive(Debug, Default)]
pub struct Rates {
    /// (when, payload bytes received, payload bytes sent)
    samples: VecDeque<(Instant, u64, u64)>,
}

impl Rates {
    fn push(&mut self, at: Instant, received: u64, sent: u64) {
        self.samples.push_back((at, received, sent));
        // Keep one sample at or before the window's start, so the rate
        // spans the whole window once there is that much history.
        while self.samples.len() > 2 && at.duration_since(self.samples[1].0) >= WINDOW {
            self.samples.pop_front();
        }
    }

    /// Download and upload rates in bytes per second.
    pub fn rates(&self) -> (f64, f64) {
        match (self.samples.front(), self.samples.back()) {
            (Some(a), Some(b)) if b.0 > a.0 => {
                let dt = b.0.duration_since(a.0).as_secs_f64();
                (
                    b.1.saturating_sub(a.1) as f64 / dt,
                    b.2.saturating_sub(a.2) as f64 / dt,
                )
            }
            _ => (0.0, 0.0),
        }
    }
}

/// Samples the counters until the node stops.
pub async fn sample(gw: Arc<Gateway>) {
    let mut tick = tokio::time::interval(SAMPLE_EVERY);
    loop {
        tick.tick().await;
        let Ok(r) = gw.node.report(gw.swarm).await else {
            return;
        };
        let mut rates = gw.rates.lock().unwrap_or_else(|e| e.into_inner());
        rates.push(
            Instant::now(),
            r.stats.payload_bytes_received,
            r.stats.payload_bytes_sent,
        );
    }
}

/// The status document; `None` once the node has stopped.
pub async fn document(gw: &Gateway) -> Option<Value> {
    let r = gw.node.report(gw.swarm).await.ok()?;
    let len = gw.storage.content_len();
    let cs = gw.chunk_size;
    let byte = gw.playhead();
    let chunk = byte / cs;
    let run = gw.node.have_run(gw.swarm, ChunkIndex(chunk)).await.ok()?;
    // Contiguous verified bytes from the playhead: the run of chunks from
    // its chunk, less what of that chunk is behind it, cut at the end.
    let run_end = chunk.saturating_add(run).saturating_mul(cs);
    let ahead = run_end.min(len.unwrap_or(u64::MAX)).saturating_sub(byte);
    let (down, up) = gw.rates.lock().unwrap_or_else(|e| e.into_inner()).rates();
    let (waits, wait_time) = gw.waits();
    let player = r.playback.map(|p| {
        json!({
            "state": format!("{:?}", p.state).to_lowercase(),
            "playhead_chunk": p.playhead.0,
            "startup_s": p.stats.startup_delay.map(|d| d.as_secs_f64()),
            "stalls": p.stats.stalls,
            "stall_time_s": p.stats.stall_time.as_secs_f64(),
            "continuity": p.stats.continuity(),
        })
    });
    Some(json!({
        "swarm": gw.id,
        "content_length": len,
        "chunk_size": cs,
        "chunks_verified": r.have,
        "chunks_total": r.chunk_count,
        "complete": r.complete,
        "playhead": { "byte": byte, "chunk": chunk },
        "buffer_ahead_bytes": ahead,
        "buffer_ahead_s": ahead as f64 * 8.0 / gw.bitrate_bps.max(1) as f64,
        "bitrate_bps": gw.bitrate_bps,
        "download_rate_bytes_per_s": down,
        "upload_rate_bytes_per_s": up,
        "payload_bytes_received": r.stats.payload_bytes_received,
        "payload_bytes_sent": r.stats.payload_bytes_sent,
        "peers_connected": r.stats.peers_connected,
        "stalls": player.as_ref().map_or(json!(0), |p| p["stalls"].clone()),
        "stall_time_s": player.as_ref().map_or(json!(0.0), |p| p["stall_time_s"].clone()),
        "player": player,
        "waits": waits,
        "wait_time_s": wait_time.as_secs_f64(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_span_the_window() {
        let t0 = Instant::now();
        let mut r = Rates::default();
        assert_eq!(r.rates(), (0.0, 0.0));
        for i in 0..=40u64 {
            let at = t0 + Duration::from_millis(250 * i);
            // 1000 B/s down for the first 5 s, then 4000 B/s; 100 B/s up.
            let down = if i <= 20 {
                250 * i
            } else {
                5000 + 1000 * (i - 20)
            };
            r.push(at, down, 25 * i);
        }
        let (down, up) = r.rates();
        assert!((down - 4000.0).abs() < 1.0, "{down}");
        assert!((up - 100.0).abs() < 1.0, "{up}");
        assert!(r.samples.len() <= 14);
    }
}
