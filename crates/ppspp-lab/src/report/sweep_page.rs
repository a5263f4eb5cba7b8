//! The page of a sweep folder (`ppspp lab sweep`, `ppspp lab report`): the
//! scenario swept, a table per grid point (mean ± standard deviation over
//! seeds, with a link to every run's report), the figures laid out as
//! [`Sweep::layout`] says, and startup-delay distributions pooled over
//! seeds from each run's `peers.csv`.
//!
//! Writes `sweep_summary.csv` (one row per grid point), `sweep_summary.md`
//! (the same and a table per figure, in Markdown), `plots/sweep_*.svg`
//! (one per figure with values), `plots/startup_cdf_<i>.svg` (when viewers
//! started) and `sweep.html`; plots of an earlier report go first. A sweep
//! over a family of scenarios ([`crate::family`]) lists the family's
//! scenarios where a plain sweep shows its scenario.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use super::csv::split_line;
use super::html::{escape, fmt_f, page_head, table};
use super::plots::{fallback_svg, Line};
use super::stats::{cdf, quantile};
use super::sweep::{mean_sd, parse, Layout, Point, Sweep, FIGURES};
use super::sweep_md::markdown;
use super::sweep_plots::{bars_svg, by_x_svg, startup_cdf_svg};
use super::{scenario_name, PLOTS_DIR, REPORT_HTML};
use crate::family::{Family, FAMILY_TOML};
use crate::outdir::{point_file, run_dir, run_path};
use crate::results::SCENARIO_TOML;

/// The sweep's page.
pub const SWEEP_HTML: &str = "sweep.html";
/// The sweep's table, one row per run (`lab sweep` writes it).
pub const SWEEP_CSV: &str = "sweep.csv";
/// The sweep's table, one row per grid point.
pub const SWEEP_SUMMARY_CSV: &str = "sweep_summary.csv";
/// The sweep's tables in Markdown: per grid point, and per figure.
pub const SWEEP_SUMMARY_MD: &str = "sweep_summary.md";

/// What a figure without a value prints as.
const NONE: &str = "—";

/// Whether `name` (a file in `plots/`) is one a sweep report draws.
pub fn is_sweep_plot(name: &str) -> bool {
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .and_then(|r| r.strip_suffix(".svg"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    (name.starts_with("sweep_") && name.ends_with(".svg")) || numbered("startup_cdf_")
}

/// The `startup_s` of every viewer in `peers.csv` that started.
fn startups(path: &Path) -> Vec<f64> {
    let Ok(text) = fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut lines = text.lines();
    let Some(col) = lines
        .next()
        .and_then(|h| split_line(h).iter().position(|c| *c == "startup_s"))
    else {
        return Vec::new();
    };
    lines
        .filter_map(|l| split_line(l).get(col).and_then(|v| v.parse::<f64>().ok()))
        .collect()
}

/// `sweep_summary.csv` (every figure, so its columns do not depend on
/// the runs), and the page's table rows, one per grid point, with the
/// figures some run has.
fn summary(dir: &Path, sweep: &Sweep) -> (String, Vec<Vec<String>>) {
    let shown = sweep.shown_figures();
    let mut csv = String::new();
    for k in &sweep.keys {
        let _ = write!(csv, "{k},");
    }
    csv.push_str("seeds");
    for (f, _) in FIGURES {
        let _ = write!(csv, ",{f}_mean,{f}_sd");
    }
    csv.push('\n');
    let mut rows = Vec::new();
    for p in &sweep.points {
        let mut row: Vec<String> = p.axes.iter().map(|a| escape(a)).collect();
        // A sweep of seeds alone has no axis columns (and so no comma).
        for a in &p.axes {
            let _ = write!(csv, "{a},");
        }
        let _ = write!(csv, "{}", p.runs.len());
        row.push(p.runs.len().to_string());
        for (f, _) in FIGURES {
            let cell = p.figures.get(f).and_then(|v| mean_sd(v));
            match cell {
                Some((m, sd)) => {
                    let _ = write!(csv, ",{m:.4},{sd:.4}");
                }
                None => csv.push_str(",,"),
            }
            if shown.iter().any(|s| s.0 == f) {
                row.push(cell.map_or(NONE.into(), |(m, sd)| {
                    format!("{} ± {}", fmt_f(m), fmt_f(sd))
                }));
            }
        }
        csv.push('\n');
        row.push(run_links(dir, p));
        rows.push(row);
    }
    (csv, rows)
}

/// A link to each run's report, by seed (plain text where a run left no
/// report, e.g. it failed).
fn run_links(dir: &Path, p: &Point) -> String {
    let links: Vec<String> = p
        .runs
        .iter()
        .map(|&(run, seed)| {
            if run_dir(dir, run).join(REPORT_HTML).is_file() {
                format!(
                    "<a href=\"{}/{REPORT_HTML}\">seed {seed}</a>",
                    escape(&run_path(run))
                )
            } else {
                format!("seed {seed} (no report)")
            }
        })
        .collect();
    links.join(", ")
}

/// The scenario swept: its text (the sweep's `scenario.toml`), and its
/// name (from it, else from the first point's file, as sweeps written
/// before kept no scenario).
fn scenario(dir: &Path) -> (Option<String>, Option<String>) {
    let text = fs::read_to_string(dir.join(SCENARIO_TOML)).ok();
    let name = text.as_deref().and_then(scenario_name).or_else(|| {
        let point = fs::read_to_string(point_file(dir, 0)).ok()?;
        scenario_name(&point)
    });
    (name, text)
}

/// Writes `svg` (or a stand-in when drawing failed) as `plots/file` and
/// embeds it in the page.
fn figure(
    o: &mut String,
    dir: &Path,
    file: &str,
    title: &str,
    svg: super::plots::PlotResult,
) -> io::Result<()> {
    let svg = svg.unwrap_or_else(|e| fallback_svg(title, &e.to_string()));
    fs::write(dir.join(PLOTS_DIR).join(file), svg)?;
    let _ = writeln!(
        o,
        "<figure><img src=\"{PLOTS_DIR}/{file}\" alt=\"{}\"></figure>",
        escape(title)
    );
    Ok(())
}

/// The figures, as lines against the numeric axis or in bars; a figure
/// no run has (no viewers: no stalls) is left out.
fn figures(o: &mut String, dir: &Path, sweep: &Sweep) -> io::Result<()> {
    let layout = sweep.layout();
    for (f, label) in sweep.shown_figures() {
        let file = format!("sweep_{f}.svg");
        match layout {
            Layout::Numeric(x) => {
                let key = &sweep.keys[x];
                let title = format!("{label} against {key}");
                let svg = by_x_svg(&title, key, label, &sweep.lines_of(x, f));
                figure(o, dir, &file, &title, svg)?;
            }
            Layout::Categorical(c) => {
                let key = c.map_or("grid point", |c| sweep.keys[c].as_str());
                let title = format!("{label} by {key} (mean ± sd over seeds)");
                let (cats, series) = sweep.bars_of(c, f);
                let svg = bars_svg(&title, key, label, &cats, &series);
                figure(o, dir, &file, &title, svg)?;
            }
        }
    }
    Ok(())
}

/// Startup-delay CDFs, pooled over each point's seeds: per value of the
/// numeric axis with a line per series, or per series with a line per
/// category; and a table per point. Left out when no viewer started.
fn startup_section(o: &mut String, dir: &Path, sweep: &Sweep) -> io::Result<()> {
    let pooled: Vec<Vec<f64>> = sweep
        .points
        .iter()
        .map(|p| {
            let mut all: Vec<f64> = p
                .runs
                .iter()
                .flat_map(|&(run, _)| startups(&run_dir(dir, run).join("peers.csv")))
                .collect();
            all.sort_by(f64::total_cmp);
            all
        })
        .collect();
    if pooled.iter().all(Vec::is_empty) {
        return Ok(());
    }
    o.push_str("<h2>Startup delay distributions (viewers of every seed)</h2>\n");
    // (plot title, [(line label, point index)]), plots in order.
    let mut plots: Vec<(String, Vec<(String, usize)>)> = Vec::new();
    let mut order: Vec<(f64, usize)> = Vec::new();
    for (i, p) in sweep.points.iter().enumerate() {
        let (title, line) = match sweep.layout() {
            Layout::Numeric(x) => (
                format!("Startup delay CDF, {} = {}", sweep.keys[x], p.axes[x]),
                sweep.series(p, Some(x)),
            ),
            Layout::Categorical(c) => {
                let others: Vec<String> = (0..sweep.keys.len())
                    .filter(|&k| Some(k) != c)
                    .map(|k| format!("{} = {}", sweep.keys[k], p.axes[k]))
                    .collect();
                let title = if others.is_empty() {
                    "Startup delay CDF".to_string()
                } else {
                    format!("Startup delay CDF, {}", others.join(", "))
                };
                (title, sweep.category(p, c))
            }
        };
        match plots.iter_mut().find(|(t, _)| *t == title) {
            Some(plot) => plot.1.push((line, i)),
            None => {
                let x = match sweep.layout() {
                    Layout::Numeric(x) => p.axes[x].parse().unwrap_or(f64::NAN),
                    Layout::Categorical(_) => plots.len() as f64,
                };
                order.push((x, plots.len()));
                plots.push((title, vec![(line, i)]));
            }
        }
    }
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (n, &(_, k)) in order.iter().enumerate() {
        let (title, lines) = &plots[k];
        let lines: Vec<Line> = lines
            .iter()
            .map(|(label, i)| Line {
                label: label.clone(),
                points: cdf(&pooled[*i], pooled[*i].len()),
            })
            .collect();
        let svg = startup_cdf_svg(title, &lines);
        figure(o, dir, &format!("startup_cdf_{n}.svg"), title, svg)?;
    }
    let rows: Vec<Vec<String>> = sweep
        .points
        .iter()
        .zip(&pooled)
        .map(|(p, all)| {
            let q = |v: f64| {
                if all.is_empty() {
                    NONE.to_string()
                } else {
                    fmt_f(quantile(all, v))
                }
            };
            let mut row: Vec<String> = p.axes.iter().map(|a| escape(a)).collect();
            row.extend([all.len().to_string(), q(0.5), q(0.95), q(1.0)]);
            row
        })
        .collect();
    let mut head: Vec<&str> = sweep.keys.iter().map(String::as_str).collect();
    head.extend(["viewers started", "p50 (s)", "p95 (s)", "max (s)"]);
    table(o, &head, &rows);
    Ok(())
}

/// The opening of a family sweep's page: what ran over the axes `over`
/// (HTML), and the family's scenarios with what each stands for.
fn family_intro(o: &mut String, f: &Family, over: &str) {
    let _ = writeln!(
        o,
        "<p>Sweep of the {} scenarios of the family <strong>{}</strong> \
         (<a href=\"{FAMILY_TOML}\">{FAMILY_TOML}</a>) over {}.</p>",
        f.scenarios.len(),
        escape(&f.name),
        over
    );
    o.push_str("<h2>Scenarios</h2>\n");
    let rows: Vec<Vec<String>> = f
        .scenarios
        .iter()
        .map(|m| {
            vec![
                escape(&m.name),
                escape(&m.description),
                format!("<code>{}</code>", escape(&m.file)),
            ]
        })
        .collect();
    table(o, &["scenario", "description", "file"], &rows);
}

/// Writes the sweep report into `dir` (which holds `sweep.csv` and
/// `runs/`). Errors when `sweep.csv` cannot be read or lists no runs, or
/// an output cannot be written.
pub fn write_sweep_report(dir: &Path) -> io::Result<()> {
    let sweep = parse(&fs::read_to_string(dir.join(SWEEP_CSV))?);
    if sweep.points.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{SWEEP_CSV} lists no runs: nothing to report"),
        ));
    }
    let plots = dir.join(PLOTS_DIR);
    fs::create_dir_all(&plots)?;
    // An earlier report's plots (another layout, more x values) go.
    for entry in fs::read_dir(&plots)? {
        let entry = entry?;
        if is_sweep_plot(&entry.file_name().to_string_lossy()) {
            fs::remove_file(entry.path())?;
        }
    }
    let (csv, rows) = summary(dir, &sweep);
    fs::write(dir.join(SWEEP_SUMMARY_CSV), csv)?;

    let family = Family::recorded(dir);
    let (name, text) = match &family {
        Some(f) => (Some(f.name.clone()), None),
        None => scenario(dir),
    };
    let title = match &name {
        Some(n) => format!("{n}: sweep"),
        None => "ppspp lab sweep".into(),
    };
    fs::write(dir.join(SWEEP_SUMMARY_MD), markdown(&title, &sweep))?;
    let mut o = page_head(&title);
    let axes: Vec<String> = sweep
        .keys
        .iter()
        .enumerate()
        .map(|(k, key)| {
            let mut values: Vec<&str> = Vec::new();
            for p in &sweep.points {
                if !values.contains(&p.axes[k].as_str()) {
                    values.push(&p.axes[k]);
                }
            }
            format!(
                "<code>{}</code> = {}",
                escape(key),
                escape(&values.join(", "))
            )
        })
        .collect();
    let over = if axes.is_empty() {
        "seeds only".to_string()
    } else {
        axes.join("; ")
    };
    match &family {
        Some(f) => family_intro(&mut o, f, &over),
        None => {
            let _ = writeln!(
                o,
                "<p>Sweep of the scenario <strong>{}</strong>{} over {over}.</p>",
                escape(name.as_deref().unwrap_or("(unnamed)")),
                if text.is_some() {
                    format!(" (<a href=\"{SCENARIO_TOML}\">{SCENARIO_TOML}</a>)")
                } else {
                    String::new()
                },
            );
        }
    }
    let _ = writeln!(
        o,
        "<p>Tables: <a href=\"{SWEEP_SUMMARY_CSV}\">{SWEEP_SUMMARY_CSV}</a>, \
         <a href=\"{SWEEP_SUMMARY_MD}\">{SWEEP_SUMMARY_MD}</a>.</p>"
    );
    o.push_str("<h2>Per grid point (mean ± standard deviation over seeds)</h2>\n");
    let mut head: Vec<&str> = sweep.keys.iter().map(String::as_str).collect();
    head.push("seeds");
    head.extend(sweep.shown_figures().iter().map(|f| f.1));
    head.push("runs");
    table(&mut o, &head, &rows);
    if rows.iter().flatten().any(|c| c == NONE) {
        o.push_str(
            "<p>— : no run of the grid point has this figure (no viewers, no viewer \
             started, or no leecher completed).</p>\n",
        );
    }
    o.push_str("<h2>Figures (mean ± standard deviation over seeds)</h2>\n");
    figures(&mut o, dir, &sweep)?;
    startup_section(&mut o, dir, &sweep)?;
    if let Some(text) = text {
        let _ = writeln!(o, "<h2>Scenario</h2>\n<pre>{}</pre>", escape(&text));
    }
    o.push_str("</body>\n</html>\n");
    fs::write(dir.join(SWEEP_HTML), o)
}

#[cfg(test)]
mod tests {
    use super::super::sweep::TEST_CSV;
    use super::super::sweep_plots::svg_has_text;
    use super::*;

    /// A sweep folder with `csv` and, per run, a report and a peers.csv
    /// whose viewers started after `startups`.
    fn folder(csv: &str, runs: &[(u64, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(SWEEP_CSV), csv).unwrap();
        for (run, startups) in runs {
            let d = run_dir(dir.path(), *run);
            fs::create_dir_all(&d).unwrap();
            fs::write(
                d.join("peers.csv"),
                format!("id,group,startup_s\n0,seeder,\n1,l,{startups}\n2,l,9.0\n"),
            )
            .unwrap();
            fs::write(d.join(REPORT_HTML), "").unwrap();
        }
        dir
    }

    fn read(dir: &tempfile::TempDir, file: &str) -> String {
        fs::read_to_string(dir.path().join(file)).unwrap()
    }

    #[test]
    fn the_report_has_the_table_plots_and_startup_distributions() {
        let dir = folder(TEST_CSV, &[(0, "1.5"), (1, "2.5"), (3, "7.0"), (5, "")]);
        write_sweep_report(dir.path()).unwrap();
        let html = read(&dir, SWEEP_HTML);
        assert!(html.contains("plots/sweep_stalls_per_viewer.svg"));
        assert!(
            html.contains("plots/startup_cdf_0.svg") && html.contains("plots/startup_cdf_1.svg")
        );
        assert!(html.contains("2.000 ± 1.414"), "{html}");
        let svg = read(&dir, "plots/sweep_stalls_per_viewer.svg");
        assert!(svg.contains("swift-vod") && svg.contains("linear"));
        // 32 leechers, linear: runs 0 and 1 pooled, 4 viewers started.
        assert!(
            html.contains("<td>32</td><td>linear</td><td>4</td>"),
            "{html}"
        );
        let summary = read(&dir, SWEEP_SUMMARY_CSV);
        let first = summary.lines().nth(1).unwrap();
        assert!(first.starts_with("32,linear,2,2.0000,1.4142,"), "{summary}");
        // No figure column without values: no plot for it.
        assert!(!dir.path().join("plots/sweep_download_mean_s.svg").exists());
    }

    #[test]
    fn the_page_names_the_scenario_and_links_every_run() {
        let dir = folder(TEST_CSV, &[(0, "1.5"), (1, "2.5"), (2, "1.0"), (3, "7.0")]);
        fs::write(dir.path().join(SCENARIO_TOML), "name = \"e1-vod\"\n# <b>\n").unwrap();
        write_sweep_report(dir.path()).unwrap();
        let html = read(&dir, SWEEP_HTML);
        assert!(html.contains("<title>e1-vod: sweep</title>"), "{html}");
        assert!(html.contains("<strong>e1-vod</strong>"));
        assert!(html.contains("<code>peers.l.algorithm</code> = linear, swift-vod"));
        assert!(html.contains(
            "<a href=\"runs/run0000/report.html\">seed 1</a>, \
             <a href=\"runs/run0001/report.html\">seed 2</a>"
        ));
        // Runs 4 and 5 left no report.
        assert!(
            html.contains("seed 1 (no report), seed 2 (no report)"),
            "{html}"
        );
        assert!(html.contains("<pre>name = &quot;e1-vod&quot;\n# &lt;b&gt;"));
    }

    #[test]
    fn a_categorical_axis_gets_bars_and_stale_plots_go() {
        let csv = "run,peers.viewers.algorithm,seed,stalls_per_viewer,startup_mean_s\n\
                   0,linear,1,0.000,3.180\n1,linear,2,0.042,3.198\n\
                   2,std-vod,1,0.000,3.224\n3,std-vod,2,0.042,3.195\n";
        let dir = folder(csv, &[(0, "3.0"), (1, "3.1"), (2, "3.2"), (3, "3.3")]);
        fs::create_dir_all(dir.path().join(PLOTS_DIR)).unwrap();
        fs::write(dir.path().join("plots/startup_cdf_7.svg"), "old").unwrap();
        write_sweep_report(dir.path()).unwrap();
        let html = read(&dir, SWEEP_HTML);
        assert!(!html.contains("No numeric axis"), "{html}");
        let svg = read(&dir, "plots/sweep_stalls_per_viewer.svg");
        // A bar per algorithm, mean over seeds written above it.
        for text in [
            "linear",
            "std-vod",
            "0.021",
            "stalls per viewer by peers.viewers.algorithm (mean ± sd over seeds)",
        ] {
            assert!(svg_has_text(&svg, text), "{text}: {svg}");
        }
        assert!(svg.contains("<rect"), "{svg}");
        // One startup CDF, a line per algorithm; the old eighth is gone.
        assert!(html.contains("plots/startup_cdf_0.svg") && !html.contains("startup_cdf_1"));
        assert!(!dir.path().join("plots/startup_cdf_7.svg").exists());
    }

    #[test]
    fn a_family_sweep_lists_its_scenarios_and_writes_markdown() {
        let csv = "run,scenario,algorithm,seed,stalls_per_viewer,continuity\n\
                   0,e1-32,linear,1,2.0,0.9\n1,e1-32,std-vod,1,1.0,0.95\n\
                   2,loss,linear,1,3.0,0.7\n3,loss,std-vod,1,2.5,0.8\n";
        let dir = folder(csv, &[(0, "3.0"), (1, "3.1"), (2, "3.2"), (3, "3.3")]);
        let family = Family {
            name: "vod-family".into(),
            scenarios: vec![crate::family::Member {
                name: "loss".into(),
                file: "loss.toml".into(),
                description: "E1 with <heavier> loss".into(),
            }],
        };
        fs::write(dir.path().join(FAMILY_TOML), family.to_toml()).unwrap();
        write_sweep_report(dir.path()).unwrap();
        let html = read(&dir, SWEEP_HTML);
        assert!(html.contains("<title>vod-family: sweep</title>"), "{html}");
        assert!(
            html.contains("the family <strong>vod-family</strong>"),
            "{html}"
        );
        assert!(
            html.contains("<td>E1 with &lt;heavier&gt; loss</td>"),
            "{html}"
        );
        assert!(!html.contains("<h2>Scenario</h2>"), "{html}");
        // Bars per scenario, a bar per algorithm; continuity has its plot.
        let svg = read(&dir, "plots/sweep_continuity.svg");
        assert!(svg_has_text(&svg, "loss") && svg_has_text(&svg, "std-vod"));
        let md = read(&dir, SWEEP_SUMMARY_MD);
        assert!(md.starts_with("# vod-family: sweep\n"), "{md}");
        assert!(
            md.contains("| loss | 3.000 ± 0.000 | 2.500 ± 0.000 |"),
            "{md}"
        );
    }

    #[test]
    fn a_figure_no_seed_has_is_a_dash_with_a_footnote() {
        let csv = "run,peers.l.count,seed,stalls_per_viewer,continuity,startup_mean_s\n\
                   0,4,1,0.0,,\n\
                   1,4,2,0.0,NaN,NaN\n\
                   2,8,1,1.0,0.5,2.0\n";
        let dir = folder(csv, &[]);
        write_sweep_report(dir.path()).unwrap();
        let html = read(&dir, SWEEP_HTML);
        let summary = read(&dir, SWEEP_SUMMARY_CSV);
        assert!(
            !html.contains("NaN") && !summary.contains("NaN"),
            "{summary}"
        );
        assert!(html.contains("<td>—</td>"), "{html}");
        assert!(html.contains("<p>— : no run of the grid point has this figure"));
    }
}
