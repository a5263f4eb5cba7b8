//! `ppspp lab sweep SCENARIO|FOLDER [--set key=v1,v2,...] [--algorithms
//! a,b,...] --seeds K [--jobs N]`: every grid point × seed runs as its own
//! `ppspp lab run` process; one table (`sweep.csv`) gathers them. A folder
//! is a family of scenarios ([`ppspp_lab::family`]), swept one scenario
//! after another as the first axis, `scenario`.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;

use anyhow::{bail, Context};
use clap::Args;
use ppspp_core::pick::PickerKind;
use ppspp_lab::family::{Family, FAMILY_TOML};
use ppspp_lab::outdir::{self, Writer};
use ppspp_lab::results::SCENARIO_TOML;
use ppspp_lab::scenario::{apply_overrides, Override};
use ppspp_lab::sweep::{grid, set_leecher_algorithm, Axis, ALGORITHM_AXIS, SCENARIO_AXIS};

/// Arguments of `ppspp lab sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Scenario file (TOML), or a folder of them: a family, every `*.toml`
    /// in it swept in turn (the first axis, `scenario`), e.g.
    /// `scenarios/vod-family`.
    pub scenario: PathBuf,
    /// A parameter axis: dotted key and values (repeatable), e.g.
    /// `--set peers.near.count=10,20` or `--set content.size=5MB,10MB`;
    /// over a family, set in every scenario.
    #[arg(long = "set", value_parser = Axis::parse)]
    pub axes: Vec<Axis>,
    /// Download algorithms to compare (the `algorithm` axis), each set on
    /// every leecher group of the scenario (or of every scenario of the
    /// family), e.g. `--algorithms linear,std-vod,swift-vod`.
    #[arg(long, value_delimiter = ',')]
    pub algorithms: Vec<PickerKind>,
    /// Seeds 1..=K per grid point.
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Runs at once (default: the number of CPUs).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Results folder (default: lab-results/NAME-sweep); it must be empty
    /// unless --force.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Sweep into a folder that is not empty: first remove what a sweep
    /// writes there (its tables, page, plots, runs/runNNNN and
    /// runs/pointNNN.toml), leaving any other file alone.
    #[arg(long)]
    pub force: bool,
}

struct Job {
    index: usize,
    /// The point's value of each axis, in `sweep.csv`'s order.
    values: Vec<String>,
    seed: u64,
    dir: PathBuf,
}

/// The scenarios a sweep starts from: one file's, or a family's, with the
/// file names errors name.
struct Bases {
    /// The family, for a folder.
    family: Option<Family>,
    /// `(name, text, file)` of each scenario.
    scenarios: Vec<(String, String, String)>,
}

fn bases(path: &Path) -> anyhow::Result<Bases> {
    if path.is_dir() {
        let (family, texts) = Family::read(path)?;
        let scenarios = family
            .scenarios
            .iter()
            .zip(texts)
            .map(|(m, text)| {
                let file = path.join(&m.file).display().to_string();
                (m.name.clone(), text, file)
            })
            .collect();
        return Ok(Bases {
            family: Some(family),
            scenarios,
        });
    }
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let file = path.display().to_string();
    let base = ppspp_lab::scenario::parse(&text, &file)?;
    Ok(Bases {
        family: None,
        scenarios: vec![(base.name, text, file)],
    })
}

/// Every point of the sweep: its scenario text and its value of each axis
/// (scenario for a family, then algorithm, then the `--set` axes). A bad
/// point is refused here, before anything is removed or runs; its error
/// names the override, not a line of the point's file.
fn points(a: &SweepArgs, b: &Bases) -> anyhow::Result<Vec<(String, Vec<String>)>> {
    let algorithms: Vec<Option<PickerKind>> = if a.algorithms.is_empty() {
        vec![None]
    } else {
        a.algorithms.iter().copied().map(Some).collect()
    };
    let mut out = Vec::new();
    for (name, text, file) in &b.scenarios {
        for algorithm in &algorithms {
            let mut values = Vec::new();
            if b.family.is_some() {
                values.push(name.clone());
            }
            let text = match algorithm {
                Some(k) => {
                    values.push(k.name().to_string());
                    set_leecher_algorithm(text, k.name())
                        .with_context(|| format!("{file}: --algorithms {k}"))?
                }
                None => text.clone(),
            };
            for point in grid(&a.axes) {
                let (t, _) = apply_overrides(&text, file, &point)?;
                let mut v = values.clone();
                v.extend(point.iter().map(|o: &Override| o.value.clone()));
                out.push((t, v));
            }
        }
    }
    Ok(out)
}

fn start(exe: &Path, scenario: &Path, job: &Job, threads: usize) -> anyhow::Result<Child> {
    Command::new(exe)
        .args(["lab", "run"])
        .arg(scenario)
        .args(["--seed", &job.seed.to_string(), "--quiet"])
        .args(["--threads", &threads.to_string(), "--out"])
        .arg(&job.dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot start a run")
}

fn field(v: &serde_json::Value, path: &[&str]) -> String {
    let mut x = v;
    for p in path {
        x = &x[*p];
    }
    match x {
        serde_json::Value::Number(n) if n.is_u64() || n.is_i64() => n.to_string(),
        serde_json::Value::Number(n) => n.as_f64().map(|f| format!("{f:.3}")).unwrap_or_default(),
        serde_json::Value::String(s) => s.clone(),
        _ => String::new(),
    }
}

/// Runs `ppspp lab sweep`.
pub fn run(a: &SweepArgs) -> anyhow::Result<()> {
    let b = bases(&a.scenario)?;
    let name = match &b.family {
        Some(f) => f.name.clone(),
        None => b.scenarios[0].0.clone(),
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("lab-results/{name}-sweep")));
    let points = points(a, &b)?;
    let left = outdir::prepare(&out, Writer::Sweep, a.force)?;
    if !left.is_empty() {
        eprintln!("left alone in {}: {}", out.display(), left.join(", "));
    }
    std::fs::create_dir_all(out.join(outdir::RUNS_DIR))?;
    // What was swept, for the record and for the report's title.
    match &b.family {
        Some(f) => std::fs::write(out.join(FAMILY_TOML), f.to_toml())?,
        None => std::fs::write(out.join(SCENARIO_TOML), &b.scenarios[0].1)?,
    }
    let mut jobs = VecDeque::new();
    for (p, (t, values)) in points.into_iter().enumerate() {
        let file = outdir::point_file(&out, p);
        std::fs::write(&file, &t)?;
        for seed in 1..=a.seeds.max(1) {
            let index = jobs.len();
            jobs.push_back((
                file.clone(),
                Job {
                    index,
                    values: values.clone(),
                    seed,
                    dir: outdir::run_dir(&out, index as u64),
                },
            ));
        }
    }
    let total = jobs.len();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parallel = a.jobs.unwrap_or(cores).max(1);
    // The cores left to each run beyond one per job.
    let threads = (cores / parallel).max(1);
    let exe = std::env::current_exe()?;
    // Each run is waited for on its own thread, which reads its output as
    // it comes (a run logging much cannot fill its pipe and stall) and
    // reports when it ends: a slot is refilled as soon as any run ends,
    // not when the oldest does (a family's runs differ in length, E1 at
    // 208 viewers against 32, by ten times).
    let (ended_tx, ended) = mpsc::channel::<(Job, std::io::Result<Output>)>();
    let mut running = 0;
    let mut done: Vec<Job> = Vec::new();
    let mut failed = Vec::new();
    while !jobs.is_empty() || running > 0 {
        while running < parallel {
            let Some((file, job)) = jobs.pop_front() else {
                break;
            };
            let child = start(&exe, &file, &job, threads)?;
            let tx = ended_tx.clone();
            std::thread::spawn(move || {
                let _ = tx.send((job, child.wait_with_output()));
            });
            running += 1;
        }
        let (job, output) = ended
            .recv()
            .context("a run's waiter ended without a word")?;
        running -= 1;
        let output = output?;
        eprintln!(
            "run {}/{total} (seed {}) {}",
            job.index + 1,
            job.seed,
            if output.status.success() {
                "done"
            } else {
                "FAILED"
            }
        );
        if !output.status.success() {
            let why = String::from_utf8_lossy(&output.stderr).trim().to_string();
            failed.push((job.index, why));
        }
        done.push(job);
    }
    done.sort_by_key(|j| j.index);
    let mut keys: Vec<String> = Vec::new();
    if b.family.is_some() {
        keys.push(SCENARIO_AXIS.into());
    }
    if !a.algorithms.is_empty() {
        keys.push(ALGORITHM_AXIS.into());
    }
    keys.extend(a.axes.iter().map(|x| x.key.clone()));
    let mut csv = String::from("run,");
    for k in &keys {
        let _ = write!(csv, "{k},");
    }
    csv.push_str(
        "seed,leechers,completed,download_mean_s,download_p50_s,download_p95_s,\
         startup_mean_s,startup_p95_s,stalls_per_viewer,stall_s_per_viewer,continuity,\
         seeks_per_viewer,seek_wait_s_per_viewer,live_continuity,lag_p50_s,lag_p95_s,\
         skips_per_viewer,source_upload_x,virtual_s,wall_s,trace_hash\n",
    );
    for job in &done {
        let summary = std::fs::read_to_string(job.dir.join("summary.json")).unwrap_or_default();
        let v: serde_json::Value = serde_json::from_str(&summary).unwrap_or_default();
        let _ = write!(csv, "{},", job.index);
        for v in &job.values {
            let _ = write!(csv, "{v},");
        }
        let cols = [
            vec!["leechers"],
            vec!["completed"],
            vec!["download_s", "mean"],
            vec!["download_s", "p50"],
            vec!["download_s", "p95"],
            vec!["playback", "startup_s", "mean"],
            vec!["playback", "startup_s", "p95"],
            vec!["playback", "stalls_per_viewer"],
            vec!["playback", "stall_s_per_viewer"],
            vec!["playback", "continuity"],
            vec!["playback", "seeks_per_viewer"],
            vec!["playback", "seek_wait_s_per_viewer"],
            vec!["live", "continuity", "mean"],
            vec!["live", "lag_s", "p50"],
            vec!["live", "lag_s", "p95"],
            vec!["live", "skips_per_viewer"],
            vec!["live", "source_upload_x"],
            vec!["virtual_s"],
            vec!["wall_s"],
            vec!["trace_hash"],
        ];
        let row: Vec<String> = cols.iter().map(|c| field(&v, c)).collect();
        let _ = writeln!(csv, "{},{}", job.seed, row.join(","));
    }
    std::fs::write(out.join(ppspp_lab::report::SWEEP_CSV), &csv)?;
    print!("{csv}");
    ppspp_lab::report::write_sweep_report(&out)
        .with_context(|| format!("cannot write the sweep report in {}", out.display()))?;
    println!(
        "results in {} (report: {})",
        out.display(),
        out.join(ppspp_lab::report::SWEEP_HTML).display()
    );
    if !failed.is_empty() {
        failed.sort();
        let lines: Vec<String> = failed
            .iter()
            .map(|(run, why)| format!("run {run}: {why}"))
            .collect();
        bail!(
            "{} of {total} runs failed:\n{}",
            failed.len(),
            lines.join("\n")
        );
    }
    Ok(())
}
