//! `sweep_summary.md`: a sweep's figures as Markdown tables, to paste into
//! an issue or a note: one row per grid point with every figure, then one
//! table per figure laid out as its plot (a row per category or x value, a
//! column per series: for a family, scenarios by algorithms).

use std::fmt::Write as _;

use super::html::fmt_f;
use super::sweep::{mean_sd, Layout, Sweep};

/// What a figure without a value prints as.
const NONE: &str = "—";

/// `mean ± sd`, or [`NONE`].
fn cell(v: Option<(f64, f64)>) -> String {
    v.map_or_else(
        || NONE.to_string(),
        |(m, sd)| format!("{} ± {}", fmt_f(m), fmt_f(sd)),
    )
}

/// A cell's text made safe in a Markdown table.
fn md(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn row(o: &mut String, cells: &[String]) {
    let _ = writeln!(o, "| {} |", cells.join(" | "));
}

/// A header row and its rule: the first `text` columns left-aligned, the
/// rest (numbers) right-aligned.
fn head(o: &mut String, cells: &[String], text: usize) {
    row(o, cells);
    let rule: Vec<String> = (0..cells.len())
        .map(|i| if i < text { "---" } else { "---:" }.to_string())
        .collect();
    row(o, &rule);
}

/// The rows and columns of `figure` as its plot lays it out: row labels,
/// column labels, and a `(mean, sd)` per cell.
type Pivot = (Vec<String>, Vec<String>, Vec<Vec<Option<(f64, f64)>>>);

fn pivot(sweep: &Sweep, figure: &str) -> Pivot {
    match sweep.layout() {
        Layout::Categorical(c) => {
            let (cats, series) = sweep.bars_of(c, figure);
            let cols = series.iter().map(|s| s.0.clone()).collect();
            let cells = (0..cats.len())
                .map(|k| series.iter().map(|s| s.1[k]).collect())
                .collect();
            (cats, cols, cells)
        }
        Layout::Numeric(x) => {
            let lines = sweep.lines_of(x, figure);
            let mut xs: Vec<f64> = lines.iter().flat_map(|l| l.1.iter().map(|p| p.0)).collect();
            xs.sort_by(f64::total_cmp);
            xs.dedup();
            let cols = lines.iter().map(|l| l.0.clone()).collect();
            let cells = xs
                .iter()
                .map(|&xv| {
                    lines
                        .iter()
                        .map(|l| l.1.iter().find(|p| p.0 == xv).map(|&(_, m, sd)| (m, sd)))
                        .collect()
                })
                .collect();
            (xs.iter().map(|x| x.to_string()).collect(), cols, cells)
        }
    }
}

/// The Markdown of `sweep`, titled `title`.
pub(crate) fn markdown(title: &str, sweep: &Sweep) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# {}\n", md(title));
    o.push_str(
        "Mean ± standard deviation over seeds; — : no run of the point has the figure \
         (no viewers, none started, or no leecher completed).\n\n",
    );
    let shown = sweep.shown_figures();
    let mut cols: Vec<String> = sweep.keys.iter().map(|k| md(k)).collect();
    cols.push("seeds".into());
    cols.extend(shown.iter().map(|f| f.1.to_string()));
    head(&mut o, &cols, sweep.keys.len());
    for p in &sweep.points {
        let mut cells: Vec<String> = p.axes.iter().map(|a| md(a)).collect();
        cells.push(p.runs.len().to_string());
        for (f, _) in &shown {
            cells.push(cell(p.figures.get(f).and_then(|v| mean_sd(v))));
        }
        row(&mut o, &cells);
    }
    let by = match sweep.layout() {
        Layout::Categorical(Some(c)) | Layout::Numeric(c) => sweep.keys[c].as_str(),
        Layout::Categorical(None) => "grid point",
    };
    for (f, label) in &shown {
        let (rows, series, cells) = pivot(sweep, f);
        let _ = writeln!(o, "\n## {label}\n");
        let mut cols = vec![md(by)];
        cols.extend(series.iter().map(|s| md(s)));
        head(&mut o, &cols, 1);
        for (r, cs) in rows.iter().zip(cells) {
            let mut cells = vec![md(r)];
            cells.extend(cs.into_iter().map(cell));
            row(&mut o, &cells);
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::super::sweep::{parse, TEST_CSV};
    use super::*;

    #[test]
    fn a_family_reads_as_scenarios_by_algorithms() {
        let csv = "run,scenario,algorithm,seed,stalls_per_viewer,continuity\n\
                   0,e1-32,linear,1,2.0,0.9\n1,e1-32,linear,2,4.0,0.8\n\
                   2,e1-32,swift|vod,1,1.0,\n3,loss,linear,1,3.0,0.7\n";
        let m = markdown("vod-family: sweep", &parse(csv));
        assert!(m.starts_with("# vod-family: sweep\n"), "{m}");
        assert!(
            m.contains(
                "| scenario | algorithm | seeds | stalls per viewer | continuity index |\n\
                 | --- | --- | ---: | ---: | ---: |\n\
                 | e1-32 | linear | 2 | 3.000 ± 1.414 | 0.850 ± 0.071 |\n\
                 | e1-32 | swift\\|vod | 1 | 1.000 ± 0.000 | — |\n"
            ),
            "{m}"
        );
        assert!(
            m.contains(
                "## stalls per viewer\n\n\
                 | scenario | linear | swift\\|vod |\n\
                 | --- | ---: | ---: |\n\
                 | e1-32 | 3.000 ± 1.414 | 1.000 ± 0.000 |\n\
                 | loss | 3.000 ± 0.000 | — |\n"
            ),
            "{m}"
        );
        // No figure without values anywhere.
        assert!(!m.contains("startup"), "{m}");
    }

    #[test]
    fn a_numeric_axis_gives_a_row_per_value() {
        let m = markdown("e1", &parse(TEST_CSV));
        assert!(
            m.contains(
                "## stalls per viewer\n\n\
                 | peers.l.count | linear | swift-vod |\n\
                 | --- | ---: | ---: |\n\
                 | 32 | 2.000 ± 1.414 | 0.500 ± 0.000 |\n\
                 | 96 | 10.000 ± 0.000 | 3.000 ± 1.414 |\n"
            ),
            "{m}"
        );
    }
}
