//! The report's SVG plots, drawn with plotters into strings (SVG text needs
//! no font files).

use std::error::Error;

use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::html::escape;
use super::stats::{steps, thin};

/// Plot errors (plotters' drawing errors, boxed).
pub(crate) type PlotResult = Result<String, Box<dyn Error>>;

/// One line of a plot: legend label and points.
pub(crate) struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

pub(crate) const SIZE: (u32, u32) = (800, 500);
const PROGRESS_SIZE: (u32, u32) = (800, 640);
pub(crate) const FONT: &str = "sans-serif";

/// Tableau-10: distinguishable line colours.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// `max` if positive and finite, else 1 (a usable axis end).
pub(crate) fn span(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    }
}

fn max_x(lines: &[Line]) -> f64 {
    lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0))
        .fold(f64::NEG_INFINITY, f64::max)
}

/// Draws the legend of `chart`'s labelled series at `position`.
pub(crate) fn legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> Result<(), Box<dyn Error>> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font((FONT, 14))
        .draw()?;
    Ok(())
}

/// Draws line `i` of a plot whose lines may coincide (CDFs of groups or
/// algorithms that did alike): solid, dashed, dotted in turn, each in its
/// colour. A dashed or dotted line drawn over an equal one lets it show
/// through its gaps, where a solid line on top would hide it.
pub(crate) fn styled_line<'a, CT>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    i: usize,
    label: &str,
    pts: Vec<(f64, f64)>,
) -> Result<(), Box<dyn Error>>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let style = color(i).stroke_width(2);
    // Dash and gap lengths in pixels; the legend shows the same pattern.
    let (dash, gap) = match i % 3 {
        0 => {
            chart
                .draw_series(LineSeries::new(pts, style))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
            return Ok(());
        }
        1 => (8, 5),
        _ => (2, 4),
    };
    chart
        .draw_series(DashedLineSeries::new(pts, dash, gap, style))?
        .label(label)
        .legend(move |(x, y)| DashedPathElement::new(vec![(x, y), (x + 20, y)], dash, gap, style));
    Ok(())
}

/// A stand-in SVG with a title and a message, for when drawing fails.
pub(crate) fn fallback_svg(title: &str, msg: &str) -> String {
    let (w, h) = SIZE;
    format!(
        "<svg width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         xmlns=\"http://www.w3.org/2000/svg\">\n\
         <rect x=\"0\" y=\"0\" width=\"{w}\" height=\"{h}\" fill=\"#fff\"/>\n\
         <text x=\"20\" y=\"40\" font-family=\"{FONT}\" font-size=\"20\">{}</text>\n\
         <text x=\"20\" y=\"80\" font-family=\"{FONT}\" font-size=\"14\">{}</text>\n\
         </svg>\n",
        escape(title),
        escape(msg)
    )
}

/// CDF of leecher download times: one step line per group. `lines` hold
/// [`cdf`](super::stats::cdf) points; a group without completions still
/// gets its legend entry.
pub(crate) fn completion_cdf_svg(lines: &[Line]) -> PlotResult {
    cdf_svg(
        lines,
        [
            "Download time CDF (leechers, per group)",
            "Download time CDF: no completed downloads",
        ],
        ["download time (s)", "fraction of the group's leechers done"],
    )
}

/// A step-line CDF plot of `lines` ([`cdf`](super::stats::cdf) points):
/// `captions` with and without data, `axes` the x and y descriptions.
pub(crate) fn cdf_svg(lines: &[Line], captions: [&str; 2], axes: [&str; 2]) -> PlotResult {
    let empty = lines.iter().all(|l| l.points.is_empty());
    let caption = if empty { captions[1] } else { captions[0] };
    let xmax = span(max_x(lines)) * 1.05;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, (FONT, 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..xmax, 0.0..1.02)?;
        chart
            .configure_mesh()
            .x_desc(axes[0])
            .y_desc(axes[1])
            .draw()?;
        for (i, line) in lines.iter().enumerate() {
            let mut pts = Vec::with_capacity(line.points.len() * 2 + 2);
            if !line.points.is_empty() {
                pts.push((0.0, 0.0));
                pts.extend(steps(&line.points, 0.0));
                let last = pts.last().map_or(0.0, |p| p.1);
                pts.push((xmax, last));
            }
            let pts = thin(&pts, xmax / 2000.0, 1e-3, false);
            styled_line(&mut chart, i, &line.label, pts)?;
        }
        if !lines.is_empty() {
            legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        root.present()?;
    }
    Ok(buf)
}

/// Swarm progress: mean progress and the completed fraction over time
/// (top), peers and leechers present (bottom). Each series is a list of
/// `(t_s, value)` points.
pub(crate) fn progress_svg(
    mean_progress: &[(f64, f64)],
    completed_frac: &[(f64, f64)],
    present: &[(f64, f64)],
    leechers: &[(f64, f64)],
) -> PlotResult {
    let all = [mean_progress, completed_frac, present, leechers];
    let empty = all.iter().all(|s| s.is_empty());
    let tmax = span(
        all.iter()
            .flat_map(|s| s.iter().map(|p| p.0))
            .fold(f64::NEG_INFINITY, f64::max),
    );
    let nmax = span(
        present
            .iter()
            .chain(leechers)
            .map(|p| p.1)
            .fold(f64::NEG_INFINITY, f64::max),
    ) * 1.1;
    let caption = if empty {
        "Swarm progress: no progress samples"
    } else {
        "Swarm progress"
    };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, PROGRESS_SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let root = root.titled(caption, (FONT, 20))?;
        let (top, bottom) = root.split_vertically(PROGRESS_SIZE.1 * 55 / 100);

        let mut chart = ChartBuilder::on(&top)
            .margin(15)
            .x_label_area_size(35)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..tmax, 0.0..1.02)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("fraction")
            .draw()?;
        let series: [(&str, &[(f64, f64)]); 2] = [
            ("mean progress", mean_progress),
            ("completed / leechers", completed_frac),
        ];
        for (i, (label, pts)) in series.into_iter().enumerate() {
            let c = color(i);
            let pts = thin(pts, tmax / 2000.0, 1e-3, false);
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::UpperLeft)?;

        let mut chart = ChartBuilder::on(&bottom)
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..tmax, 0.0..nmax)?;
        chart
            .configure_mesh()
            .x_desc("time (s)")
            .y_desc("peers")
            .y_label_formatter(&|y| format!("{y:.0}"))
            .draw()?;
        let series: [(&str, &[(f64, f64)]); 2] =
            [("peers present", present), ("leechers present", leechers)];
        for (i, (label, pts)) in series.into_iter().enumerate() {
            let c = color(i + 2);
            let pts = thin(pts, tmax / 2000.0, nmax / 1000.0, false);
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
        }
        legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        root.present()?;
    }
    Ok(buf)
}

/// CCDF of queue occupancy, log y: one step line per link. `lines` hold
/// [`ccdf`](super::stats::ccdf) points (the report draws none without).
pub(crate) fn queue_ccdf_svg(lines: &[Line]) -> PlotResult {
    ccdf_svg(
        lines,
        "Queue occupancy CCDF (recorded links)",
        ["queue backlog (ms)", "P(backlog > x)"],
    )
}

/// CCDF of the per-packet queueing delay of each traced flow
/// (`record.waits`), log y, like [`queue_ccdf_svg`].
pub(crate) fn wait_ccdf_svg(lines: &[Line]) -> PlotResult {
    ccdf_svg(
        lines,
        "Queueing delay CCDF (traced flows)",
        ["queueing delay (ms)", "P(delay > x)"],
    )
}

/// A log-y CCDF chart of `lines` titled `caption`, `axes` the x and y
/// descriptions.
fn ccdf_svg(lines: &[Line], caption: &str, axes: [&str; 2]) -> PlotResult {
    let lines: Vec<&Line> = lines.iter().filter(|l| !l.points.is_empty()).collect();
    let xmax = span(
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .fold(f64::NEG_INFINITY, f64::max),
    ) * 1.05;
    let pmin = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .filter(|&p| p > 0.0)
        .fold(1.0f64, f64::min);
    // Down to the next power of ten below the smallest probability shown.
    let ymin = 10f64.powf(pmin.log10().floor() - if pmin >= 1.0 { 1.0 } else { 0.0 });
    let ymin = ymin.max(1e-12);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, (FONT, 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..xmax, (ymin..1.0).log_scale())?;
        chart
            .configure_mesh()
            .x_desc(axes[0])
            .y_desc(axes[1])
            .y_label_formatter(&|y| format!("{y:e}"))
            .draw()?;
        for (i, line) in lines.iter().enumerate() {
            let mut pts = Vec::with_capacity(line.points.len() * 2 + 1);
            pts.push((0.0, 1.0));
            pts.extend(steps(&line.points, 1.0).into_iter().filter(|p| p.1 > 0.0));
            let pts = thin(&pts, xmax / 2000.0, 2e-3, true);
            styled_line(&mut chart, i, &line.label, pts)?;
        }
        if !lines.is_empty() {
            legend(&mut chart, SeriesLabelPosition::LowerLeft)?;
        }
        root.present()?;
    }
    Ok(buf)
}
