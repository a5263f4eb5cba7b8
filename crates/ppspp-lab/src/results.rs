//! A run's results folder: the scenario as run, `peers.csv`, `links.csv`
//! (queue-occupancy samples of the recorded links), `waits.csv` (per-packet
//! queueing delays of traced flows), `link_stats.csv`
//! (counters of every link), `progress.csv`, `flows.csv` (cross traffic),
//! `rates.csv` (bytes per flow over time), `live.csv` (each live peer's
//! lag, stalls, skips and bytes from the source and from peers) and
//! `summary.json`.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use serde_json::json;

use crate::live::metrics::{self as live_metrics, LiveSummary};
use crate::live::LiveStream;
use crate::net::LinkId;
use crate::report::quantile;
use crate::scenario::Role;
use crate::sim::cross::CrossFlow;
use crate::sim::names::{Layout, Traced};
use crate::sim::{PeerResult, ProgressSample, RateSample, Simulation};
use ppspp_core::play::PlaybackStats;
use ppspp_core::proto::DropCounts;
use ppspp_core::wire::MessageTally;

/// The headline figures of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Scenario name.
    pub name: String,
    /// Seed used.
    pub seed: u64,
    /// Hash over the ordered event trace.
    pub trace_hash: String,
    /// Records in the trace.
    pub trace_records: u64,
    /// Events processed.
    pub events: u64,
    /// Virtual seconds simulated.
    pub virtual_s: f64,
    /// Wall-clock seconds it took.
    pub wall_s: f64,
    /// Peers in the scenario.
    pub peers: usize,
    /// Leechers in the scenario.
    pub leechers: usize,
    /// Leechers that completed.
    pub completed: usize,
    /// Download times of the completed leechers (s): mean, median, p95, max.
    pub download_s: [f64; 4],
    /// What the viewers (leechers with a player) experienced, if any.
    pub playback: Option<PlaybackSummary>,
    /// The PPSPP messages all peers sent, by type (control overhead).
    pub messages_sent: MessageTally,
    /// The datagrams all peers dropped, by why.
    pub datagrams_dropped: DropCounts,
}

/// The viewers' metrics over a run.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaybackSummary {
    /// Leechers with a player.
    pub viewers: usize,
    /// Of those, how many started playing.
    pub started: usize,
    /// Startup delays of those that started (s): mean, median, p95, max.
    pub startup_s: [f64; 4],
    /// Stalls per viewer, on average.
    pub mean_stalls: f64,
    /// Stall time per viewer, on average (s).
    pub mean_stall_s: f64,
    /// The continuity index, on average over viewers with chunks due.
    pub mean_continuity: f64,
    /// Seeks per viewer, on average (0 without a seek model).
    pub mean_seeks: f64,
    /// Seeks per viewer after which playback waited, on average: kept
    /// apart from stalls (see [`PlaybackStats`]).
    pub mean_seek_waits: f64,
    /// Time per viewer spent waiting after seeks, on average (s).
    pub mean_seek_wait_s: f64,
}

/// Why a figure has no value, as the tables' footnotes say it (a figure
/// without value prints as `—`, never NaN).
pub const NO_COMPLETION: &str = "no leecher completed";
/// See [`NO_COMPLETION`].
pub const NO_VIEWER_STARTED: &str = "no viewer started";
/// See [`NO_COMPLETION`]: viewers started but none had a chunk fall due.
pub const NO_CHUNK_DUE: &str = "no chunk fell due in any viewer's playback";

impl Summary {
    /// Leechers there were, and none completed: usually a scenario mistake
    /// (a duration too short, a unit misread), unless the scenario allows
    /// it.
    pub fn nobody_completed(&self) -> bool {
        self.leechers > 0 && self.completed == 0
    }

    /// Why some of the summary's figures have no value, in table order.
    pub fn no_data_reasons(&self) -> Vec<&'static str> {
        no_data_reasons(
            self.completed,
            self.playback
                .as_ref()
                .map(|p| (p.started, p.mean_continuity.is_finite())),
        )
    }
}

/// Why figures have no value, given the leechers that `completed` and, with
/// viewers, how many `started` and whether the continuity index is known.
pub fn no_data_reasons(completed: usize, viewers: Option<(usize, bool)>) -> Vec<&'static str> {
    let mut why = Vec::new();
    if completed == 0 {
        why.push(NO_COMPLETION);
    }
    match viewers {
        Some((0, _)) => why.push(NO_VIEWER_STARTED),
        Some((_, false)) => why.push(NO_CHUNK_DUE),
        _ => {}
    }
    why
}

/// The mean of `v` (NaN when empty).
fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// Mean, median, p95 and max of sorted `v`.
fn spread(v: &[f64]) -> [f64; 4] {
    [
        mean(v),
        quantile(v, 0.5),
        quantile(v, 0.95),
        v.last().copied().unwrap_or(f64::NAN),
    ]
}

/// The viewers' summary; `None` without viewers.
fn summarize_playback(peers: &[PeerResult]) -> Option<PlaybackSummary> {
    let viewers: Vec<PlaybackStats> = peers.iter().filter_map(|p| p.playback).collect();
    if viewers.is_empty() {
        return None;
    }
    let mut startup: Vec<f64> = viewers
        .iter()
        .filter_map(|v| v.startup_delay.map(|d| d.as_secs_f64()))
        .collect();
    startup.sort_by(f64::total_cmp);
    let stalls: Vec<f64> = viewers.iter().map(|v| f64::from(v.stalls)).collect();
    let stall_s: Vec<f64> = viewers.iter().map(|v| v.stall_time.as_secs_f64()).collect();
    let continuity: Vec<f64> = viewers.iter().filter_map(|v| v.continuity()).collect();
    let seeks: Vec<f64> = viewers.iter().map(|v| f64::from(v.seeks)).collect();
    let seek_waits: Vec<f64> = viewers.iter().map(|v| f64::from(v.seek_waits)).collect();
    let seek_wait_s: Vec<f64> = viewers
        .iter()
        .map(|v| v.seek_wait_time.as_secs_f64())
        .collect();
    Some(PlaybackSummary {
        viewers: viewers.len(),
        started: startup.len(),
        startup_s: spread(&startup),
        mean_stalls: mean(&stalls),
        mean_stall_s: mean(&stall_s),
        mean_continuity: mean(&continuity),
        mean_seeks: mean(&seeks),
        mean_seek_waits: mean(&seek_waits),
        mean_seek_wait_s: mean(&seek_wait_s),
    })
}

/// Computes the summary of a finished simulation.
pub fn summarize(sim: &mut Simulation, wall_s: f64) -> (Summary, Vec<PeerResult>) {
    let peers = sim.results();
    let trace = sim.finish_trace();
    let clock = RunClock {
        events: sim.events(),
        run_s: sim.now().as_micros() as f64 / 1e6,
        wall_s,
    };
    let name = sim.scenario().name.clone();
    let summary = summarize_peers(name, sim.seed(), trace, clock, &peers);
    (summary, peers)
}

/// How long a run ran, and how much happened in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RunClock {
    /// Events processed (the emulator: datagrams the model carried).
    pub events: u64,
    /// Seconds of the run's own time: virtual in the simulator, wall in
    /// the emulator.
    pub run_s: f64,
    /// Wall-clock seconds it took.
    pub wall_s: f64,
}

/// The summary of a run named `name`, with `seed`, its trace's hash and
/// record count (empty and 0 without a trace), from its peers' results.
pub fn summarize_peers(
    name: String,
    seed: u64,
    (trace_hash, trace_records): (String, u64),
    clock: RunClock,
    peers: &[PeerResult],
) -> Summary {
    let leechers: Vec<&PeerResult> = peers.iter().filter(|p| p.role == Role::Leecher).collect();
    let mut times: Vec<f64> = leechers
        .iter()
        .filter_map(|p| Some(p.complete_s? - p.join_s?))
        .collect();
    times.sort_by(f64::total_cmp);
    Summary {
        name,
        seed,
        trace_hash,
        trace_records,
        events: clock.events,
        virtual_s: clock.run_s,
        wall_s: clock.wall_s,
        peers: peers.len(),
        leechers: leechers.len(),
        completed: times.len(),
        download_s: spread(&times),
        playback: summarize_playback(peers),
        messages_sent: peers.iter().fold(MessageTally::default(), |mut all, p| {
            all.merge(&p.messages_sent);
            all
        }),
        datagrams_dropped: peers.iter().fold(DropCounts::default(), |mut all, p| {
            all.merge(&p.datagrams_dropped);
            all
        }),
    }
}

/// What a finished run leaves to write up besides its peers' results,
/// whoever ran it: the simulator ([`Simulation::record`]) or the
/// real-time emulator.
#[derive(Clone, Copy)]
pub struct RunRecord<'a> {
    /// The scenario, its plan and the network with its counters.
    pub layout: Layout<'a>,
    /// The traced flows (`record.waits`).
    pub traced: &'a [Traced],
    /// Swarm progress over time.
    pub progress: &'a [ProgressSample],
    /// The cross-traffic flows.
    pub flows: &'a [CrossFlow],
    /// Bytes per flow over time.
    pub rates: &'a [RateSample],
    /// The live stream, when the scenario streams live.
    pub live: Option<&'a LiveStream>,
    /// Threads the run used (the simulator's partitions).
    pub threads: usize,
    /// Packets that arrived for a peer no longer there.
    pub to_absent: u64,
    /// What only a real-time run has: its CPU and scheduling figures.
    pub emulation: Option<&'a EmulationFigures>,
}

/// The figures of a run in real time (`ppspp lab emulate`) that the
/// simulator has no counterpart of.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EmulationFigures {
    /// CPU seconds the process used (user and system) over the run.
    pub cpu_s: f64,
    /// How late the shaper acted on the model's due events (µs): p50,
    /// p99, p99.9 and max.
    pub lateness_us: [u64; 4],
    /// Datagrams the nodes handed the shaper.
    pub datagrams_offered: u64,
    /// Datagrams it released to the kernel.
    pub datagrams_sent: u64,
    /// Datagrams the nodes' endpoints received (the model's deliveries
    /// that the kernel passed on, and any from outside the emulation).
    pub datagrams_received: u64,
    /// Datagrams to an address no node of the run had.
    pub datagrams_unknown: u64,
    /// How late the nodes' timers fired (µs), pooled over every peer:
    /// p50, p99, p99.9 and max.
    pub timer_lateness_us: [u64; 4],
    /// Each peer's p99 timer lateness (µs): the median peer's and the
    /// worst peer's.
    pub peer_p99_lateness_us: [u64; 2],
    /// Timer wakeups over all peers.
    pub timer_wakeups: u64,
}

/// `stalls.csv`: every viewer's stalls one by one — the chunk playback
/// stopped at, when (virtual seconds), until when and how long. A stall
/// still going on when the viewer left or the run ended (`run_end_s`) has
/// no end, and its duration runs to then, as `peers.csv`'s `stall_s`
/// counts it.
pub fn stalls_csv(peers: &[PeerResult], run_end_s: f64) -> String {
    let mut s = String::from("id,group,stall,chunk,start_s,end_s,duration_s\n");
    for p in peers {
        for (i, stall) in p.stalls.iter().enumerate() {
            let start = stall.start.as_micros() as f64 / 1e6;
            let end = stall.end.map(|e| e.as_micros() as f64 / 1e6);
            let until = end.unwrap_or(p.leave_s.unwrap_or(run_end_s));
            let _ = writeln!(
                s,
                "{},{},{},{},{:.6},{},{:.6}",
                p.id,
                p.group,
                i + 1,
                stall.chunk,
                start,
                opt(end),
                (until - start).max(0.0)
            );
        }
    }
    s
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.6}")).unwrap_or_default()
}

/// `peers.csv`.
pub fn peers_csv(peers: &[PeerResult]) -> String {
    let mut s = String::from(
        "id,group,role,join_s,leave_s,complete_s,download_s,bytes_down,\
         bytes_down_from_seeders,bytes_down_from_peers,bytes_up,chunks_rejected,\
         startup_s,stalls,stall_s,continuity,seeks,seek_waits,seek_wait_s,startup_bytes_s\n",
    );
    for p in peers {
        let role = match p.role {
            Role::Seeder => "seeder",
            Role::Leecher => "leecher",
            Role::Host => "host",
        };
        let dl = p.complete_s.zip(p.join_s).map(|(c, j)| c - j);
        let play = p.playback.map_or_else(
            || ",,,,,,".to_string(),
            |v| {
                format!(
                    "{},{},{:.6},{},{},{},{:.6}",
                    opt(v.startup_delay.map(|d| d.as_secs_f64())),
                    v.stalls,
                    v.stall_time.as_secs_f64(),
                    opt(v.continuity()),
                    v.seeks,
                    v.seek_waits,
                    v.seek_wait_time.as_secs_f64()
                )
            },
        );
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.id,
            p.group,
            role,
            opt(p.join_s),
            opt(p.leave_s),
            opt(p.complete_s),
            opt(dl),
            p.bytes_down,
            p.bytes_down_from_seeders,
            p.bytes_down_from_peers,
            p.bytes_up,
            p.chunks_rejected,
            play,
            opt(p.startup_bytes_s)
        );
    }
    s
}

/// `links.csv`: occupancy after every dequeue of the recorded links, each
/// by number and by name ([`Layout::link_names`]).
pub fn links_csv(rec: &RunRecord) -> String {
    let net = rec.layout.net;
    let names = rec.layout.link_names();
    let mut s = String::from("link,name,t_s,backlog_bytes,backlog_ms\n");
    for (i, name) in names.iter().enumerate() {
        let link = net.link(LinkId(i as u32));
        let (Some(samples), Some(c)) = (link.samples(), link.config().capacity_bps) else {
            continue;
        };
        for q in samples {
            let ms = q.backlog_bytes as f64 * 8.0 / c as f64 * 1e3;
            let _ = writeln!(
                s,
                "{i},{name},{:.6},{},{ms:.3}",
                q.at_us as f64 / 1e6,
                q.backlog_bytes
            );
        }
    }
    s
}

/// `waits.csv`: the queueing delay of every packet of each traced flow at
/// its link (`record.waits`), in order of arrival at the link.
pub fn waits_csv(rec: &RunRecord) -> String {
    let net = rec.layout.net;
    let mut s = String::from("link,name,flow,t_s,wait_ms\n");
    for (id, flow_id, name, flow) in rec.traced {
        for w in net.link(*id).flow_waits(*flow_id).unwrap_or_default() {
            let _ = writeln!(
                s,
                "{},{name},{flow},{:.6},{:.3}",
                id.0,
                w.at_us as f64 / 1e6,
                w.wait_us as f64 / 1e3
            );
        }
    }
    s
}

/// `traced_flows.csv`: what became of each traced flow's packets at its
/// link (`record.waits`): offered, dropped by the full queue, lost at
/// random, and the forwarded packets' mean wait. Seed paper 003 counts
/// video and BitTorrent drops apart at the router they share.
pub fn traced_flows_csv(rec: &RunRecord) -> String {
    let net = rec.layout.net;
    let mut s =
        String::from("link,name,flow,packets_in,drops_queue,drops_loss,drop_pct,mean_wait_ms\n");
    for (id, flow_id, name, flow) in rec.traced {
        let c = net.link(*id).flow_counts(*flow_id).unwrap_or_default();
        let dropped = c.drops_queue + c.drops_loss;
        let forwarded = c.packets_in - dropped;
        let _ = writeln!(
            s,
            "{},{name},{flow},{},{},{},{:.4},{:.3}",
            id.0,
            c.packets_in,
            c.drops_queue,
            c.drops_loss,
            100.0 * dropped as f64 / c.packets_in.max(1) as f64,
            c.sum_wait_us as f64 / 1e3 / forwarded.max(1) as f64
        );
    }
    s
}

/// `link_stats.csv`: the counters of every link, by number and by name.
pub fn link_stats_csv(rec: &RunRecord) -> String {
    let net = rec.layout.net;
    let names = rec.layout.link_names();
    let mut s = String::from(
        "link,name,capacity_bps,packets_in,bytes_out,drops_queue,drops_loss,mean_backlog_bytes,\
         max_backlog_bytes,mean_wait_ms\n",
    );
    for (i, name) in names.iter().enumerate() {
        let link = net.link(LinkId(i as u32));
        let st = link.stats();
        let mean_backlog = if st.dequeues > 0 {
            st.sum_backlog_bytes as f64 / st.dequeues as f64
        } else {
            0.0
        };
        let mean_wait = if st.packets_out > 0 {
            st.sum_wait_us as f64 / st.packets_out as f64 / 1e3
        } else {
            0.0
        };
        let _ = writeln!(
            s,
            "{i},{name},{},{},{},{},{},{mean_backlog:.1},{},{mean_wait:.3}",
            link.config().capacity_bps.unwrap_or(0),
            st.packets_in,
            st.bytes_out,
            st.drops_queue,
            st.drops_loss,
            st.max_backlog_bytes
        );
    }
    s
}

/// `progress.csv`.
pub fn progress_csv(rec: &RunRecord) -> String {
    let mut s = String::from("t_s,present,leechers,completed,mean_progress\n");
    for p in rec.progress {
        let _ = writeln!(
            s,
            "{:.3},{},{},{},{:.6}",
            p.t, p.present, p.leechers, p.completed, p.mean_progress
        );
    }
    s
}

/// `flows.csv`: one row per cross-traffic flow. UDP flows add what their
/// receiver saw: packets, losses, one-way delay, the time between
/// consecutive arrivals (a video's smoothness at the receiver, seed paper
/// 003's jitter) and RFC 3550's interarrival jitter, at the end and as
/// its mean over the flow (what the receiver's reports averaged); quantiles for CBR
/// flows, whose receivers keep every sample. A receiver counts a loss by
/// the gap below a later arrival: drops after the last arrival go unseen.
pub fn flows_csv(rec: &RunRecord) -> String {
    let mut s = String::from(
        "flow,kind,src_host,dst_host,packets_sent,bytes_delivered,tcp_retransmits,tcp_timeouts,\
         packets_received,lost,delay_mean_ms,delay_p95_ms,inter_arrival_mean_ms,\
         inter_arrival_p95_ms,inter_arrival_max_ms,jitter_ms,jitter_mean_ms\n",
    );
    let ms = |d: Option<std::time::Duration>| {
        d.map_or(String::new(), |d| format!("{:.3}", d.as_secs_f64() * 1e3))
    };
    for (i, f) in rec.flows.iter().enumerate() {
        let (re, to) = f.tcp_losses();
        let _ = write!(
            s,
            "{i},{:?},{},{},{},{},{re},{to}",
            f.kind,
            f.src.0,
            f.dst.0,
            f.packets_sent(),
            f.delivered()
        );
        match f.udp_stats() {
            Some(u) => {
                let gaps = &u.inter_arrival;
                let _ = writeln!(
                    s,
                    ",{},{},{},{},{},{},{},{:.3},{}",
                    u.packets,
                    u.lost(),
                    ms(u.delay.mean()),
                    ms(u.delay.quantile(0.95)),
                    ms(gaps.mean()),
                    ms(gaps.quantile(0.95)),
                    ms((gaps.count > 0).then_some(gaps.max)),
                    u.jitter_us / 1e3,
                    u.jitter_mean_us()
                        .map_or(String::new(), |j| format!("{:.3}", j / 1e3))
                );
            }
            None => s.push_str(",,,,,,,,,\n"),
        }
    }
    s
}

/// `rates.csv`: bytes delivered so far per flow at each sampling instant.
pub fn rates_csv(rec: &RunRecord) -> String {
    let mut s = String::from("t_s,flow,bytes\n");
    for r in rec.rates {
        let _ = writeln!(s, "{:.3},{},{}", r.t, r.flow, r.bytes);
    }
    s
}

/// A number for JSON: `null` when not finite (no data).
fn finite(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        json!(null)
    }
}

/// A [`spread`] as `{mean, p50, p95, max}`.
fn spread_json(v: [f64; 4]) -> serde_json::Value {
    json!({"mean": finite(v[0]), "p50": finite(v[1]), "p95": finite(v[2]), "max": finite(v[3])})
}

/// `{TYPE: {messages, bytes}}` for every message type sent.
fn messages_json(t: &MessageTally) -> serde_json::Value {
    let map: serde_json::Map<String, serde_json::Value> = t
        .iter()
        .map(|(ty, m, b)| (ty.name().to_string(), json!({"messages": m, "bytes": b})))
        .collect();
    serde_json::Value::Object(map)
}

/// The largest shares of the bytes sent, as `DATA 79.2 %, HAVE 13.6 %, …`
/// (at most `n` types): the one-line view of the control overhead.
pub fn message_shares(t: &MessageTally, n: usize) -> String {
    let total = t.total_bytes().max(1) as f64;
    let mut by: Vec<_> = t.iter().collect();
    by.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(&b.0)));
    by.iter()
        .take(n)
        .map(|(ty, _, b)| format!("{ty} {:.1} %", 100.0 * *b as f64 / total))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The live summary of a run that streams live.
pub fn live_summary(rec: &RunRecord, peers: &[PeerResult]) -> Option<LiveSummary> {
    let stream = rec.live?;
    live_metrics::summarize(peers, stream.clock, stream.bitrate)
}

/// `bittorrent.csv`: each BitTorrent peer's bytes by transport and its
/// connection counters (only the header when no peer runs BitTorrent).
pub fn bittorrent_csv(peers: &[PeerResult]) -> String {
    let mut out = String::from(
        "id,group,bytes_down_tcp,bytes_down_utp,bytes_up_tcp,bytes_up_utp,\
         connects,connect_failures,accepts,duplicates_closed,duplicate_blocks\n",
    );
    for p in peers {
        let Some(b) = &p.bittorrent else {
            continue;
        };
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            p.id,
            p.group,
            b.bytes_down_tcp,
            b.bytes_down_utp,
            b.bytes_up_tcp,
            b.bytes_up_utp,
            b.connects,
            b.connect_failures,
            b.accepts,
            b.duplicates_closed,
            b.duplicate_blocks
        ));
    }
    out
}

/// `live.csv` (only its header without a live stream).
pub fn live_csv(rec: &RunRecord, peers: &[PeerResult]) -> String {
    let clock = rec.live.map_or_else(
        || crate::live::MediaClock::new(ppspp_core::ChunkSize::DEFAULT, 1),
        |l| l.clock,
    );
    live_metrics::live_csv(peers, clock)
}

/// `summary.json`; `live` holds the live figures of a live run.
pub fn summary_json(sum: &Summary, rec: &RunRecord, live: Option<&LiveSummary>) -> String {
    let net = rec.layout.net.stats();
    let v = json!({
        "name": sum.name,
        "seed": sum.seed,
        "version": env!("CARGO_PKG_VERSION"),
        "trace_hash": sum.trace_hash,
        "trace_records": sum.trace_records,
        "events": sum.events,
        "virtual_s": sum.virtual_s,
        "wall_s": sum.wall_s,
        "threads": rec.threads,
        "events_per_s": sum.events as f64 / sum.wall_s.max(1e-9),
        "wall_per_virtual": sum.wall_s / sum.virtual_s.max(1e-9),
        "peers": sum.peers,
        "leechers": sum.leechers,
        "completed": sum.completed,
        "download_s": spread_json(sum.download_s),
        "playback": sum.playback.as_ref().map(|p| json!({
            "viewers": p.viewers,
            "started": p.started,
            "startup_s": spread_json(p.startup_s),
            "stalls_per_viewer": finite(p.mean_stalls),
            "stall_s_per_viewer": finite(p.mean_stall_s),
            "continuity": finite(p.mean_continuity),
            "seeks_per_viewer": finite(p.mean_seeks),
            "seek_waits_per_viewer": finite(p.mean_seek_waits),
            "seek_wait_s_per_viewer": finite(p.mean_seek_wait_s),
        })),
        "live": live.map(live_metrics::summary_json),
        "emulation": rec.emulation.map(|e| json!({
            "cpu_s": e.cpu_s,
            "cpu_cores": e.cpu_s / sum.wall_s.max(1e-9),
            "lateness_us": {
                "p50": e.lateness_us[0],
                "p99": e.lateness_us[1],
                "p999": e.lateness_us[2],
                "max": e.lateness_us[3],
            },
            "datagrams_offered": e.datagrams_offered,
            "datagrams_sent": e.datagrams_sent,
            "datagrams_received": e.datagrams_received,
            "datagrams_unknown": e.datagrams_unknown,
            "timer_lateness_us": {
                "p50": e.timer_lateness_us[0],
                "p99": e.timer_lateness_us[1],
                "p999": e.timer_lateness_us[2],
                "max": e.timer_lateness_us[3],
            },
            "peer_p99_lateness_us": {
                "median_peer": e.peer_p99_lateness_us[0],
                "worst_peer": e.peer_p99_lateness_us[1],
            },
            "timer_wakeups": e.timer_wakeups,
        })),
        "messages_sent": messages_json(&sum.messages_sent),
        "datagrams_dropped": sum
            .datagrams_dropped
            .by_reason()
            .into_iter()
            .map(|(why, n)| (why.to_string(), json!(n)))
            .collect::<serde_json::Map<_, _>>(),
        "packets": {
            "sent": net.sent,
            "delivered": net.delivered,
            "queue_drops": net.queue_drops,
            "lost": net.lost,
            "to_absent_peers": rec.to_absent,
        },
    });
    serde_json::to_string_pretty(&v).unwrap_or_default() + "\n"
}

/// The scenario as run (a sweep's folder holds the scenario it sweeps).
pub const SCENARIO_TOML: &str = "scenario.toml";

/// The files [`write`] puts in a run's folder, in the order it writes them
/// (the report adds [`crate::report::REPORT_HTML`] and plots).
pub const RUN_FILES: [&str; 13] = [
    SCENARIO_TOML,
    "peers.csv",
    "bittorrent.csv",
    "live.csv",
    "stalls.csv",
    "links.csv",
    "waits.csv",
    "traced_flows.csv",
    "link_stats.csv",
    "progress.csv",
    "flows.csv",
    "rates.csv",
    "summary.json",
];

/// Writes the results folder `dir` (created if needed). `scenario_text` is
/// the scenario as read; the seed used is recorded beside it.
pub fn write(
    dir: &Path,
    scenario_text: &str,
    rec: &RunRecord,
    summary: &Summary,
    peers: &[PeerResult],
) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let header = format!(
        "# As run by ppspp {} with seed {} (overrides the seed below).\n",
        env!("CARGO_PKG_VERSION"),
        summary.seed
    );
    // In the order of RUN_FILES.
    let live = live_summary(rec, peers);
    let texts = [
        header + scenario_text,
        peers_csv(peers),
        bittorrent_csv(peers),
        live_csv(rec, peers),
        stalls_csv(peers, summary.virtual_s),
        links_csv(rec),
        waits_csv(rec),
        traced_flows_csv(rec),
        link_stats_csv(rec),
        progress_csv(rec),
        flows_csv(rec),
        rates_csv(rec),
        summary_json(summary, rec, live.as_ref()),
    ];
    for (name, text) in RUN_FILES.iter().zip(texts) {
        fs::write(dir.join(name), text)?;
    }
    Ok(())
}
