//! The report of a sweep folder (`ppspp lab sweep`): `sweep.csv`
//! aggregated over seeds, figures against the first numeric axis with one
//! line per value of the other axes — for E1 (seed paper 000 Fig. 6),
//! average stalls per viewer against swarm size, one line per algorithm —
//! and startup-delay distributions pooled over seeds from each run's
//! `peers.csv`.
//!
//! Writes `sweep_summary.csv` (one row per grid point: mean and standard
//! deviation over seeds), `plots/sweep_*.svg`, one
//! `plots/startup_cdf_<i>.svg` per x value, and `sweep.html`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use super::csv::split_line;
use super::html::{escape, fmt_f, page_head, table};
use super::plots::{fallback_svg, Line};
use super::stats::{cdf, quantile};
use super::sweep_plots::{by_x_svg, startup_cdf_svg, SeriesLine};
use super::PLOTS_DIR;
use crate::outdir::run_dir;

/// The sweep's page.
pub const SWEEP_HTML: &str = "sweep.html";
/// The sweep's table, one row per run (`lab sweep` writes it).
pub const SWEEP_CSV: &str = "sweep.csv";

/// The sweep's table, one row per grid point.
pub const SWEEP_SUMMARY_CSV: &str = "sweep_summary.csv";

/// Figures of `sweep.csv` aggregated per grid point, with their column.
const FIGURES: [(&str, &str); 5] = [
    ("stalls_per_viewer", "stalls per viewer"),
    ("stall_s_per_viewer", "stall time per viewer (s)"),
    ("startup_mean_s", "mean startup delay (s)"),
    ("startup_p95_s", "p95 startup delay (s)"),
    ("download_mean_s", "mean download time (s)"),
];

/// One grid point: its axis values and each figure's value per seed.
#[derive(Debug, Default)]
pub(crate) struct Point {
    pub axes: Vec<String>,
    pub runs: Vec<u64>,
    pub figures: BTreeMap<&'static str, Vec<f64>>,
}

/// `sweep.csv`: the axis keys and the grid points in order of appearance.
#[derive(Debug, Default)]
pub(crate) struct Sweep {
    pub keys: Vec<String>,
    pub points: Vec<Point>,
}

/// Parses `sweep.csv`'s text; rows that do not fit the header are skipped.
pub(crate) fn parse(text: &str) -> Sweep {
    let mut lines = text.lines();
    let Some(head) = lines.next().map(split_line) else {
        return Sweep::default();
    };
    let Some(seed_col) = head.iter().position(|h| *h == "seed") else {
        return Sweep::default();
    };
    let keys: Vec<String> = head[1..seed_col].iter().map(|s| s.to_string()).collect();
    let cols: Vec<(&'static str, Option<usize>)> = FIGURES
        .iter()
        .map(|(f, _)| (*f, head.iter().position(|h| h == f)))
        .collect();
    let mut points: Vec<Point> = Vec::new();
    for line in lines {
        let f = split_line(line);
        if f.len() != head.len() {
            continue;
        }
        let Ok(run) = f[0].parse::<u64>() else {
            continue;
        };
        let axes: Vec<String> = f[1..seed_col].iter().map(|s| s.to_string()).collect();
        let i = match points.iter().position(|p| p.axes == axes) {
            Some(i) => i,
            None => {
                points.push(Point {
                    axes,
                    ..Point::default()
                });
                points.len() - 1
            }
        };
        let p = &mut points[i];
        p.runs.push(run);
        for &(name, col) in &cols {
            // An empty cell (no viewer, nobody completed) is no value.
            let v = col.and_then(|c| f[c].parse::<f64>().ok());
            if let Some(v) = v.filter(|v| v.is_finite()) {
                p.figures.entry(name).or_default().push(v);
            }
        }
    }
    Sweep { keys, points }
}

/// Mean and sample standard deviation (0 for one value); `None` if empty.
pub(crate) fn mean_sd(v: &[f64]) -> Option<(f64, f64)> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    Some((mean, var.sqrt()))
}

impl Sweep {
    /// The x axis: the first axis whose values are all numbers and not all
    /// equal.
    pub(crate) fn x_axis(&self) -> Option<usize> {
        (0..self.keys.len()).find(|&k| {
            let v: Vec<Option<f64>> = self.points.iter().map(|p| p.axes[k].parse().ok()).collect();
            v.iter().all(Option::is_some) && v.windows(2).any(|w| w[0] != w[1])
        })
    }

    /// The line a point belongs to: the values of every axis but `x`.
    pub(crate) fn series(&self, p: &Point, x: usize) -> String {
        let parts: Vec<String> = (0..self.keys.len())
            .filter(|&k| k != x)
            .map(|k| p.axes[k].clone())
            .collect();
        if parts.is_empty() {
            "all".into()
        } else {
            parts.join(", ")
        }
    }

    /// One line per series: `(x, mean, sd)` of `figure`, by ascending x.
    pub(crate) fn lines_of(&self, x: usize, figure: &str) -> Vec<SeriesLine> {
        let mut lines: Vec<SeriesLine> = Vec::new();
        for p in &self.points {
            let Some((m, sd)) = p.figures.get(figure).and_then(|v| mean_sd(v)) else {
                continue;
            };
            let Ok(xv) = p.axes[x].parse::<f64>() else {
                continue;
            };
            let s = self.series(p, x);
            match lines.iter_mut().find(|l| l.0 == s) {
                Some(l) => l.1.push((xv, m, sd)),
                None => lines.push((s, vec![(xv, m, sd)])),
            }
        }
        for l in &mut lines {
            l.1.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        lines
    }
}

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
    fs::create_dir_all(dir.join(PLOTS_DIR))?;
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
        let _ = write!(csv, "{},{}", p.axes.join(","), p.runs.len());
        row.push(p.runs.len().to_string());
        for (f, _) in FIGURES {
            let ms = p.figures.get(f).and_then(|v| mean_sd(v));
            match ms {
                Some((m, sd)) => {
                    let _ = write!(csv, ",{m:.4},{sd:.4}");
                    row.push(format!("{} ± {}", fmt_f(m), fmt_f(sd)));
                }
                None => {
                    csv.push_str(",,");
                    row.push("—".into());
                }
            }
        }
        csv.push('\n');
        rows.push(row);
    }
    fs::write(dir.join(SWEEP_SUMMARY_CSV), csv)?;

    let mut o = page_head("ppspp lab sweep");
    o.push_str("<h2>Per grid point (mean ± standard deviation over seeds)</h2>\n");
    let mut head: Vec<&str> = sweep.keys.iter().map(String::as_str).collect();
    head.push("seeds");
    head.extend(FIGURES.iter().map(|f| f.1));
    table(&mut o, &head, &rows);
    if rows.iter().flatten().any(|c| c == "—") {
        o.push_str(
            "<p>— : no run of the grid point has this figure (no viewers, no viewer \
             started, or no leecher completed).</p>\n",
        );
    }
    if let Some(x) = sweep.x_axis() {
        let key = &sweep.keys[x];
        for (f, label) in FIGURES {
            let file = format!("sweep_{f}.svg");
            let title = format!("{label} against {key}");
            let svg = by_x_svg(&title, key, label, &sweep.lines_of(x, f))
                .unwrap_or_else(|e| fallback_svg(&title, &e.to_string()));
            fs::write(dir.join(PLOTS_DIR).join(&file), svg)?;
            let _ = writeln!(
                o,
                "<figure><img src=\"{PLOTS_DIR}/{file}\" alt=\"{}\"></figure>",
                escape(&title)
            );
        }
        o.push_str("<h2>Startup delay distributions (viewers of every seed)</h2>\n");
        let mut xs: Vec<f64> = sweep
            .points
            .iter()
            .filter_map(|p| p.axes[x].parse().ok())
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let mut dist_rows = Vec::new();
        for (i, &xv) in xs.iter().enumerate() {
            let mut lines = Vec::new();
            for p in sweep.points.iter().filter(|p| p.axes[x].parse() == Ok(xv)) {
                let mut all = Vec::new();
                for run in &p.runs {
                    all.extend(startups(&run_dir(dir, *run).join("peers.csv")));
                }
                all.sort_by(f64::total_cmp);
                let q = |v: f64| {
                    if all.is_empty() {
                        "—".to_string()
                    } else {
                        fmt_f(quantile(&all, v))
                    }
                };
                dist_rows.push(vec![
                    escape(&p.axes[x]),
                    escape(&sweep.series(p, x)),
                    all.len().to_string(),
                    q(0.5),
                    q(0.95),
                    all.last().map_or("—".into(), |m| fmt_f(*m)),
                ]);
                lines.push(Line {
                    label: sweep.series(p, x),
                    points: cdf(&all, all.len()),
                });
            }
            let file = format!("startup_cdf_{i}.svg");
            let title = format!("Startup delay CDF, {key} = {xv}");
            let svg = startup_cdf_svg(&title, &lines)
                .unwrap_or_else(|e| fallback_svg(&title, &e.to_string()));
            fs::write(dir.join(PLOTS_DIR).join(&file), svg)?;
            let _ = writeln!(
                o,
                "<figure><img src=\"{PLOTS_DIR}/{file}\" alt=\"{}\"></figure>",
                escape(&title)
            );
        }
        table(
            &mut o,
            &[key, "line", "viewers", "p50 (s)", "p95 (s)", "max (s)"],
            &dist_rows,
        );
    } else {
        o.push_str("<p class=\"nodata\">No numeric axis to plot against.</p>\n");
    }
    o.push_str("</body>\n</html>\n");
    fs::write(dir.join(SWEEP_HTML), o)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CSV: &str =
        "run,peers.l.count,peers.l.algorithm,seed,leechers,stalls_per_viewer,startup_mean_s\n\
        0,32,linear,1,32,1.0,4.0\n\
        1,32,linear,2,32,3.0,6.0\n\
        2,32,swift-vod,1,32,0.5,5.0\n\
        3,96,linear,1,96,10.0,9.0\n\
        4,96,swift-vod,1,96,2.0,\n\
        5,96,swift-vod,2,96,4.0,8.0\n\
        bad row\n";

    #[test]
    fn points_group_seeds_and_lines_follow_the_numeric_axis() {
        let s = parse(CSV);
        assert_eq!(s.keys, ["peers.l.count", "peers.l.algorithm"]);
        assert_eq!(s.points.len(), 4);
        assert_eq!(s.points[0].runs, [0, 1]);
        assert_eq!(s.points[0].figures["stalls_per_viewer"], [1.0, 3.0]);
        // A run without a startup figure leaves it out of the mean.
        assert_eq!(s.points[3].figures["startup_mean_s"], [8.0]);
        assert_eq!(s.x_axis(), Some(0));
        let lines = s.lines_of(0, "stalls_per_viewer");
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0, "linear");
        // Mean 2 and sample standard deviation √2 of 1 and 3.
        let (x, m, sd) = lines[0].1[0];
        assert_eq!((x, m), (32.0, 2.0));
        assert!((sd - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(lines[1].1, [(32.0, 0.5, 0.0), (96.0, 3.0, 2f64.sqrt())]);
    }

    #[test]
    fn no_numeric_axis_and_empty_input() {
        let s = parse("run,algo,seed,stalls_per_viewer\n0,a,1,1\n1,b,1,2\n");
        assert_eq!(s.x_axis(), None);
        assert!(parse("").points.is_empty());
        assert_eq!(mean_sd(&[]), None);
        assert_eq!(mean_sd(&[5.0]), Some((5.0, 0.0)));
    }

    #[test]
    fn the_report_has_the_table_plots_and_startup_distributions() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("sweep.csv"), CSV).unwrap();
        for (run, startups) in [(0, "1.5"), (1, "2.5"), (3, "7.0"), (5, "")] {
            let d = run_dir(dir.path(), run);
            fs::create_dir_all(&d).unwrap();
            fs::write(
                d.join("peers.csv"),
                format!("id,group,startup_s\n0,seeder,\n1,l,{startups}\n2,l,9.0\n"),
            )
            .unwrap();
        }
        write_sweep_report(dir.path()).unwrap();
        let html = fs::read_to_string(dir.path().join(SWEEP_HTML)).unwrap();
        assert!(html.contains("plots/sweep_stalls_per_viewer.svg"));
        assert!(
            html.contains("plots/startup_cdf_0.svg") && html.contains("plots/startup_cdf_1.svg")
        );
        assert!(html.contains("2.000 ± 1.414"), "{html}");
        let svg = fs::read_to_string(dir.path().join("plots/sweep_stalls_per_viewer.svg")).unwrap();
        assert!(svg.contains("swift-vod") && svg.contains("linear"));
        // 32 leechers, linear: runs 0 and 1 pooled, 4 viewers started.
        assert!(
            html.contains("<td>32</td><td>linear</td><td>4</td>"),
            "{html}"
        );
        let summary = fs::read_to_string(dir.path().join(SWEEP_SUMMARY_CSV)).unwrap();
        let first = summary.lines().nth(1).unwrap();
        assert!(first.starts_with("32,linear,2,2.0000,1.4142,"), "{summary}");
    }

    #[test]
    fn a_figure_no_seed_has_is_a_dash_with_a_footnote() {
        let dir = tempfile::tempdir().unwrap();
        let csv = "run,peers.l.count,seed,stalls_per_viewer,continuity,startup_mean_s\n\
                   0,4,1,0.0,,\n\
                   1,4,2,0.0,NaN,NaN\n\
                   2,8,1,1.0,0.5,2.0\n";
        fs::write(dir.path().join("sweep.csv"), csv).unwrap();
        write_sweep_report(dir.path()).unwrap();
        let html = fs::read_to_string(dir.path().join(SWEEP_HTML)).unwrap();
        let summary = fs::read_to_string(dir.path().join(SWEEP_SUMMARY_CSV)).unwrap();
        assert!(
            !html.contains("NaN") && !summary.contains("NaN"),
            "{summary}"
        );
        assert!(html.contains("<td>—</td>"), "{html}");
        assert!(html.contains("<p>— : no run of the grid point has this figure"));
    }
}
