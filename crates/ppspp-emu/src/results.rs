//! An emulation's results folder: the same files and report as a
//! simulated run's (`ppspp_lab::results`), from the real nodes' reports
//! and the shaper's model, plus what only a real-time run has (CPU time,
//! the shaper's scheduling lateness), in `summary.json`'s `emulation`.
//!
//! What the folder holds that a simulated run's fills and this one leaves
//! empty: `flows.csv` and the cross-traffic rows of `rates.csv` (cross
//! traffic is refused, [`crate::refuse`]). The summary
//! has no trace hash (a real run has no trace to hash) and counts as
//! "events" the datagrams the model carried.

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::path::Path;

use ppspp_lab::live::metrics::as_playback_stats;
use ppspp_lab::live::MediaClock;
use ppspp_lab::results::{self, EmulationFigures, RunClock, RunRecord, Summary};
use ppspp_lab::scenario::Role;
use ppspp_lab::sim::names::Layout;
use ppspp_lab::sim::PeerResult;
use ppspp_udp::TimerLateness;

use crate::emulate::{EmuPeer, Outcome};

impl Outcome {
    /// Every peer's results, as the simulator gives them
    /// ([`ppspp_lab::sim::Simulation::results`]).
    pub fn peer_results(&self) -> Vec<PeerResult> {
        let seeders: HashMap<SocketAddr, bool> = self
            .addrs
            .iter()
            .zip(&self.plans)
            .filter_map(|(a, p)| Some(((*a)?, p.role == Role::Seeder)))
            .collect();
        self.peers
            .iter()
            .map(|p| peer_result(p, &seeders, self.live.as_ref().map(|l| l.clock)))
            .collect()
    }

    /// The emulation's own figures.
    pub fn figures(&self) -> EmulationFigures {
        let h = &self.shaper.lateness_us;
        let s = &self.shaper.stats;
        let timers: Vec<&TimerLateness> = self
            .peers
            .iter()
            .filter_map(|p| Some(&p.report.as_ref()?.timers))
            .collect();
        let mut pooled = TimerLateness::default().histogram().clone();
        for t in &timers {
            // Same bounds everywhere: adding cannot fail.
            let _ = pooled.add(t.histogram());
        }
        let mut p99: Vec<u64> = timers.iter().map(|t| t.quantile_us(0.99)).collect();
        p99.sort_unstable();
        let q = |x: f64| {
            if pooled.is_empty() {
                0
            } else {
                pooled.value_at_quantile(x)
            }
        };
        EmulationFigures {
            timer_lateness_us: [q(0.5), q(0.99), q(0.999), pooled.max()],
            peer_p99_lateness_us: [
                p99.get(p99.len() / 2).copied().unwrap_or(0),
                p99.last().copied().unwrap_or(0),
            ],
            timer_wakeups: pooled.len(),
            cpu_s: self.cpu_s.unwrap_or(f64::NAN),
            lateness_us: [
                h.value_at_quantile(0.5),
                h.value_at_quantile(0.99),
                h.value_at_quantile(0.999),
                h.max(),
            ],
            datagrams_offered: s.offered,
            datagrams_sent: s.sent,
            datagrams_received: self
                .peers
                .iter()
                .filter_map(|p| Some(p.report.as_ref()?.endpoint.datagrams_received))
                .sum(),
            datagrams_unknown: s.unknown,
        }
    }

    /// The run's record for [`results::write`]; `figures` from
    /// [`Outcome::figures`].
    pub fn record<'a>(&'a self, figures: &'a EmulationFigures) -> RunRecord<'a> {
        RunRecord {
            layout: Layout {
                scenario: &self.scenario,
                plans: &self.plans,
                net: &self.shaper.net,
            },
            traced: &self.traced,
            progress: &self.progress,
            flows: &[],
            rates: &self.rates,
            live: self.live.as_ref(),
            threads: tokio::runtime::Handle::try_current().map_or(1, |h| h.metrics().num_workers()),
            to_absent: 0,
            emulation: Some(figures),
        }
    }

    /// The headline figures of the run, from `peers`
    /// ([`Outcome::peer_results`]).
    pub fn summary(&self, peers: &[PeerResult]) -> Summary {
        let clock = RunClock {
            events: self.shaper.stats.offered,
            run_s: self.wall_s,
            wall_s: self.wall_s,
        };
        let name = self.scenario.name.clone();
        results::summarize_peers(name, self.seed, (String::new(), 0), clock, peers)
    }
}

/// Peer `p`'s results; `seeders` says which addresses are seeders';
/// `clock`: a live stream's media clock.
fn peer_result(
    p: &EmuPeer,
    seeders: &HashMap<SocketAddr, bool>,
    clock: Option<MediaClock>,
) -> PeerResult {
    let report = p.report.as_ref();
    let stats = report.map(|r| r.stats.clone()).unwrap_or_default();
    let from_seeders: u64 = stats
        .peers
        .iter()
        .filter(|(a, _)| seeders.get(a).copied().unwrap_or(false))
        .map(|(_, s)| s.payload_bytes_received)
        .sum();
    let vod = report.and_then(|r| r.playback.as_ref());
    // A live viewer's figures are its live player's, in on-demand terms as
    // the simulator gives them. (Its node's clock is the run's, so its
    // stall times need no shifting.)
    let live_play = p.live.as_ref().and_then(|l| l.playback.as_ref());
    let (playback, stalls) = match (live_play, clock) {
        (Some(l), Some(c)) => (Some(as_playback_stats(l, c)), p.live_stalls.clone()),
        _ => (
            vod.map(|v| v.stats),
            vod.map_or_else(Vec::new, |v| v.stalls.clone()),
        ),
    };
    PeerResult {
        id: p.host,
        group: p.group.clone(),
        role: p.role,
        join_s: p.join_s,
        leave_s: p.leave_s,
        complete_s: p.complete_s,
        startup_bytes_s: p.startup_bytes_s,
        bytes_down: stats.payload_bytes_received,
        bytes_down_from_seeders: from_seeders,
        bytes_down_from_peers: stats.payload_bytes_received - from_seeders,
        bytes_up: stats.payload_bytes_sent,
        chunks_rejected: stats.chunks_rejected,
        playback,
        stalls,
        messages_sent: report.map(|r| r.endpoint.messages_sent).unwrap_or_default(),
        datagrams_dropped: report
            .map(|r| r.endpoint.dropped.clone())
            .unwrap_or_default(),
        live: p.live.clone(),
        bittorrent: None,
    }
}

/// Writes `outcome`'s results folder `dir` and its report, as `ppspp lab
/// run` writes a simulated run's; `scenario_text` is the scenario as read.
/// Returns the summary and the peers' results.
pub fn write(
    dir: &Path,
    scenario_text: &str,
    outcome: &Outcome,
) -> io::Result<(Summary, Vec<PeerResult>)> {
    let peers = outcome.peer_results();
    let summary = outcome.summary(&peers);
    let figures = outcome.figures();
    results::write(
        dir,
        scenario_text,
        &outcome.record(&figures),
        &summary,
        &peers,
    )?;
    ppspp_lab::report::write_report(dir)?;
    Ok((summary, peers))
}
