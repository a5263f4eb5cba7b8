//! Plots and the HTML report of a results folder.
//!
//! [`write_report`] reads the files a run leaves in its results folder
//! (see [`crate::results`]) and writes beside them `plots/completion_cdf.svg`,
//! `plots/progress.svg`, `plots/queue_ccdf.svg` (when a link was recorded),
//! `plots/wait_ccdf.svg` (when a flow was traced) and `report.html`, a
//! self-contained page (inline CSS, no scripts) that embeds the plots by
//! relative path. Missing or empty inputs give "no data" notes instead of
//! errors (a folder with no result file at all is refused), and malformed
//! CSV rows are skipped (and counted in the notes).

mod csv;
mod html;
mod plots;
mod stats;
mod sweep;
mod sweep_md;
mod sweep_page;
mod sweep_plots;
#[cfg(test)]
mod tests;

use std::fs;
use std::io;
use std::path::Path;

use serde_json::Value;

pub use csv::split_line;
pub use html::escape;
pub use stats::{ccdf, cdf, quantile, steps};
pub use sweep_page::{
    is_sweep_plot, write_sweep_report, SWEEP_CSV, SWEEP_HTML, SWEEP_SUMMARY_CSV, SWEEP_SUMMARY_MD,
};

use crate::results::{RUN_FILES, SCENARIO_TOML};
use plots::Line;

/// The page [`write_report`] writes into the results folder.
pub const REPORT_HTML: &str = "report.html";
/// The folder (inside the results folder) the plots are written to.
pub const PLOTS_DIR: &str = "plots";
/// Download-time CDF per peer group.
pub const COMPLETION_CDF_SVG: &str = "completion_cdf.svg";
/// Swarm progress over time.
pub const PROGRESS_SVG: &str = "progress.svg";
/// Queue-occupancy CCDF per recorded link.
pub const QUEUE_CCDF_SVG: &str = "queue_ccdf.svg";
/// Queueing-delay CCDF per traced flow.
pub const WAIT_CCDF_SVG: &str = "wait_ccdf.svg";
/// Every plot a run's report may draw.
pub const RUN_PLOTS: [&str; 4] = [
    COMPLETION_CDF_SVG,
    PROGRESS_SVG,
    QUEUE_CCDF_SVG,
    WAIT_CCDF_SVG,
];

/// How many links the drops table lists.
const TOP_LINKS: usize = 10;

/// Reads `summary.json`; `None` (with a note) when missing or not a JSON
/// object.
fn read_summary(path: &Path, notes: &mut Vec<String>) -> Option<Value> {
    let text = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            notes.push("summary.json: not found".into());
            return None;
        }
        Err(e) => {
            notes.push(format!("summary.json: unreadable ({e})"));
            return None;
        }
    };
    match serde_json::from_slice::<Value>(&text) {
        Ok(v @ Value::Object(_)) => Some(v),
        Ok(_) => {
            notes.push("summary.json: not a JSON object".into());
            None
        }
        Err(e) => {
            notes.push(format!("summary.json: malformed ({e})"));
            None
        }
    }
}

/// Reads `scenario.toml` as text (invalid UTF-8 replaced).
fn read_scenario(path: &Path, notes: &mut Vec<String>) -> Option<String> {
    match fs::read(path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) => {
            notes.push(if e.kind() == io::ErrorKind::NotFound {
                "scenario.toml: not found".into()
            } else {
                format!("scenario.toml: unreadable ({e})")
            });
            None
        }
    }
}

/// The page title: the scenario name from the summary, else from the
/// scenario text, else a generic title.
fn title(summary: Option<&Value>, scenario: Option<&str>) -> String {
    let from_summary = summary
        .and_then(|s| s.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    from_summary
        .or_else(|| scenario_name(scenario?))
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| "ppspp lab report".into())
}

/// The `name` of the scenario `text`, if it reads as TOML and has one.
fn scenario_name(text: &str) -> Option<String> {
    let table: toml::Table = toml::from_str(text).ok()?;
    table.get("name")?.as_str().map(str::to_string)
}

/// Writes a plot, or a stand-in SVG (and a note) if drawing failed.
fn write_plot(
    dir: &Path,
    file: &str,
    title: &str,
    drawn: plots::PlotResult,
    notes: &mut Vec<String>,
) -> io::Result<()> {
    let svg = drawn.unwrap_or_else(|e| {
        notes.push(format!("{PLOTS_DIR}/{file}: drawing failed ({e})"));
        plots::fallback_svg(title, &format!("drawing failed: {e}"))
    });
    fs::write(dir.join(PLOTS_DIR).join(file), svg)
}

/// Removes the plot `file` if an earlier report drew it.
fn remove_plot(dir: &Path, file: &str) -> io::Result<()> {
    match fs::remove_file(dir.join(PLOTS_DIR).join(file)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Reads the results folder `dir` and writes its plots (under
/// [`PLOTS_DIR`]) and [`REPORT_HTML`] into it.
///
/// Inputs: `scenario.toml`, `summary.json`, `peers.csv`, `progress.csv`,
/// `links.csv` (streamed; at most about a million samples per link are
/// kept, evenly spread) and `link_stats.csv`. Any of them may be missing
/// or empty; the page then says so. Errors when `dir` is not a directory,
/// holds none of a run's result files, or an output cannot be written.
pub fn write_report(dir: &Path) -> io::Result<()> {
    if !dir.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "not a results folder (no such directory)",
        ));
    }
    // A page of "no data" notes for a folder that never held a run (a
    // mistyped path, the parent of the results) would pass for a report.
    let results: Vec<&str> = RUN_FILES
        .into_iter()
        .filter(|f| *f != SCENARIO_TOML)
        .collect();
    if !results.iter().any(|f| dir.join(f).is_file()) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "no results to report (none of {}, nor {SWEEP_CSV})",
                results.join(", ")
            ),
        ));
    }
    let mut notes = Vec::new();
    let summary = read_summary(&dir.join("summary.json"), &mut notes);
    let scenario = read_scenario(&dir.join("scenario.toml"), &mut notes);

    let (peers, src) = csv::read_peers(&dir.join("peers.csv"));
    notes.extend(src.note("peers.csv"));
    let (progress, src) = csv::read_progress(&dir.join("progress.csv"));
    notes.extend(src.note("progress.csv"));
    let (link_stats, stats_src) = csv::read_link_stats(&dir.join("link_stats.csv"));
    notes.extend(stats_src.note("link_stats.csv"));
    let (samples, src) = csv::read_link_samples(&dir.join("links.csv"), csv::SAMPLE_CAP);
    notes.extend(src.note("links.csv"));
    let (waits, src) = csv::read_wait_samples(&dir.join("waits.csv"), csv::SAMPLE_CAP);
    // No traced flow is the usual case (and older folders have no file):
    // only a damaged file is worth a note.
    if !matches!(
        src,
        csv::Source::Missing
            | csv::Source::Read {
                rows: 0,
                skipped: 0
            }
    ) {
        notes.extend(src.note("waits.csv"));
    }

    fs::create_dir_all(dir.join(PLOTS_DIR))?;

    // Download-time CDF per group.
    let groups = stats::group_stats(&peers);
    let cdf_lines: Vec<Line> = groups
        .iter()
        .filter(|g| g.leechers > 0)
        .map(|g| Line {
            label: format!("{} ({}/{} done)", g.group, g.times.len(), g.leechers),
            points: cdf(&g.times, g.leechers),
        })
        .collect();
    let drawn = plots::completion_cdf_svg(&cdf_lines);
    write_plot(
        dir,
        COMPLETION_CDF_SVG,
        "Download time CDF",
        drawn,
        &mut notes,
    )?;

    // Progress: completed as a fraction of all the scenario's leechers
    // (leechers that left stay counted as completed), else of the present.
    let all_leechers = summary
        .as_ref()
        .and_then(|s| s.get("leechers"))
        .and_then(Value::as_u64)
        .filter(|&n| n > 0)
        .or_else(|| {
            let n = peers.iter().filter(|p| p.leecher).count() as u64;
            (n > 0).then_some(n)
        });
    let series = |f: &dyn Fn(&csv::ProgressRow) -> Option<f64>| -> Vec<(f64, f64)> {
        progress
            .iter()
            .filter_map(|r| Some((r.t_s, f(r)?)))
            .collect()
    };
    let mean_progress = series(&|r| Some(r.mean_progress));
    let completed = series(&|r| {
        let n = all_leechers.unwrap_or(r.leechers);
        (n > 0).then(|| r.completed as f64 / n as f64)
    });
    let present = series(&|r| Some(r.present as f64));
    let leechers = series(&|r| Some(r.leechers as f64));
    let drawn = plots::progress_svg(&mean_progress, &completed, &present, &leechers);
    write_plot(dir, PROGRESS_SVG, "Swarm progress", drawn, &mut notes)?;

    // Queue-occupancy CCDF per recorded link.
    let mut ccdf_lines = Vec::new();
    for (name, d) in samples.values() {
        if d.stride() > 1 {
            notes.push(format!(
                "links.csv: {name} has {} samples; its CCDF uses every {}-th ({} kept)",
                d.seen(),
                d.stride(),
                d.values().len()
            ));
        }
        let points = ccdf(d.values());
        if !points.is_empty() {
            ccdf_lines.push(Line {
                label: format!("{name} ({} samples)", d.seen()),
                points,
            });
        }
    }
    let mut figures = vec![COMPLETION_CDF_SVG, PROGRESS_SVG];
    // An empty CCDF says nothing: it is left out with its section (and an
    // earlier report's copy goes, so that no stale plot stays beside).
    if ccdf_lines.is_empty() {
        remove_plot(dir, QUEUE_CCDF_SVG)?;
    } else {
        let drawn = plots::queue_ccdf_svg(&ccdf_lines);
        write_plot(
            dir,
            QUEUE_CCDF_SVG,
            "Queue occupancy CCDF",
            drawn,
            &mut notes,
        )?;
        figures.push(QUEUE_CCDF_SVG);
    }

    // Queueing-delay CCDF per traced flow, likewise.
    let wait_lines: Vec<Line> = waits
        .iter()
        .map(|(flow, d)| Line {
            label: format!("{flow} ({} packets)", d.seen()),
            points: ccdf(d.values()),
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    if wait_lines.is_empty() {
        remove_plot(dir, WAIT_CCDF_SVG)?;
    } else {
        let drawn = plots::wait_ccdf_svg(&wait_lines);
        write_plot(dir, WAIT_CCDF_SVG, "Queueing delay CCDF", drawn, &mut notes)?;
        figures.push(WAIT_CCDF_SVG);
    }

    let top = stats::top_drops(&link_stats, TOP_LINKS);
    let links_total = (!link_stats.is_empty()).then_some(link_stats.len());
    let title = title(summary.as_ref(), scenario.as_deref());
    let page = html::Page {
        title: &title,
        summary: summary.as_ref(),
        groups: &groups,
        top_links: &top,
        links_total,
        scenario: scenario.as_deref(),
        figures: &figures,
        notes: &notes,
    };
    fs::write(dir.join(REPORT_HTML), html::render(&page))
}
