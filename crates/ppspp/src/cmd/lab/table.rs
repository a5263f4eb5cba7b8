//! The table `ppspp lab run` prints: the run's headline figures. A figure
//! without a value (no leecher completed, no viewer started) prints as `—`
//! with a note saying why, never as NaN.

use std::fmt::Write as _;
use std::path::Path;

use ppspp_lab::results::{EmulationFigures, Summary};

/// What a figure without a value prints as.
const NONE: &str = "—";

/// Seconds with one decimal, or [`NONE`].
fn fmt_s(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        NONE.into()
    }
}

/// `x` with `decimals` decimals, or [`NONE`].
fn fmt_f(x: f64, decimals: usize) -> String {
    if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        NONE.into()
    }
}

/// The live figures of a run whose scenario streams live (issue 24's
/// goal figures: lag, continuity, the source's upload).
pub fn render_live(l: &ppspp_lab::live::metrics::LiveSummary) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "live          lag s p50 {}  p95 {}  max {}; continuity mean {}  worst {}; \
         skips {}/viewer ({} s)",
        fmt_s(l.lag_s[0]),
        fmt_s(l.lag_s[1]),
        fmt_s(l.lag_s[2]),
        fmt_f(l.continuity[0], 3),
        fmt_f(l.continuity[1], 3),
        fmt_f(l.skips_per_viewer, 2),
        fmt_s(l.skipped_s_per_viewer)
    );
    let _ = writeln!(
        t,
        "live bytes    {:.1} MB from the source, {:.1} MB from peers; the source sent {}x the stream",
        l.bytes_from_source as f64 / 1e6,
        l.bytes_from_peers as f64 / 1e6,
        fmt_f(l.source_upload_x, 2)
    );
    let _ = writeln!(
        t,
        "live delivery chunk made to verified at a viewer, s p50 {}  p95 {}",
        fmt_f(l.delivery_s[0], 2),
        fmt_f(l.delivery_s[1], 2)
    );
    t
}

/// The table of a run's summary; `out` is the results folder, if written.
pub fn render(s: &Summary, out: Option<&Path>) -> String {
    let mut t = render_figures(s);
    let _ = writeln!(
        t,
        "time          virtual {:.1} s, wall {:.1} s ({:.2}x real time), {} events ({:.0}/s)",
        s.virtual_s,
        s.wall_s,
        s.virtual_s / s.wall_s.max(1e-9),
        s.events,
        s.events as f64 / s.wall_s.max(1e-9)
    );
    let _ = writeln!(t, "trace_hash    {}", s.trace_hash);
    if let Some(dir) = out {
        let _ = writeln!(t, "results       {}", dir.display());
    }
    t
}

/// The table of an emulated run (`ppspp lab emulate`): its summary, then
/// the wall clock, the CPU and the shaper's lateness in place of virtual
/// time and the trace hash.
pub fn render_emulated(s: &Summary, e: &EmulationFigures, out: Option<&Path>) -> String {
    let mut t = render_figures(s);
    let _ = writeln!(
        t,
        "time          wall {:.1} s, CPU {} s ({} cores), {} datagrams shaped",
        s.wall_s,
        fmt_s(e.cpu_s),
        fmt_f(e.cpu_s / s.wall_s.max(1e-9), 2),
        e.datagrams_offered
    );
    let ms = |us: u64| us as f64 / 1e3;
    let _ = writeln!(
        t,
        "lateness ms   p50 {:.2}  p99 {:.2}  p99.9 {:.2}  max {:.2} (the shaper against the model's schedule)",
        ms(e.lateness_us[0]),
        ms(e.lateness_us[1]),
        ms(e.lateness_us[2]),
        ms(e.lateness_us[3])
    );
    let _ = writeln!(
        t,
        "timers ms     p50 {:.2}  p99 {:.2}  max {:.2}; p99 of the median peer {:.2}, of the worst {:.2} ({} wakeups)",
        ms(e.timer_lateness_us[0]),
        ms(e.timer_lateness_us[1]),
        ms(e.timer_lateness_us[3]),
        ms(e.peer_p99_lateness_us[0]),
        ms(e.peer_p99_lateness_us[1]),
        e.timer_wakeups
    );
    if let Some(dir) = out {
        let _ = writeln!(t, "results       {}", dir.display());
    }
    t
}

/// The figures both tables share: peers, downloads, viewers, bytes.
fn render_figures(s: &Summary) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "scenario      {} (seed {})", s.name, s.seed);
    let _ = writeln!(
        t,
        "peers         {} ({} leechers, {} completed)",
        s.peers, s.leechers, s.completed
    );
    let d = s.download_s;
    let _ = writeln!(
        t,
        "download s    mean {}  p50 {}  p95 {}  max {}",
        fmt_s(d[0]),
        fmt_s(d[1]),
        fmt_s(d[2]),
        fmt_s(d[3])
    );
    if let Some(p) = &s.playback {
        let _ = writeln!(
            t,
            "viewers       {} ({} started): startup s mean {}  p95 {}; stalls {}/viewer \
             ({} s); continuity {}",
            p.viewers,
            p.started,
            fmt_s(p.startup_s[0]),
            fmt_s(p.startup_s[2]),
            fmt_f(p.mean_stalls, 2),
            fmt_s(p.mean_stall_s),
            fmt_f(p.mean_continuity, 3)
        );
        // Seeks only when the viewers seek: most scenarios have none.
        if p.mean_seeks > 0.0 {
            let _ = writeln!(
                t,
                "seeks         {}/viewer, {} waited/viewer ({} s; not stalls)",
                fmt_f(p.mean_seeks, 2),
                fmt_f(p.mean_seek_waits, 2),
                fmt_s(p.mean_seek_wait_s)
            );
        }
    }
    let why = s.no_data_reasons();
    if !why.is_empty() {
        let _ = writeln!(t, "{NONE}             {}", why.join("; "));
    }
    if s.messages_sent.total_bytes() > 0 {
        let _ = writeln!(
            t,
            "bytes sent    {:.1} MB in messages: {}",
            s.messages_sent.total_bytes() as f64 / 1e6,
            ppspp_lab::results::message_shares(&s.messages_sent, 5)
        );
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use ppspp_lab::results::{PlaybackSummary, NO_COMPLETION, NO_VIEWER_STARTED};

    /// A run in which 24 viewers never started and nobody completed.
    fn nothing_happened() -> Summary {
        Summary {
            name: "vod".into(),
            seed: 1,
            trace_hash: "ab".into(),
            trace_records: 0,
            events: 10,
            virtual_s: 300.0,
            wall_s: 1.0,
            peers: 25,
            leechers: 24,
            completed: 0,
            download_s: [f64::NAN; 4],
            playback: Some(PlaybackSummary {
                viewers: 24,
                started: 0,
                startup_s: [f64::NAN; 4],
                mean_stalls: 0.0,
                mean_stall_s: 0.0,
                mean_continuity: f64::NAN,
                mean_seeks: 0.0,
                mean_seek_waits: 0.0,
                mean_seek_wait_s: 0.0,
            }),
            messages_sent: Default::default(),
            datagrams_dropped: Default::default(),
        }
    }

    #[test]
    fn figures_without_value_print_a_dash_and_why() {
        let t = render(&nothing_happened(), None);
        assert!(!t.to_lowercase().contains("nan"), "{t}");
        assert!(t.contains("continuity —"), "{t}");
        assert!(t.contains("download s    mean —  p50 —"), "{t}");
        assert!(
            t.contains(&format!(
                "—             {NO_COMPLETION}; {NO_VIEWER_STARTED}"
            )),
            "{t}"
        );
    }

    #[test]
    fn a_full_run_has_no_dash_note() {
        let mut s = nothing_happened();
        s.completed = 24;
        s.download_s = [10.0, 9.0, 12.0, 13.0];
        s.playback = None;
        let t = render(&s, Some(Path::new("out")));
        assert!(!t.contains('—'), "{t}");
        assert!(t.contains("mean 10.0  p50 9.0"), "{t}");
        assert!(t.ends_with("results       out\n"), "{t}");
    }
}
