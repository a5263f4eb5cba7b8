//! The plots of a sweep report: a figure against the x axis, one line per
//! series with ±1 standard deviation whiskers (seed paper 000 Fig. 6's
//! shape), and startup-delay CDFs.

use plotters::prelude::*;

use super::plots::{cdf_svg, color, legend, span, Line, PlotResult, FONT, SIZE};

/// One line of a figure against the x axis: its label and `(x, mean,
/// standard deviation)` points.
pub(crate) type SeriesLine = (String, Vec<(f64, f64, f64)>);

/// `title`, with `x_desc` and `y_desc` on the axes, for `lines` of
/// `(series, [(x, mean, sd)])`.
pub(crate) fn by_x_svg(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    lines: &[SeriesLine],
) -> PlotResult {
    let pts = lines.iter().flat_map(|l| l.1.iter());
    let (mut xmin, mut xmax, mut ymax) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
    for &(x, m, sd) in pts {
        xmin = xmin.min(x);
        xmax = xmax.max(x);
        ymax = ymax.max(m + sd);
    }
    if !xmin.is_finite() {
        (xmin, xmax) = (0.0, 1.0);
    }
    let pad = ((xmax - xmin) * 0.05).max(0.5);
    let ymax = span(ymax) * 1.1;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, SIZE).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(60)
            .build_cartesian_2d((xmin - pad)..(xmax + pad), 0.0..ymax)?;
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()?;
        for (i, (label, points)) in lines.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(LineSeries::new(
                    points.iter().map(|p| (p.0, p.1)),
                    c.stroke_width(2),
                ))?
                .label(label.as_str())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            chart.draw_series(
                points
                    .iter()
                    .map(|p| Circle::new((p.0, p.1), 4, c.filled())),
            )?;
            chart.draw_series(points.iter().map(|&(x, m, sd)| {
                PathElement::new(vec![(x, (m - sd).max(0.0)), (x, m + sd)], c.stroke_width(1))
            }))?;
        }
        if !lines.is_empty() {
            legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        }
        root.present()?;
    }
    Ok(buf)
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
