//! `ppspp lab emulate [SCENARIO] [--seed N] [--out DIR]`: a scenario in
//! real time, every peer a real node on its own loopback address, the
//! datagrams shaped by the lab's network model (`ppspp_emu`). It writes
//! the same results folder and report as `ppspp lab run`.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use ppspp_lab::outdir::{self, Writer};
use ppspp_lab::scenario::{apply_overrides, Override};

use super::run::load;
use crate::cmd::node::progress_bar;

/// Arguments of `ppspp lab emulate`.
#[derive(Debug, Args)]
pub struct EmulateArgs {
    /// Scenario file (TOML); the built-in flash crowd when absent.
    pub scenario: Option<PathBuf>,
    /// Experiment seed (overrides the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Results folder (default: lab-results/NAME-seedN-emulated): empty, or
    /// an earlier run's, whose files are replaced.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into --out even if it holds files a run does not write.
    #[arg(long)]
    pub force: bool,
    /// Override a scenario key, as `lab run --set` does.
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Override::parse)]
    pub set: Vec<Override>,
    /// Runtime worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Runs `ppspp lab emulate`.
pub fn run(a: &EmulateArgs) -> anyhow::Result<()> {
    let (text, file) = load(a.scenario.as_deref())?;
    let (text, scenario) = apply_overrides(&text, &file, &a.set)?;
    let seed = a.seed.unwrap_or(scenario.seed);
    // Refused before anything is written or started.
    ppspp_emu::refuse::check(&scenario).with_context(|| format!("cannot emulate {file}"))?;
    let out = a.out.clone().unwrap_or_else(|| {
        PathBuf::from(format!("lab-results/{}-seed{seed}-emulated", scenario.name))
    });
    let left = outdir::prepare(&out, Writer::Run, a.force)?;
    if !left.is_empty() {
        eprintln!("left alone in {}: {}", out.display(), left.join(", "));
    }
    // One socket per peer, and the runtime's own: more than the usual
    // soft limit of 1,024 from a few hundred peers on.
    let _ = rlimit::increase_nofile_limit(u64::MAX);
    let mut rt = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = a.threads {
        rt.worker_threads(n.max(1));
    }
    let rt = rt
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    let end = scenario.duration.0.as_secs_f64();
    let bar = progress_bar(
        (end * 10.0) as u64,
        "{spinner} wall {msg} [{bar:30}] {percent}%",
    );
    let (summary, figures, live) = rt.block_on(async {
        let started = std::time::Instant::now();
        let ticker = {
            let bar = bar.clone();
            tokio::spawn(async move {
                let mut every = tokio::time::interval(std::time::Duration::from_millis(200));
                loop {
                    every.tick().await;
                    let v = started.elapsed().as_secs_f64().min(end);
                    bar.set_position((v * 10.0) as u64);
                    bar.set_message(format!("{v:.1}s/{end:.0}s"));
                }
            })
        };
        let outcome = ppspp_emu::emulate::run(scenario.clone(), seed).await;
        ticker.abort();
        let outcome = outcome.with_context(|| format!("cannot emulate {file}"))?;
        let (summary, peers) = ppspp_emu::results::write(&out, &text, &outcome)
            .with_context(|| format!("cannot write results to {}", out.display()))?;
        let failed: Vec<String> = outcome
            .peers
            .iter()
            .filter_map(|p| Some(format!("host {}: {}", p.host, p.failed.as_ref()?)))
            .collect();
        if !failed.is_empty() {
            eprintln!(
                "{} node(s) could not start, first: {}",
                failed.len(),
                failed[0]
            );
        }
        let figures = outcome.figures();
        let live = ppspp_lab::results::live_summary(&outcome.record(&figures), &peers);
        anyhow::Ok((summary, figures, live))
    })?;
    bar.finish_and_clear();
    print!(
        "{}",
        super::table::render_emulated(&summary, &figures, Some(&out))
    );
    if let Some(l) = &live {
        print!("{}", super::table::render_live(l));
    }
    println!(
        "report        {}",
        out.join(ppspp_lab::report::REPORT_HTML).display()
    );
    if summary.nobody_completed() && !scenario.allow_incomplete {
        bail!(
            "none of the {} leechers completed in {:.1} s (results in {}); \
             if that is expected, set `allow_incomplete = true` in the scenario",
            summary.leechers,
            summary.wall_s,
            out.display()
        );
    }
    Ok(())
}
