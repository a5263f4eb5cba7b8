//! The self-contained HTML page of a report (inline CSS, no scripts, no
//! network; plots are the SVG files beside it).

use std::fmt::Write as _;

use serde_json::Value;

use super::csv::LinkStatRow;
use super::stats::GroupStats;

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

const NONE: &str = "—";

/// A float for a table: `—` if not finite, 3 decimals, none from 100 000.
pub(crate) fn fmt_f(x: f64) -> String {
    if !x.is_finite() {
        NONE.into()
    } else if x.abs() >= 1e5 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    }
}

/// A byte count with an SI unit (`—` if not finite).
pub(crate) fn fmt_bytes(x: f64) -> String {
    if !x.is_finite() {
        return NONE.into();
    }
    if x.abs() < 1000.0 {
        return format!("{x:.0} B");
    }
    let mut v = x / 1000.0;
    for unit in ["kB", "MB", "GB"] {
        if v.abs() < 1000.0 {
            return format!("{v:.2} {unit}");
        }
        v /= 1000.0;
    }
    format!("{v:.2} TB")
}

/// A link capacity (0 means unlimited).
pub(crate) fn fmt_bps(bps: u64) -> String {
    match bps {
        0 => "unlimited".into(),
        b if b < 1_000 => format!("{b} bit/s"),
        b if b < 1_000_000 => format!("{} kbit/s", b as f64 / 1e3),
        b if b < 1_000_000_000 => format!("{} Mbit/s", b as f64 / 1e6),
        b => format!("{} Gbit/s", b as f64 / 1e9),
    }
}

/// A JSON value for a table cell, escaped (`—` for null or absent).
fn jv(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => NONE.into(),
        Some(Value::Number(n)) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => u.to_string(),
            (_, Some(i), _) => i.to_string(),
            (_, _, Some(f)) => fmt_f(f),
            _ => escape(&n.to_string()),
        },
        Some(Value::String(s)) => escape(s),
        Some(other) => escape(&other.to_string()),
    }
}

/// Everything the page shows.
pub(crate) struct Page<'a> {
    /// Page title and heading (unescaped).
    pub title: &'a str,
    /// `summary.json`, if read.
    pub summary: Option<&'a Value>,
    /// Per-group figures from `peers.csv`.
    pub groups: &'a [GroupStats],
    /// Links with the most drops, and how many links `link_stats.csv` held
    /// (`None` if it gave no data).
    pub top_links: &'a [&'a LinkStatRow],
    pub links_total: Option<usize>,
    /// The scenario text as run.
    pub scenario: Option<&'a str>,
    /// The plots drawn (files under `plots/`), shown in [`FIGURES`] order.
    pub figures: &'a [&'a str],
    /// Notes about missing or partly malformed inputs (unescaped).
    pub notes: &'a [String],
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em auto;max-width:1000px;\
padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:0.5em 0 1.5em}\
th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:right}\
th:first-child,td:first-child{text-align:left}\
thead th{background:#f0f0f0}\
figure{margin:1em 0}img{max-width:100%;border:1px solid #ddd}\
pre{background:#f7f7f7;border:1px solid #ddd;padding:0.8em;overflow:auto}\
.nodata{color:#888;font-style:italic}";

pub(crate) fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    out.push_str("<table>\n<thead><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{cell}</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

fn nodata(out: &mut String, what: &str) {
    let _ = writeln!(out, "<p class=\"nodata\">{}</p>", escape(what));
}

/// The footnote of the summary table: why its `—` figures have none.
fn summary_footnote(s: &Value) -> Option<String> {
    let completed = s.get("completed").and_then(Value::as_u64)?;
    let viewers = s.get("playback").filter(|p| p.is_object()).map(|p| {
        let started = p.get("started").and_then(Value::as_u64).unwrap_or(0);
        let continuity = p.get("continuity").is_some_and(Value::is_number);
        (started as usize, continuity)
    });
    let why = crate::results::no_data_reasons(completed as usize, viewers);
    (!why.is_empty()).then(|| format!("{NONE} : {}.", why.join("; ")))
}

fn summary_rows(s: &Value) -> Vec<Vec<String>> {
    let get = |path: &[&str]| {
        let mut v = Some(s);
        for k in path {
            v = v.and_then(|v| v.get(k));
        }
        jv(v)
    };
    let pair = |a: &str, b: &str| format!("{} / {}", get(&[a]), get(&[b]));
    let rows: Vec<(&str, String)> = vec![
        ("Scenario", get(&["name"])),
        ("Seed", get(&["seed"])),
        ("ppspp version", get(&["version"])),
        ("Virtual time (s)", get(&["virtual_s"])),
        ("Wall time (s)", get(&["wall_s"])),
        ("Wall / virtual time", get(&["wall_per_virtual"])),
        ("Events", get(&["events"])),
        ("Events / s", get(&["events_per_s"])),
        ("Trace records", get(&["trace_records"])),
        (
            "Trace hash",
            format!("<code>{}</code>", get(&["trace_hash"])),
        ),
        ("Peers", get(&["peers"])),
        ("Completed / leechers", pair("completed", "leechers")),
        ("Download time mean (s)", get(&["download_s", "mean"])),
        ("Download time p50 (s)", get(&["download_s", "p50"])),
        ("Download time p95 (s)", get(&["download_s", "p95"])),
        ("Download time max (s)", get(&["download_s", "max"])),
        ("Packets sent", get(&["packets", "sent"])),
        ("Packets delivered", get(&["packets", "delivered"])),
        (
            "Packets dropped by queues",
            get(&["packets", "queue_drops"]),
        ),
        ("Packets lost", get(&["packets", "lost"])),
        (
            "Packets to absent peers",
            get(&["packets", "to_absent_peers"]),
        ),
    ];
    let mut rows = rows;
    if s.get("playback").is_some_and(Value::is_object) {
        let play = |k: &str| get(&["playback", k]);
        let viewers = format!("{} / {}", play("viewers"), play("started"));
        let playback = [
            ("Viewers / started", viewers),
            (
                "Startup delay mean (s)",
                get(&["playback", "startup_s", "mean"]),
            ),
            (
                "Startup delay p95 (s)",
                get(&["playback", "startup_s", "p95"]),
            ),
            ("Stalls per viewer", play("stalls_per_viewer")),
            ("Stall time per viewer (s)", play("stall_s_per_viewer")),
            ("Continuity index", play("continuity")),
        ];
        // After the download times, before the packet counters.
        let at = rows
            .iter()
            .position(|(k, _)| *k == "Packets sent")
            .unwrap_or(rows.len());
        rows.splice(at..at, playback);
    }
    if s.get("live").is_some_and(Value::is_object) {
        let at = rows
            .iter()
            .position(|(k, _)| *k == "Packets sent")
            .unwrap_or(rows.len());
        rows.splice(at..at, live_rows(&get));
    }
    if s.get("emulation").is_some_and(Value::is_object) {
        emulation_rows(&mut rows, &get);
    }
    let mut rows: Vec<Vec<String>> = rows.into_iter().map(|(k, v)| vec![escape(k), v]).collect();
    rows.extend(message_rows(s));
    rows
}

/// A real-time run's (`ppspp lab emulate`): its CPU and the shaper's
/// lateness and counters in place of the simulator's virtual time, events
/// and trace, which it has not.
fn emulation_rows(rows: &mut Vec<(&'static str, String)>, get: &dyn Fn(&[&str]) -> String) {
    const SIMULATOR_ONLY: [&str; 6] = [
        "Virtual time (s)",
        "Wall / virtual time",
        "Events",
        "Events / s",
        "Trace records",
        "Trace hash",
    ];
    rows.retain(|(k, _)| !SIMULATOR_ONLY.contains(k));
    let e = |k: &str| get(&["emulation", k]);
    let late = |q: &str| get(&["emulation", "lateness_us", q]);
    let at = rows
        .iter()
        .position(|(k, _)| *k == "Wall time (s)")
        .map_or(rows.len(), |i| i + 1);
    let added = [
        ("Run", "emulated in real time".to_string()),
        ("CPU time (s)", e("cpu_s")),
        ("CPU cores used (CPU / wall)", e("cpu_cores")),
        (
            "Shaper lateness p50 / p99 / p99.9 / max (µs)",
            format!(
                "{} / {} / {} / {}",
                late("p50"),
                late("p99"),
                late("p999"),
                late("max")
            ),
        ),
        (
            "Node timer lateness p50 / p99 / p99.9 / max (µs)",
            format!(
                "{} / {} / {} / {}",
                get(&["emulation", "timer_lateness_us", "p50"]),
                get(&["emulation", "timer_lateness_us", "p99"]),
                get(&["emulation", "timer_lateness_us", "p999"]),
                get(&["emulation", "timer_lateness_us", "max"])
            ),
        ),
        (
            "Node timer lateness p99: median peer / worst peer (µs)",
            format!(
                "{} / {}",
                get(&["emulation", "peer_p99_lateness_us", "median_peer"]),
                get(&["emulation", "peer_p99_lateness_us", "worst_peer"])
            ),
        ),
        (
            "Datagrams shaped / to the kernel / to nodes / to no node",
            format!(
                "{} / {} / {} / {}",
                e("datagrams_offered"),
                e("datagrams_sent"),
                e("datagrams_received"),
                e("datagrams_unknown")
            ),
        ),
    ];
    rows.splice(at..at, added);
}

/// The live stream's rows (RFC 7574 §6.1): the viewers' lag, continuity,
/// stalls and skips, and where their bytes came from.
fn live_rows(get: &dyn Fn(&[&str]) -> String) -> Vec<(&'static str, String)> {
    let l = |k: &str| get(&["live", k]);
    let l2 = |k: &str, q: &str| get(&["live", k, q]);
    vec![
        ("Live stream bitrate (bit/s)", l("bitrate_bps")),
        ("Live media made (s)", l("streamed_s")),
        (
            "Live viewers / hooked in / started / ended",
            format!(
                "{} / {} / {} / {}",
                l("viewers"),
                l("hooked"),
                l("started"),
                l("ended")
            ),
        ),
        ("Live startup delay p95 (s)", l2("startup_s", "p95")),
        ("Live lag p50 (s)", l2("lag_s", "p50")),
        ("Live lag p95 (s)", l2("lag_s", "p95")),
        ("Live lag max (s)", l2("lag_s", "max")),
        ("Live delivery delay p50 (s)", l2("delivery_s", "p50")),
        ("Live delivery delay p95 (s)", l2("delivery_s", "p95")),
        ("Live continuity mean", l2("continuity", "mean")),
        ("Live continuity worst viewer", l2("continuity", "min")),
        ("Live stalls per viewer", l("stalls_per_viewer")),
        ("Live stall time per viewer (s)", l("stall_s_per_viewer")),
        ("Live skips per viewer", l("skips_per_viewer")),
        (
            "Live media skipped per viewer (s)",
            l("skipped_s_per_viewer"),
        ),
        (
            "Live bytes to viewers from the source",
            l("bytes_from_source"),
        ),
        ("Live bytes to viewers from peers", l("bytes_from_peers")),
        ("Live source upload (x stream rate)", l("source_upload_x")),
    ]
}

/// One row per message type sent: its bytes and their share of all bytes
/// sent in messages, the largest first.
fn message_rows(s: &Value) -> Vec<Vec<String>> {
    let Some(types) = s.get("messages_sent").and_then(Value::as_object) else {
        return Vec::new();
    };
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64).unwrap_or(0);
    let mut by: Vec<(&String, u64, u64)> = types
        .iter()
        .map(|(name, v)| (name, field(v, "messages"), field(v, "bytes")))
        .collect();
    by.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
    let total = by.iter().map(|t| t.2).sum::<u64>().max(1) as f64;
    by.into_iter()
        .map(|(name, messages, bytes)| {
            vec![
                escape(&format!("{name} messages sent")),
                format!(
                    "{messages}: {} ({:.1} % of message bytes)",
                    fmt_bytes(bytes as f64),
                    100.0 * bytes as f64 / total
                ),
            ]
        })
        .collect()
}

fn group_rows(groups: &[GroupStats]) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| {
            vec![
                escape(&g.group),
                g.peers.to_string(),
                g.leechers.to_string(),
                g.times.len().to_string(),
                fmt_f(g.mean_download()),
                fmt_f(g.median_download()),
                fmt_bytes(g.mean_from_seeders),
                fmt_bytes(g.mean_from_peers),
                fmt_bytes(g.mean_up),
            ]
        })
        .collect()
}

fn link_rows(links: &[&LinkStatRow]) -> Vec<Vec<String>> {
    links
        .iter()
        .map(|l| {
            let rate = if l.packets_in > 0 {
                format!("{:.2}", l.drops() as f64 / l.packets_in as f64 * 100.0)
            } else {
                NONE.into()
            };
            vec![
                escape(&l.name),
                fmt_bps(l.capacity_bps),
                l.packets_in.to_string(),
                l.drops_queue.to_string(),
                l.drops_loss.to_string(),
                rate,
                fmt_bytes(l.bytes_out as f64),
                fmt_bytes(l.mean_backlog_bytes),
                fmt_bytes(l.max_backlog_bytes as f64),
                fmt_f(l.mean_wait_ms),
            ]
        })
        .collect()
}

/// The plots the page may embed: file under `plots/`, alt text, caption.
const FIGURES: [(&str, &str, &str); 4] = [
    (
        "completion_cdf.svg",
        "Download time CDF",
        "Fraction of each group's leechers done within a download time; \
         curves end below 1 when some never completed.",
    ),
    (
        "progress.svg",
        "Swarm progress",
        "Mean download progress and completed fraction of leechers over time; \
         peers and leechers present below.",
    ),
    (
        "queue_ccdf.svg",
        "Queue occupancy CCDF",
        "Probability that a recorded link's queue holds more than x ms of \
         traffic, sampled after every dequeue.",
    ),
    (
        "wait_ccdf.svg",
        "Queueing delay CCDF",
        "Probability that a packet of a traced flow (record.waits) waited more \
         than x ms in its link's queue.",
    ),
];

/// Renders the page.
/// The start of a page titled `title` (unescaped): head, style, heading.
pub(crate) fn page_head(title: &str) -> String {
    let title = escape(title);
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{title}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <h1>{title}</h1>\n"
    );
    o
}

pub(crate) fn render(page: &Page) -> String {
    let mut o = page_head(page.title);
    o.push_str("<p>ppspp lab results report.</p>\n");

    o.push_str("<h2>Summary</h2>\n");
    match page.summary {
        Some(s) => {
            table(&mut o, &["Figure", "Value"], &summary_rows(s));
            if let Some(note) = summary_footnote(s) {
                let _ = writeln!(o, "<p>{}</p>", escape(&note));
            }
        }
        None => nodata(&mut o, "No data: summary.json is missing or unreadable."),
    }

    o.push_str("<h2>Peer groups</h2>\n");
    if page.groups.is_empty() {
        nodata(&mut o, "No data: peers.csv is missing or has no peers.");
    } else {
        table(
            &mut o,
            &[
                "Group",
                "Peers",
                "Leechers",
                "Completed",
                "Mean download (s)",
                "Median download (s)",
                "Mean from seeders",
                "Mean from peers",
                "Mean uploaded",
            ],
            &group_rows(page.groups),
        );
        o.push_str(
            "<p>Download times are over the leechers that completed; bytes from \
             seeders and peers are means over the group's leechers; uploads are \
             means over all the group's peers.",
        );
        if page
            .groups
            .iter()
            .any(|g| g.times.is_empty() || g.leechers == 0)
        {
            let _ = write!(
                o,
                " {NONE} : none of the group's leechers completed, or the group has no \
                 leechers."
            );
        }
        o.push_str("</p>\n");
    }

    o.push_str("<h2>Plots</h2>\n");
    for (file, alt, caption) in FIGURES.iter().filter(|f| page.figures.contains(&f.0)) {
        let _ = writeln!(
            o,
            "<figure>\n<img src=\"plots/{file}\" alt=\"{}\">\n\
             <figcaption>{}</figcaption>\n</figure>",
            escape(alt),
            escape(caption)
        );
    }

    o.push_str("<h2>Links with the most drops</h2>\n");
    match page.links_total {
        None => nodata(&mut o, "No data: link_stats.csv is missing or empty."),
        Some(n) if page.top_links.is_empty() => {
            nodata(&mut o, &format!("No drops on any of the {n} links."))
        }
        Some(n) => {
            table(
                &mut o,
                &[
                    "Link",
                    "Capacity",
                    "Packets in",
                    "Queue drops",
                    "Lost",
                    "Dropped %",
                    "Bytes out",
                    "Mean backlog",
                    "Max backlog",
                    "Mean wait (ms)",
                ],
                &link_rows(page.top_links),
            );
            let _ = writeln!(
                o,
                "<p>Top {} of {n} links by drops (queue + loss).</p>",
                page.top_links.len()
            );
        }
    }

    if !page.notes.is_empty() {
        o.push_str("<h2>Notes</h2>\n<ul>\n");
        for n in page.notes {
            let _ = writeln!(o, "<li>{}</li>", escape(n));
        }
        o.push_str("</ul>\n");
    }

    o.push_str("<h2>Scenario</h2>\n");
    match page.scenario {
        Some(text) => {
            let _ = writeln!(o, "<pre>{}</pre>", escape(text));
        }
        None => nodata(&mut o, "No data: scenario.toml is missing."),
    }
    o.push_str("</body>\n</html>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_characters() {
        assert_eq!(
            escape("<script>alert('x & \"y\"')</script>"),
            "&lt;script&gt;alert(&#39;x &amp; &quot;y&quot;&#39;)&lt;/script&gt;"
        );
    }

    #[test]
    fn number_formats() {
        assert_eq!(fmt_f(1.5), "1.500");
        assert_eq!(fmt_f(123456.7), "123457");
        assert_eq!(fmt_f(f64::NAN), "—");
        assert_eq!(fmt_bytes(999.0), "999 B");
        assert_eq!(fmt_bytes(1_500_000.0), "1.50 MB");
        assert_eq!(fmt_bytes(f64::NAN), "—");
        assert_eq!(fmt_bps(0), "unlimited");
        assert_eq!(fmt_bps(10_000_000), "10 Mbit/s");
        assert_eq!(fmt_bps(1_500_000), "1.5 Mbit/s");
        assert_eq!(jv(Some(&serde_json::json!(null))), "—");
        assert_eq!(jv(Some(&serde_json::json!(42))), "42");
        assert_eq!(jv(Some(&serde_json::json!(2.25))), "2.250");
        assert_eq!(jv(None), "—");
    }
}
