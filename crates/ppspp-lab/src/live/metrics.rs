//! A live run's figures: per peer (`live.csv`) and for the run (the
//! `live` object of `summary.json`, the report's live rows). The goal of
//! issue 24 reads three of them: continuity, p95 lag, and what the source
//! sends as a multiple of the stream rate.

use ppspp_core::play::PlaybackStats;
use serde_json::json;
use std::fmt::Write as _;

use super::player::LivePlayback;
use super::MediaClock;
use crate::report::quantile;
use crate::scenario::Role;
use crate::sim::PeerResult;

/// A peer's part in a live stream.
#[derive(Clone, Debug, PartialEq)]
pub struct LivePeer {
    /// Chunks the source made (0 at a viewer).
    pub made: u64,
    /// What a viewer experienced (`None` at the source).
    pub playback: Option<LivePlayback>,
}

/// The on-demand metrics of a live viewer, so that `peers.csv`, the
/// playback summary and `lab run`'s table show live viewers too: a chunk
/// played is in time; chunks skipped and the stall time (in chunks) are
/// due and were not.
pub fn as_playback_stats(p: &LivePlayback, clock: MediaClock) -> PlaybackStats {
    let stall_us = ppspp_core::time::duration_micros(p.stall_time);
    PlaybackStats {
        startup_delay: p.startup,
        stalls: p.stalls,
        stall_time: p.stall_time,
        chunks_due: p.played + p.skipped + clock.chunks_in_us(stall_us),
        chunks_in_time: p.played,
        ..PlaybackStats::default()
    }
}

fn secs_of(ms: u32) -> f64 {
    f64::from(ms) / 1e3
}

/// A viewer's continuity for the run's figures: a viewer that never
/// started playing counts 0 — it was there and saw nothing. Averaging
/// over the viewers that started only, as this did before, scored a run
/// where 75 of 100 viewers never got a byte at 0.967 (issue 24's notes).
pub fn viewer_continuity(p: &LivePlayback, clock: MediaClock) -> f64 {
    p.continuity(clock).unwrap_or(0.0)
}

/// A viewer's lag quantile `q` in seconds (NaN without samples).
pub fn lag_quantile(p: &LivePlayback, q: f64) -> f64 {
    let v: Vec<f64> = p.lags_ms.iter().map(|m| secs_of(*m)).collect();
    quantile(&v, q)
}

/// A viewer's delivery delay quantile `q` in seconds (NaN without
/// samples; see [`LivePlayback::delivery_ms`]).
pub fn delivery_quantile(p: &LivePlayback, q: f64) -> f64 {
    let v: Vec<f64> = p.delivery_ms.iter().map(|m| secs_of(*m)).collect();
    quantile(&v, q)
}

/// The run's live figures.
#[derive(Clone, Debug, PartialEq)]
pub struct LiveSummary {
    /// The stream's bitrate (bit/s).
    pub bitrate: u64,
    /// Media seconds the source made.
    pub streamed_s: f64,
    /// Viewers, and of them those hooked in, started, and played to the end.
    pub viewers: usize,
    /// See `viewers`.
    pub hooked: usize,
    /// See `viewers`.
    pub started: usize,
    /// See `viewers`.
    pub ended: usize,
    /// Startup delays (s): mean, p50, p95, max.
    pub startup_s: [f64; 4],
    /// Lag over every sample of every viewer (s): p50, p95, max.
    pub lag_s: [f64; 3],
    /// Delivery delay over every sample of every viewer (s): p50, p95
    /// (see [`LivePlayback::delivery_ms`]).
    pub delivery_s: [f64; 2],
    /// Continuity: mean and worst over every viewer, one that never
    /// started counting 0 ([`viewer_continuity`]).
    pub continuity: [f64; 2],
    /// Per viewer, on average: stalls, stall seconds, skips, skipped seconds.
    pub stalls_per_viewer: f64,
    /// See `stalls_per_viewer`.
    pub stall_s_per_viewer: f64,
    /// See `stalls_per_viewer`.
    pub skips_per_viewer: f64,
    /// See `stalls_per_viewer`.
    pub skipped_s_per_viewer: f64,
    /// Payload bytes the viewers received from the source and from peers.
    pub bytes_from_source: u64,
    /// See `bytes_from_source`.
    pub bytes_from_peers: u64,
    /// Payload bytes the source sent, and as a multiple of the bytes it made.
    pub source_bytes_up: u64,
    /// See `source_bytes_up`.
    pub source_upload_x: f64,
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The live summary of `peers`; `None` when none took part in a stream.
pub fn summarize(peers: &[PeerResult], clock: MediaClock, bitrate: u64) -> Option<LiveSummary> {
    let source = peers
        .iter()
        .find(|p| p.role == Role::Seeder && p.live.is_some())?;
    let made = source.live.as_ref().map_or(0, |l| l.made);
    let chunk_bytes = clock.chunk_secs() * bitrate as f64 / 8.0;
    let viewers: Vec<(&PeerResult, &LivePlayback)> = peers
        .iter()
        .filter_map(|p| Some((p, p.live.as_ref()?.playback.as_ref()?)))
        .collect();
    let started: Vec<&LivePlayback> = viewers
        .iter()
        .map(|v| v.1)
        .filter(|v| v.startup.is_some())
        .collect();
    let mut startup: Vec<f64> = started
        .iter()
        .filter_map(|v| v.startup.map(|d| d.as_secs_f64()))
        .collect();
    startup.sort_by(f64::total_cmp);
    let mut lags: Vec<f64> = viewers
        .iter()
        .flat_map(|v| v.1.lags_ms.iter().map(|m| secs_of(*m)))
        .collect();
    lags.sort_by(f64::total_cmp);
    let mut delivery: Vec<f64> = viewers
        .iter()
        .flat_map(|v| v.1.delivery_ms.iter().map(|m| secs_of(*m)))
        .collect();
    delivery.sort_by(f64::total_cmp);
    let continuity: Vec<f64> = viewers
        .iter()
        .map(|v| viewer_continuity(v.1, clock))
        .collect();
    let per = |f: &dyn Fn(&LivePlayback) -> f64| -> f64 {
        mean(&viewers.iter().map(|v| f(v.1)).collect::<Vec<_>>())
    };
    let chunk_s = clock.chunk_secs();
    Some(LiveSummary {
        bitrate,
        streamed_s: made as f64 * chunk_s,
        viewers: viewers.len(),
        hooked: viewers.iter().filter(|v| v.1.hook_in.is_some()).count(),
        started: started.len(),
        ended: viewers.iter().filter(|v| v.1.ended.is_some()).count(),
        startup_s: [
            mean(&startup),
            quantile(&startup, 0.5),
            quantile(&startup, 0.95),
            startup.last().copied().unwrap_or(f64::NAN),
        ],
        lag_s: [
            quantile(&lags, 0.5),
            quantile(&lags, 0.95),
            lags.last().copied().unwrap_or(f64::NAN),
        ],
        delivery_s: [quantile(&delivery, 0.5), quantile(&delivery, 0.95)],
        continuity: [
            mean(&continuity),
            continuity.iter().copied().fold(f64::NAN, f64::min),
        ],
        stalls_per_viewer: per(&|v| f64::from(v.stalls)),
        stall_s_per_viewer: per(&|v| v.stall_time.as_secs_f64()),
        skips_per_viewer: per(&|v| f64::from(v.skips)),
        skipped_s_per_viewer: per(&|v| v.skipped as f64 * chunk_s),
        bytes_from_source: viewers.iter().map(|v| v.0.bytes_down_from_seeders).sum(),
        bytes_from_peers: viewers.iter().map(|v| v.0.bytes_down_from_peers).sum(),
        source_bytes_up: source.bytes_up,
        source_upload_x: source.bytes_up as f64 / (made as f64 * chunk_bytes).max(1.0),
    })
}

/// A number for JSON: `null` when not finite.
fn finite(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        json!(null)
    }
}

/// The `live` object of `summary.json`.
pub fn summary_json(s: &LiveSummary) -> serde_json::Value {
    json!({
        "bitrate_bps": s.bitrate,
        "streamed_s": s.streamed_s,
        "viewers": s.viewers,
        "hooked": s.hooked,
        "started": s.started,
        "ended": s.ended,
        "startup_s": {"mean": finite(s.startup_s[0]), "p50": finite(s.startup_s[1]),
                      "p95": finite(s.startup_s[2]), "max": finite(s.startup_s[3])},
        "lag_s": {"p50": finite(s.lag_s[0]), "p95": finite(s.lag_s[1]), "max": finite(s.lag_s[2])},
        "delivery_s": {"p50": finite(s.delivery_s[0]), "p95": finite(s.delivery_s[1])},
        "continuity": {"mean": finite(s.continuity[0]), "min": finite(s.continuity[1])},
        "stalls_per_viewer": finite(s.stalls_per_viewer),
        "stall_s_per_viewer": finite(s.stall_s_per_viewer),
        "skips_per_viewer": finite(s.skips_per_viewer),
        "skipped_s_per_viewer": finite(s.skipped_s_per_viewer),
        "bytes_from_source": s.bytes_from_source,
        "bytes_from_peers": s.bytes_from_peers,
        "source_bytes_up": s.source_bytes_up,
        "source_upload_x": finite(s.source_upload_x),
    })
}

fn opt(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| format!("{x:.6}"))
        .unwrap_or_default()
}

/// `live.csv`: one row per peer of a live stream (only the header
/// otherwise).
pub fn live_csv(peers: &[PeerResult], clock: MediaClock) -> String {
    let mut s = String::from(
        "id,group,role,join_s,leave_s,chunks_made,hook_in,startup_s,lag_p50_s,lag_p95_s,\
         lag_max_s,stalls,stall_s,skips,skipped_s,played_s,continuity,ended_s,bytes_down,\
         bytes_from_source,bytes_from_peers,bytes_up,delivery_p50_s,delivery_p95_s\n",
    );
    let chunk_s = clock.chunk_secs();
    for p in peers {
        let Some(l) = &p.live else { continue };
        let role = if p.role == Role::Seeder {
            "source"
        } else {
            "viewer"
        };
        let play = l.playback.as_ref().map_or_else(
            || ",,,,,,,,,,,".to_string(),
            |v| {
                format!(
                    "{},{},{},{},{},{},{:.6},{},{:.6},{:.6},{},{}",
                    v.hook_in.map(|h| h.to_string()).unwrap_or_default(),
                    opt(v.startup.map(|d| d.as_secs_f64())),
                    opt(Some(lag_quantile(v, 0.5))),
                    opt(Some(lag_quantile(v, 0.95))),
                    opt(v.lags_ms.last().map(|m| secs_of(*m))),
                    v.stalls,
                    v.stall_time.as_secs_f64(),
                    v.skips,
                    v.skipped as f64 * chunk_s,
                    v.played as f64 * chunk_s,
                    opt(Some(viewer_continuity(v, clock))),
                    opt(v.ended.map(|t| t.as_micros() as f64 / 1e6)),
                )
            },
        );
        let delivery = l.playback.as_ref().map_or_else(
            || ",".to_string(),
            |v| {
                format!(
                    "{},{}",
                    opt(Some(delivery_quantile(v, 0.5))),
                    opt(Some(delivery_quantile(v, 0.95)))
                )
            },
        );
        let _ = writeln!(
            s,
            "{},{},{role},{},{},{},{play},{},{},{},{},{delivery}",
            p.id,
            p.group,
            opt(p.join_s),
            opt(p.leave_s),
            l.made,
            p.bytes_down,
            p.bytes_down_from_seeders,
            p.bytes_down_from_peers,
            p.bytes_up
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn peer(id: u32, role: Role, live: LivePeer) -> PeerResult {
        PeerResult {
            id,
            group: "g".into(),
            role,
            join_s: Some(0.0),
            leave_s: None,
            complete_s: None,
            startup_bytes_s: None,
            bytes_down: 0,
            bytes_down_from_seeders: 0,
            bytes_down_from_peers: 0,
            bittorrent: None,
            bytes_up: 0,
            chunks_rejected: 0,
            playback: None,
            stalls: Vec::new(),
            messages_sent: Default::default(),
            datagrams_dropped: Default::default(),
            live: Some(live),
        }
    }

    #[test]
    fn a_viewer_that_never_started_counts_zero_continuity() {
        let clock = MediaClock::new(ppspp_core::ChunkSize::DEFAULT, 1_000_000);
        let source = LivePeer {
            made: 1000,
            playback: None,
        };
        // Played 900 chunks, stalled as long as 100 take: 0.9.
        let played = LivePlayback {
            startup: Some(Duration::from_secs(1)),
            played: 900,
            stall_time: Duration::from_micros(clock.span_us(100)),
            ..LivePlayback::default()
        };
        let never = LivePlayback::default();
        let peers = [
            peer(0, Role::Seeder, source),
            peer(
                1,
                Role::Leecher,
                LivePeer {
                    made: 0,
                    playback: Some(played),
                },
            ),
            peer(
                2,
                Role::Leecher,
                LivePeer {
                    made: 0,
                    playback: Some(never),
                },
            ),
        ];
        let s = summarize(&peers, clock, 1_000_000).unwrap();
        assert_eq!((s.viewers, s.started), (2, 1));
        assert!((s.continuity[0] - 0.45).abs() < 1e-9, "{:?}", s.continuity);
        assert_eq!(s.continuity[1], 0.0);
        // live.csv says the same per viewer.
        let csv = live_csv(&peers, clock);
        let last: Vec<&str> = csv.lines().last().unwrap().split(',').collect();
        assert_eq!(last[16], "0.000000");
    }
}
