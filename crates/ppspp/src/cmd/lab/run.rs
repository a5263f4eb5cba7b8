//! `ppspp lab run [SCENARIO] [--seed N] [--out DIR] [--check-determinism]`.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use ppspp_lab::outdir::{self, Writer};
use ppspp_lab::run::{run_with_threads, Outcome};
use ppspp_lab::scenario::{apply_overrides, Override, DEFAULT_NAME, DEFAULT_TEXT};

use crate::cmd::node::progress_bar;

/// Arguments of `ppspp lab run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario file (TOML); the built-in flash crowd when absent.
    pub scenario: Option<PathBuf>,
    /// Experiment seed (overrides the scenario's).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Results folder (default: lab-results/NAME-seedN): empty, or an
    /// earlier run's, whose files are replaced.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write into --out even if it holds files a run does not write: the
    /// run's own files are replaced, the others left alone.
    #[arg(long)]
    pub force: bool,
    /// Run twice and fail if the trace hash or any CSV differs.
    #[arg(long)]
    pub check_determinism: bool,
    /// Override a scenario key, e.g. `--set peers.near.count=200`
    /// (repeatable; the same dotted keys as `lab sweep`; an element of
    /// `[[peers]]` is named by its `name` or its index).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Override::parse)]
    pub set: Vec<Override>,
    /// Threads to run the simulation on (default: one per core); the
    /// results are the same with any number.
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print only the summary line (for sweeps).
    #[arg(long, hide = true)]
    pub quiet: bool,
}

/// The scenario's text and its name for messages: the file's, or the
/// built-in flash crowd's.
pub fn load(path: Option<&Path>) -> anyhow::Result<(String, String)> {
    match path {
        None => Ok((
            DEFAULT_TEXT.to_string(),
            format!("<built-in {DEFAULT_NAME}>"),
        )),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .with_context(|| format!("cannot read scenario {}", p.display()))?;
            Ok((text, p.display().to_string()))
        }
    }
}

fn once(
    text: &str,
    file: &str,
    seed: Option<u64>,
    threads: usize,
    out: Option<&Path>,
) -> anyhow::Result<Outcome> {
    let scenario = ppspp_lab::scenario::parse(text, file)?;
    let end = scenario.duration.0.as_secs_f64();
    let bar = progress_bar(
        (end * 10.0) as u64,
        "{spinner} virtual {msg} [{bar:30}] {percent}% wall {elapsed}",
    );
    let outcome = run_with_threads(text, file, seed, threads, out, |t| {
        let v = t.as_micros() as f64 / 1e6;
        bar.set_position((v * 10.0) as u64);
        bar.set_message(format!("{v:.1}s/{end:.0}s"));
    })?;
    bar.finish_and_clear();
    Ok(outcome)
}

/// Runs `ppspp lab run`.
pub fn run(a: &RunArgs) -> anyhow::Result<()> {
    let (text, file) = load(a.scenario.as_deref())?;
    let (text, scenario) = apply_overrides(&text, &file, &a.set)?;
    let seed = a.seed.unwrap_or(scenario.seed);
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("lab-results/{}-seed{seed}", scenario.name)));
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    // Before the run, not after: a refused folder costs no simulation.
    let left = outdir::prepare(&out, Writer::Run, a.force)?;
    if !left.is_empty() {
        eprintln!("left alone in {}: {}", out.display(), left.join(", "));
    }
    let first = once(&text, &file, Some(seed), threads, Some(&out))?;
    if a.quiet {
        println!("{}", first.summary.trace_hash);
    } else {
        print!("{}", super::table::render(&first.summary, Some(&out)));
        if let Some(l) = &first.live {
            print!("{}", super::table::render_live(l));
        }
    }
    if a.check_determinism {
        // The second run takes another number of threads: the results
        // must not depend on it either.
        let again = if threads > 1 { 1 } else { 2 };
        let second = once(&text, &file, Some(seed), again, None)?;
        let mut diffs = Vec::new();
        if first.summary.trace_hash != second.summary.trace_hash {
            diffs.push(format!(
                "trace_hash {} vs {}",
                first.summary.trace_hash, second.summary.trace_hash
            ));
        }
        for ((name, a), (_, b)) in first.csv.iter().zip(&second.csv) {
            if a != b {
                let line = a
                    .lines()
                    .zip(b.lines())
                    .position(|(x, y)| x != y)
                    .map_or(a.lines().count().min(b.lines().count()) + 1, |l| l + 1);
                diffs.push(format!("{name} differs from line {line}"));
            }
        }
        if !diffs.is_empty() {
            bail!("NOT DETERMINISTIC: two runs differ: {}", diffs.join("; "));
        }
        println!(
            "determinism   ok: a second run on {again} thread(s) gave the same trace hash and CSVs"
        );
    }
    if !a.quiet {
        println!(
            "report        {}",
            out.join(ppspp_lab::report::REPORT_HTML).display()
        );
    }
    if first.summary.nobody_completed() && !scenario.allow_incomplete {
        bail!(
            "none of the {} leechers completed in {:.1} s of virtual time (results in {}); \
             if that is expected, set `allow_incomplete = true` in the scenario",
            first.summary.leechers,
            first.summary.virtual_s,
            out.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `--set` example of `lab run --help` works on the default
    /// scenario (it once named a group the scenario does not have).
    #[test]
    fn the_help_set_example_runs_on_the_default_scenario() {
        let help = RunArgs::augment_args(clap::Command::new("run"))
            .render_long_help()
            .to_string();
        let example = help
            .split("e.g. `--set ")
            .nth(1)
            .and_then(|rest| rest.split('`').next())
            .expect("an example in the help");
        let o = Override::parse(example).unwrap();
        apply_overrides(DEFAULT_TEXT, "<built-in>", &[o]).unwrap();
    }
}
