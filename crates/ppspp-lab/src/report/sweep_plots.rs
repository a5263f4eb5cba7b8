//! The plots of a sweep report: a figure against a numeric axis, one line
//! per series with ±1 standard deviation whiskers (seed paper 000 Fig. 6's
//! shape); the same figure in bars per category when no axis is numeric;
//! and startup-delay CDFs.

use std::error::Error;
use std::ops::Range;

use plotters::coord::ranged1d::{
    KeyPointHint, KeyPointWeight, NoDefaultFormatting, Ranged, ValueFormatter,
};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::plots::{cdf_svg, color, legend, span, Line, PlotResult, FONT, SIZE};

/// One line of a figure against the x axis: its label and `(x, mean,
/// standard deviation)` points.
pub(crate) type SeriesLine = (String, Vec<(f64, f64, f64)>);

/// One series of bars: its label and `(mean, standard deviation)` per
/// category (`None` where it has no value).
pub(crate) type SeriesBars = (String, Vec<Option<(f64, f64)>>);

/// Most x values that get a tick each; beyond, plotters picks round ones.
const MAX_TICKS: usize = 15;

/// A tick label: integers without decimals (swarm sizes read `32`, not
/// `32.0`), other values as short as they print.
fn tick(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// An x axis over `range` with a tick at each of `ticks` (the sweep's grid
/// values, or one per bar category), labelled by [`tick`]; with no
/// `ticks`, plotters' round ones.
struct Ticked {
    range: Range<f64>,
    ticks: Vec<f64>,
}

impl Ticked {
    fn linear(&self) -> RangedCoordf64 {
        self.range.clone().into()
    }
}

impl Ranged for Ticked {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.linear().map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        match (self.ticks.is_empty(), hint.weight()) {
            (true, _) => self.linear().key_points(hint),
            // Ticks, and grid lines, only at the given values.
            (false, KeyPointWeight::Bold) => self.ticks.clone(),
            (false, _) => Vec::new(),
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

impl ValueFormatter<f64> for Ticked {
    fn format(value: &f64) -> String {
        tick(*value)
    }
}

/// Draws `points` with the marker of series `i` and labels the series
/// `label` in the legend (a short line through the marker). The markers
/// differ in shape, not only in colour, so series stay apart in grey print
/// and where they overlap.
fn markers<'a, CT>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    i: usize,
    label: &str,
    points: &[(f64, f64)],
) -> Result<(), Box<dyn Error>>
where
    CT: CoordTranslate<From = (f64, f64)>,
{
    let c = color(i);
    // The legend's glyph: a short line with the marker on it.
    let line = move |at: (i32, i32)| {
        EmptyElement::at(at) + PathElement::new(vec![(0, 0), (20, 0)], c.stroke_width(2))
    };
    let pts = points.iter().copied();
    match i % 4 {
        0 => chart
            .draw_series(pts.map(|p| Circle::new(p, 5, c.filled())))?
            .label(label)
            .legend(move |at| line(at) + Circle::new((10, 0), 5, c.filled())),
        1 => chart
            .draw_series(pts.map(|p| TriangleMarker::new(p, 6, c.filled())))?
            .label(label)
            .legend(move |at| line(at) + TriangleMarker::new((10, 0), 6, c.filled())),
        2 => chart
            .draw_series(
                pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], c.filled())),
            )?
            .label(label)
            .legend(move |at| line(at) + Rectangle::new([(6, -4), (14, 4)], c.filled())),
        _ => chart
            .draw_series(pts.map(|p| Cross::new(p, 5, c.stroke_width(3))))?
            .label(label)
            .legend(move |at| line(at) + Cross::new((10, 0), 5, c.stroke_width(3))),
    };
    Ok(())
}

/// How far apart series are drawn at one x so that equal values do not
/// hide each other: a fifth of the smallest gap between x values, shared
/// among the series (spans `1` when there is one x value).
fn dodge(xs: &[f64], series: usize) -> f64 {
    let gap = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|g| *g > 0.0)
        .fold(f64::INFINITY, f64::min);
    let gap = if gap.is_finite() { gap } else { 1.0 };
    if series > 1 {
        0.2 * gap / (series - 1) as f64
    } else {
        0.0
    }
}

/// `title`, with `x_desc` and `y_desc` on the axes, for `lines` of
/// `(series, [(x, mean, sd)])`.
///
/// Series often coincide (every algorithm with no stall at a small swarm):
/// drawn on top of each other, the last would hide the others entirely.
/// So each series is shifted by a small, fixed step in x (a dodge, as in
/// statistics plots: a few pixels, well under the gap between grid
/// values, whose ticks stay exact) and has its own marker shape; equal
/// values show as markers side by side.
pub(crate) fn by_x_svg(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[SeriesLine],
) -> PlotResult {
    let mut xs: Vec<f64> = lines.iter().flat_map(|l| l.1.iter().map(|p| p.0)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let ymax = lines
        .iter()
        .flat_map(|l| l.1.iter().map(|p| p.1 + p.2))
        .fold(0.0f64, f64::max);
    let (xmin, xmax) = match (xs.first(), xs.last()) {
        (Some(&a), Some(&b)) => (a, b),
        _ => (0.0, 1.0),
    };
    let step = dodge(&xs, lines.len());
    let pad = ((xmax - xmin) * 0.05).max(0.5) + step * lines.len() as f64 / 2.0;
    let x = Ticked {
        range: (xmin - pad)..(xmax + pad),
        // A tick at every grid value, unless there are too many.
        ticks: if xs.len() <= MAX_TICKS {
            xs
        } else {
            Vec::new()
        },
    };
    let ymax = span(ymax);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(x, 0.0..ymax * 1.1)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()?;
        let mid = (lines.len() as f64 - 1.0) / 2.0;
        for (i, (label, points)) in lines.iter().enumerate() {
            let c = color(i);
            let shift = (i as f64 - mid) * step;
            let at: Vec<(f64, f64)> = points.iter().map(|p| (p.0 + shift, p.1)).collect();
            chart.draw_series(LineSeries::new(at.iter().copied(), c.stroke_width(2)))?;
            chart.draw_series(points.iter().map(|&(x, m, sd)| {
                let x = x + shift;
                PathElement::new(vec![(x, (m - sd).max(0.0)), (x, m + sd)], c.stroke_width(1))
            }))?;
            markers(&mut chart, i, label, &at)?;
        }
        if !lines.is_empty() {
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        root.present()?;
    }
    Ok(buf)
}

/// `title`: bars of a figure per category (`x_desc` names them), one bar
/// per series side by side, each with its ±1 standard deviation whisker
/// and its mean written above — so a bar of height 0 still shows, and
/// equal bars stay told apart by their place and colour.
pub(crate) fn bars_svg(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    categories: &[String],
    series: &[SeriesBars],
) -> PlotResult {
    let ymax = series
        .iter()
        .flat_map(|s| s.1.iter().flatten().map(|(m, sd)| m + sd))
        .fold(0.0f64, f64::max);
    let n = categories.len().max(1);
    let ticks: Vec<f64> = (0..n).map(|i| i as f64).collect();
    // Each series' slot in a category; the bars of a category are centred
    // on its tick and together no wider than 0.8 of the category.
    let slot = (0.8 / series.len().max(1) as f64).min(0.5);
    let first = -slot * series.len() as f64 / 2.0;
    let mut buf = String::new();
    {
        let root =
            SVGBackend::with_string(&mut buf, bars_size(n, series.len())).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d(
                Ticked {
                    range: -0.5..n as f64 - 0.5,
                    ticks,
                },
                // Room above the tallest whisker for its value, and for
                // the legend (a line per series) above that, so that it
                // hides no bar.
                0.0..span(ymax) * headroom(series.len()),
            )?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .x_label_formatter(&|x| {
                let i = x.round();
                categories
                    .get(i as usize)
                    .filter(|_| i >= 0.0)
                    .cloned()
                    .unwrap_or_default()
            })
            .draw()?;
        let value_font = (FONT, 12)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        for (i, (label, bars)) in series.iter().enumerate() {
            let c = color(i);
            let centre = |k: usize| k as f64 + first + (i as f64 + 0.5) * slot;
            let half = slot * 0.45;
            let have: Vec<(f64, f64, f64)> = bars
                .iter()
                .enumerate()
                .filter_map(|(k, b)| b.map(|(m, sd)| (centre(k), m, sd)))
                .collect();
            chart
                .draw_series(have.iter().map(|&(x, m, _)| {
                    Rectangle::new([(x - half, 0.0), (x + half, m)], c.mix(0.8).filled())
                }))?
                .label(label.as_str())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], c.filled()));
            // The whisker, with caps a third of the bar wide.
            let cap = half / 3.0;
            chart.draw_series(have.iter().flat_map(|&(x, m, sd)| {
                let (lo, hi) = ((m - sd).max(0.0), m + sd);
                [
                    vec![(x, lo), (x, hi)],
                    vec![(x - cap, lo), (x + cap, lo)],
                    vec![(x - cap, hi), (x + cap, hi)],
                ]
                .map(|p| PathElement::new(p, BLACK.stroke_width(1)))
            }))?;
            chart.draw_series(have.iter().map(|&(x, m, sd)| {
                Text::new(format!("{m:.3}"), (x, m + sd), value_font.clone())
            }))?;
        }
        // A lone series ("all": no other axis) needs no legend.
        if series.len() > 1 {
            legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        root.present()?;
    }
    Ok(buf)
}

/// How far above the tallest bar the y axis goes, as a multiple of it:
/// room for the value labels, and for the legend when there is one (a
/// line of about a twelfth of the plot's height per series).
fn headroom(series: usize) -> f64 {
    if series > 1 {
        1.25 + 0.09 * series as f64
    } else {
        1.2
    }
}

/// Pixels per bar, so that its value label (`0.123`) fits above it.
const BAR_PX: u32 = 45;

/// The size of a bar chart of `categories` × `series` bars: the usual
/// size, wider when the bars would not fit (a family of a dozen scenarios
/// by four algorithms).
fn bars_size(categories: usize, series: usize) -> (u32, u32) {
    let per_category = BAR_PX * series.max(1) as u32 + 20;
    let width = 100 + per_category * categories.max(1) as u32;
    (SIZE.0.max(width), SIZE.1)
}

/// Startup delay CDF, one line per series.
pub(crate) fn startup_cdf_svg(title: &str, lines: &[Line]) -> PlotResult {
    let none = format!("{title}: no viewer started");
    cdf_svg(
        lines,
        [title, &none],
        ["startup delay (s)", "fraction of viewers started"],
    )
}

/// Whether `svg` has a text element reading `text` (plotters writes its
/// content on a line of its own).
#[cfg(test)]
pub(crate) fn svg_has_text(svg: &str, text: &str) -> bool {
    svg.contains(&format!(">\n{text}\n<"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ticks_print_without_decimals() {
        assert_eq!(tick(32.0), "32");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(-2.0), "-2");
    }

    #[test]
    fn lines_against_an_integer_axis_tick_at_its_values() {
        let lines = vec![
            (
                "linear".to_string(),
                vec![(32.0, 0.0, 0.0), (96.0, 1.0, 0.5)],
            ),
            (
                "std-vod".to_string(),
                vec![(32.0, 0.0, 0.0), (96.0, 1.0, 0.5)],
            ),
        ];
        let svg = by_x_svg("t", "peers", "stalls", &lines).unwrap();
        assert!(
            svg_has_text(&svg, "32") && svg_has_text(&svg, "96"),
            "{svg}"
        );
        assert!(!svg.contains("32.0") && !svg.contains("96.0"), "{svg}");
        // Equal series are drawn side by side: two distinct x positions
        // for the two markers at x = 32 (a circle and a triangle).
        assert!(svg.contains("<circle") && svg.contains("<polygon"), "{svg}");
        assert_eq!(dodge(&[32.0, 96.0], 2), 0.2 * 64.0);
        assert_eq!(dodge(&[32.0], 1), 0.0);
    }

    #[test]
    fn many_bars_widen_the_chart() {
        assert_eq!(bars_size(2, 2), SIZE);
        let (w, h) = bars_size(13, 4);
        assert_eq!(h, SIZE.1);
        assert!(w >= 13 * 4 * BAR_PX, "{w}");
    }

    #[test]
    fn bars_show_every_series_even_at_zero() {
        let cats = vec!["linear".to_string(), "std-vod".to_string()];
        let series = vec![
            (
                "weighted".to_string(),
                vec![Some((0.0, 0.0)), Some((0.042, 0.024))],
            ),
            ("plain".to_string(), vec![Some((0.0, 0.0)), None]),
        ];
        let svg = bars_svg("t", "algorithm", "stalls", &cats, &series).unwrap();
        for text in ["linear", "std-vod", "0.042", "weighted", "plain"] {
            assert!(svg_has_text(&svg, text), "{text}: {svg}");
        }
        // Both zero bars are labelled, the missing one is not.
        assert_eq!(svg.matches(">\n0.000\n<").count(), 2, "{svg}");
    }
}
