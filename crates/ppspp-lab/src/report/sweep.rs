//! A sweep's results as the report sees them: `sweep.csv` grouped into
//! grid points (each figure's values over the seeds), and how to lay the
//! points out — against the first numeric axis, one line per value of the
//! other axes (for E1, seed paper 000 Fig. 6: stalls per viewer against
//! swarm size, one line per algorithm), or, with no numeric axis, in bars
//! per value of the first axis that varies (vod-small's algorithms).
//! [`super::sweep_page`] writes the page.

use std::collections::BTreeMap;

use super::csv::split_line;
use super::sweep_plots::{SeriesBars, SeriesLine};

/// Figures of `sweep.csv` aggregated per grid point, with their column.
pub(crate) const FIGURES: [(&str, &str); 11] = [
    ("stalls_per_viewer", "stalls per viewer"),
    ("stall_s_per_viewer", "stall time per viewer (s)"),
    ("startup_mean_s", "mean startup delay (s)"),
    ("startup_p95_s", "p95 startup delay (s)"),
    ("download_mean_s", "mean download time (s)"),
    ("continuity", "continuity index"),
    // Live runs (the summary's `live` object): issue 24's goal figures.
    ("live_continuity", "live continuity index"),
    ("lag_p50_s", "live lag p50 (s)"),
    ("lag_p95_s", "live lag p95 (s)"),
    ("skips_per_viewer", "live skips per viewer"),
    ("source_upload_x", "source upload (x stream rate)"),
];

/// One grid point: its axis values, its runs (index and seed) and each
/// figure's value per seed.
#[derive(Debug, Default)]
pub(crate) struct Point {
    pub axes: Vec<String>,
    pub runs: Vec<(u64, u64)>,
    pub figures: BTreeMap<&'static str, Vec<f64>>,
}

/// `sweep.csv`: the axis keys and the grid points in order of appearance.
#[derive(Debug, Default)]
pub(crate) struct Sweep {
    pub keys: Vec<String>,
    pub points: Vec<Point>,
}

/// How the figures are laid out against the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Lines against this numeric axis.
    Numeric(usize),
    /// Bars per value of this axis (in order of appearance), or per grid
    /// point when no axis varies.
    Categorical(Option<usize>),
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
        let (Ok(run), Ok(seed)) = (f[0].parse::<u64>(), f[seed_col].parse::<u64>()) else {
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
        p.runs.push((run, seed));
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
    /// The figures some run of the sweep has (a VoD sweep has no live lag,
    /// a live one no download time), in [`FIGURES`] order.
    pub(crate) fn shown_figures(&self) -> Vec<(&'static str, &'static str)> {
        FIGURES
            .into_iter()
            .filter(|(f, _)| self.points.iter().any(|p| p.figures.contains_key(f)))
            .collect()
    }

    /// The x axis: the first axis whose values are all numbers and not all
    /// equal.
    pub(crate) fn x_axis(&self) -> Option<usize> {
        (0..self.keys.len()).find(|&k| {
            let v: Vec<Option<f64>> = self.points.iter().map(|p| p.axes[k].parse().ok()).collect();
            v.iter().all(Option::is_some) && v.windows(2).any(|w| w[0] != w[1])
        })
    }

    /// Lines against the numeric axis if there is one, else bars per
    /// value of the first axis that varies.
    pub(crate) fn layout(&self) -> Layout {
        match self.x_axis() {
            Some(x) => Layout::Numeric(x),
            None => Layout::Categorical(
                (0..self.keys.len())
                    .find(|&k| self.points.windows(2).any(|w| w[0].axes[k] != w[1].axes[k])),
            ),
        }
    }

    /// The line (or bar series) a point belongs to: the values of every
    /// axis but `x`; `all` when there are none.
    pub(crate) fn series(&self, p: &Point, x: Option<usize>) -> String {
        let parts: Vec<String> = (0..self.keys.len())
            .filter(|&k| Some(k) != x)
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
            let s = self.series(p, Some(x));
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

    /// The category of a point: its value of axis `c`, else `all`.
    pub(crate) fn category(&self, p: &Point, c: Option<usize>) -> String {
        c.map_or_else(|| "all".into(), |c| p.axes[c].clone())
    }

    /// Bars of `figure` per value of axis `c` (in order of appearance):
    /// the categories, and per series its `(mean, sd)` in each category
    /// (`None` where the series has no value there).
    pub(crate) fn bars_of(&self, c: Option<usize>, figure: &str) -> (Vec<String>, Vec<SeriesBars>) {
        let mut cats: Vec<String> = Vec::new();
        for p in &self.points {
            let cat = self.category(p, c);
            if !cats.contains(&cat) {
                cats.push(cat);
            }
        }
        let mut series: Vec<SeriesBars> = Vec::new();
        for p in &self.points {
            let s = self.series(p, c);
            let at = cats.iter().position(|x| *x == self.category(p, c));
            let i = match series.iter().position(|b| b.0 == s) {
                Some(i) => i,
                None => {
                    series.push((s, vec![None; cats.len()]));
                    series.len() - 1
                }
            };
            if let Some(at) = at {
                series[i].1[at] = p.figures.get(figure).and_then(|v| mean_sd(v));
            }
        }
        (cats, series)
    }
}

/// A `sweep.csv` of two axes (a numeric one first) for the tests.
#[cfg(test)]
pub(crate) const TEST_CSV: &str =
    "run,peers.l.count,peers.l.algorithm,seed,leechers,stalls_per_viewer,startup_mean_s\n\
        0,32,linear,1,32,1.0,4.0\n\
        1,32,linear,2,32,3.0,6.0\n\
        2,32,swift-vod,1,32,0.5,5.0\n\
        3,96,linear,1,96,10.0,9.0\n\
        4,96,swift-vod,1,96,2.0,\n\
        5,96,swift-vod,2,96,4.0,8.0\n\
        bad row\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_group_seeds_and_lines_follow_the_numeric_axis() {
        let s = parse(TEST_CSV);
        assert_eq!(s.keys, ["peers.l.count", "peers.l.algorithm"]);
        assert_eq!(s.points.len(), 4);
        assert_eq!(s.points[0].runs, [(0, 1), (1, 2)]);
        assert_eq!(s.points[0].figures["stalls_per_viewer"], [1.0, 3.0]);
        // A run without a startup figure leaves it out of the mean.
        assert_eq!(s.points[3].figures["startup_mean_s"], [8.0]);
        assert_eq!(s.x_axis(), Some(0));
        assert_eq!(s.layout(), Layout::Numeric(0));
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
    fn without_a_numeric_axis_the_first_varying_axis_gets_bars() {
        let s = parse(
            "run,content.size,algo,weighted,seed,stalls_per_viewer\n\
             0,4MB,linear,no,1,1\n1,4MB,linear,no,2,3\n\
             2,4MB,std-vod,no,1,0\n3,4MB,std-vod,yes,1,5\n",
        );
        assert_eq!(s.x_axis(), None);
        // content.size does not vary; algo is the first that does.
        assert_eq!(s.layout(), Layout::Categorical(Some(1)));
        let (cats, series) = s.bars_of(Some(1), "stalls_per_viewer");
        assert_eq!(cats, ["linear", "std-vod"]);
        assert_eq!(series.len(), 2);
        assert_eq!(series[0].0, "4MB, no");
        assert_eq!(series[0].1[0], Some((2.0, 2f64.sqrt())));
        assert_eq!(series[0].1[1], Some((0.0, 0.0)));
        // "yes" has no linear point.
        assert_eq!(
            series[1],
            ("4MB, yes".to_string(), vec![None, Some((5.0, 0.0))])
        );
        // One point, or no axis at all: one bar.
        let one = parse("run,seed,stalls_per_viewer\n0,1,2\n1,2,4\n");
        assert_eq!(one.layout(), Layout::Categorical(None));
        let (cats, series) = one.bars_of(None, "stalls_per_viewer");
        assert_eq!(
            (cats, series),
            (
                vec!["all".to_string()],
                vec![("all".to_string(), vec![Some((3.0, 2f64.sqrt()))])]
            )
        );
    }

    #[test]
    fn empty_input() {
        assert!(parse("").points.is_empty());
        assert_eq!(mean_sd(&[]), None);
        assert_eq!(mean_sd(&[5.0]), Some((5.0, 0.0)));
    }
}
