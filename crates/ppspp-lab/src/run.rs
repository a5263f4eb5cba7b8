//! One run of a scenario, end to end: parse, simulate, write the results
//! folder. The CLI's `lab run` and the tests share this.

use std::path::Path;

use ppspp_core::time::Instant;

use crate::live::metrics::LiveSummary;
use crate::results::{self, Summary};
use crate::scenario::{self, ScenarioError};
use crate::sim::{BuildError, PeerResult, Simulation};

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The scenario is wrong (its own message, not repeated as a source).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// The simulation could not be built (the reason is the source, not
    /// repeated in the message).
    #[error("cannot build the simulation")]
    Build(#[from] BuildError),
    /// The results could not be written (the I/O error is the source,
    /// not repeated in the message).
    #[error("cannot write results")]
    Io(#[from] std::io::Error),
}

/// What a run produced, in memory.
pub struct Outcome {
    /// The headline figures.
    pub summary: Summary,
    /// Per-peer results.
    pub peers: Vec<PeerResult>,
    /// The CSV files, by name, as written (for comparisons).
    pub csv: Vec<(&'static str, String)>,
    /// The live figures, when the scenario streams live.
    pub live: Option<LiveSummary>,
}

/// Runs the scenario `text` (named `file` in errors) with `seed` (or its
/// own) on one thread, writing the results folder to `out` if given.
/// `tick` sees virtual time as the run goes.
pub fn run(
    text: &str,
    file: &str,
    seed: Option<u64>,
    out: Option<&Path>,
    tick: impl FnMut(Instant),
) -> Result<Outcome, RunError> {
    run_with_threads(text, file, seed, 1, out, tick)
}

/// As [`run`], on up to `threads` threads; the outcome is the same.
pub fn run_with_threads(
    text: &str,
    file: &str,
    seed: Option<u64>,
    threads: usize,
    out: Option<&Path>,
    tick: impl FnMut(Instant),
) -> Result<Outcome, RunError> {
    let scenario = scenario::parse(text, file)?;
    let mut sim = Simulation::with_threads(scenario, seed, threads)?;
    // Wall time is only reported, never fed to the simulation.
    let started = std::time::Instant::now();
    sim.run(tick);
    let wall = started.elapsed().as_secs_f64();
    let (summary, peers) = results::summarize(&mut sim, wall);
    let rec = sim.record();
    if let Some(dir) = out {
        results::write(dir, text, &rec, &summary, &peers)?;
        crate::report::write_report(dir)?;
    }
    let live = results::live_summary(&rec, &peers);
    let csv = vec![
        ("peers.csv", results::peers_csv(&peers)),
        ("bittorrent.csv", results::bittorrent_csv(&peers)),
        ("live.csv", results::live_csv(&rec, &peers)),
        ("stalls.csv", results::stalls_csv(&peers, summary.virtual_s)),
        ("progress.csv", results::progress_csv(&rec)),
        ("links.csv", results::links_csv(&rec)),
        ("waits.csv", results::waits_csv(&rec)),
        ("traced_flows.csv", results::traced_flows_csv(&rec)),
        ("link_stats.csv", results::link_stats_csv(&rec)),
        ("flows.csv", results::flows_csv(&rec)),
        ("rates.csv", results::rates_csv(&rec)),
    ];
    Ok(Outcome {
        summary,
        peers,
        csv,
        live,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::DEFAULT_TEXT;

    #[test]
    fn a_build_error_is_the_cause_told_once() {
        let mut s = scenario::parse(DEFAULT_TEXT, "fc.toml").unwrap();
        s.content.hash = "md5".into();
        let e = RunError::from(Simulation::new(s, None).err().expect("refused"));
        assert_eq!(e.to_string(), "cannot build the simulation");
        let cause = std::error::Error::source(&e).expect("the cause");
        assert_eq!(cause.to_string(), "unknown hash function md5");
        assert!(cause.source().is_none());
    }
}
