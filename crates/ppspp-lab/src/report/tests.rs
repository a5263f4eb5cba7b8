//! End-to-end tests of [`write_report`] over hand-written results folders.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use super::*;

/// A fresh, empty folder under the system temp dir; removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "ppspp-report-{tag}-{}-{n}-{nanos}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }

    fn write(&self, name: &str, text: &str) {
        fs::write(self.0.join(name), text).unwrap();
    }

    fn read(&self, name: &str) -> String {
        fs::read_to_string(self.0.join(name)).unwrap()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

const SUMMARY: &str = r#"{
  "name": "tiny-swarm",
  "seed": 7,
  "version": "0.1.0",
  "trace_hash": "abc123",
  "trace_records": 100,
  "events": 12345,
  "virtual_s": 120.5,
  "wall_s": 0.25,
  "events_per_s": 49380.0,
  "wall_per_virtual": 0.002074688,
  "peers": 4,
  "leechers": 3,
  "completed": 2,
  "download_s": {"mean": 15.0, "p50": 20.0, "p95": 20.0, "max": 20.0},
  "packets": {"sent": 1000, "delivered": 950, "queue_drops": 30, "lost": 20, "to_absent_peers": 0}
}"#;

const SCENARIO: &str = "# As run by ppspp 0.1.0 with seed 7 (overrides the seed below).\n\
name = \"tiny-swarm\"\n\
description = \"<script>alert('x')</script> & co\"\n";

const PEERS: &str = "id,group,role,join_s,leave_s,complete_s,download_s,bytes_down,\
bytes_down_from_seeders,bytes_down_from_peers,bytes_up,chunks_rejected
0,seeds,seeder,0.000000,,,,0,0,0,3000000,0
1,fast,leecher,1.000000,,11.000000,10.000000,1000000,400000,600000,500000,0
2,fast,leecher,2.000000,,22.000000,20.000000,1000000,600000,400000,700000,0
3,slow,leecher,3.000000,,,,500000,500000,0,0,0
this,is,garbage
";

const PROGRESS: &str = "t_s,present,leechers,completed,mean_progress
0.000,1,0,0,0.000000
10.000,4,3,0,0.500000
20.000,4,3,1,0.800000
30.000,3,2,2,0.900000
";

const LINKS: &str = "link,name,t_s,backlog_bytes,backlog_ms
5,seeds.up,0.100000,0,0.000
5,seeds.up,0.200000,1500,1.200
5,seeds.up,0.300000,3000,2.400
5,seeds.up,0.400000,1500,1.200
9,fast[1].up,0.100000,0,0.000
x,y,0.5,1,not-a-number
";

/// Links 0..=11, named `h[i].up`; link i drops i packets at its queue
/// (link 0 none).
fn link_stats() -> String {
    let mut s = String::from(
        "link,name,capacity_bps,packets_in,bytes_out,drops_queue,drops_loss,\
         mean_backlog_bytes,max_backlog_bytes,mean_wait_ms\n",
    );
    for i in 0..12 {
        s.push_str(&format!(
            "{i},h[{i}].up,10000000,100,150000,{i},0,1200.0,3000,0.960\n"
        ));
    }
    s
}

fn full_folder() -> TempDir {
    let dir = TempDir::new("full");
    dir.write("summary.json", SUMMARY);
    dir.write("scenario.toml", SCENARIO);
    dir.write("peers.csv", PEERS);
    dir.write("progress.csv", PROGRESS);
    dir.write("links.csv", LINKS);
    dir.write("link_stats.csv", &link_stats());
    dir
}

#[test]
fn report_writes_plots_with_lines_and_legends() {
    let dir = full_folder();
    write_report(dir.path()).unwrap();

    let cdf = dir.read("plots/completion_cdf.svg");
    assert!(cdf.starts_with("<svg"), "{cdf}");
    assert!(cdf.contains("<polyline"));
    assert!(cdf.contains("fast (2/2 done)"));
    assert!(cdf.contains("slow (0/1 done)"));
    assert!(
        !cdf.contains("seeds ("),
        "a group without leechers has no line"
    );

    let progress = dir.read("plots/progress.svg");
    assert!(progress.contains("<polyline"));
    for label in ["mean progress", "completed / leechers", "peers present"] {
        assert!(progress.contains(label), "{label}");
    }

    let queue = dir.read("plots/queue_ccdf.svg");
    assert!(queue.contains("<polyline"));
    // Links by their names.
    assert!(queue.contains("seeds.up (4 samples)"), "{queue}");
    assert!(queue.contains("fast[1].up (1 samples)"));
    assert!(!queue.contains("link 5"));
}

#[test]
fn a_plot_with_nothing_to_show_is_left_out_with_its_section() {
    let dir = full_folder();
    // An earlier report's plot of a traced flow, and links.csv with a
    // header only.
    fs::create_dir_all(dir.path().join(PLOTS_DIR)).unwrap();
    dir.write("plots/wait_ccdf.svg", "<svg/>");
    dir.write("links.csv", "link,name,t_s,backlog_bytes,backlog_ms\n");
    write_report(dir.path()).unwrap();
    let html = dir.read("report.html");
    for (svg, caption) in [
        (WAIT_CCDF_SVG, "Queueing delay CCDF"),
        (QUEUE_CCDF_SVG, "Queue occupancy CCDF"),
    ] {
        assert!(!dir.path().join(PLOTS_DIR).join(svg).exists(), "{svg}");
        assert!(!html.contains(svg) && !html.contains(caption), "{svg}");
    }
    // No waits.csv: no note about it either (no traced flow is usual).
    assert!(!html.contains("waits.csv"));
    assert!(html.contains("plots/completion_cdf.svg") && html.contains("plots/progress.svg"));
}

#[test]
fn folders_without_link_names_fall_back_to_numbers() {
    let dir = full_folder();
    dir.write(
        "links.csv",
        "link,t_s,backlog_bytes,backlog_ms\n5,0.1,0,0.000\n5,0.2,1500,1.200\n",
    );
    dir.write(
        "link_stats.csv",
        "link,capacity_bps,packets_in,bytes_out,drops_queue,drops_loss,\
         mean_backlog_bytes,max_backlog_bytes,mean_wait_ms\n3,0,10,100,2,0,0.0,0,0.000\n",
    );
    write_report(dir.path()).unwrap();
    assert!(dir
        .read("plots/queue_ccdf.svg")
        .contains("link 5 (2 samples)"));
    assert!(dir.read("report.html").contains("<tr><td>link 3</td>"));
}

#[test]
fn traced_flows_get_a_queueing_delay_ccdf() {
    let dir = full_folder();
    dir.write(
        "waits.csv",
        "link,name,flow,t_s,wait_ms\n\
         4,video[0].up,flow0,1.0,0.000\n\
         4,video[0].up,flow0,1.1,12.500\n\
         4,video[0].up,flow0,1.2,not-a-number\n\
         7,seeder.up,ppspp:seeder,1.0,3.000\n",
    );
    write_report(dir.path()).unwrap();
    let svg = dir.read("plots/wait_ccdf.svg");
    assert!(svg.contains("<polyline"));
    assert!(svg.contains("flow0 at video[0].up (2 packets)"), "{svg}");
    assert!(svg.contains("ppspp:seeder at seeder.up (1 packets)"));
    let html = dir.read("report.html");
    assert!(html.contains("plots/wait_ccdf.svg"));
    assert!(html.contains("waits.csv: 1 malformed row(s) skipped, 3 used"));
}

#[test]
fn report_html_has_summary_groups_links_and_escaped_scenario() {
    let dir = full_folder();
    write_report(dir.path()).unwrap();
    let html = dir.read("report.html");

    assert!(html.contains("<title>tiny-swarm</title>"));
    for row in [
        "<td>Virtual time (s)</td><td>120.500</td>",
        "<td>Wall time (s)</td><td>0.250</td>",
        "<td>Events</td><td>12345</td>",
        "<td>Events / s</td><td>49380.000</td>",
        "<td>Completed / leechers</td><td>2 / 3</td>",
        "<td>Download time mean (s)</td><td>15.000</td>",
        "<td>Download time p95 (s)</td><td>20.000</td>",
        "<td>Packets sent</td><td>1000</td>",
        "<td>Packets delivered</td><td>950</td>",
        "<td>Packets dropped by queues</td><td>30</td>",
        "<td>Packets lost</td><td>20</td>",
    ] {
        assert!(html.contains(row), "missing {row}");
    }

    // Per-group rows: group, peers, leechers, completed, mean, median,
    // from seeders, from peers, uploaded.
    for row in [
        "<tr><td>seeds</td><td>1</td><td>0</td><td>0</td><td>—</td><td>—</td>\
         <td>—</td><td>—</td><td>3.00 MB</td></tr>",
        "<tr><td>fast</td><td>2</td><td>2</td><td>2</td><td>15.000</td><td>20.000</td>\
         <td>500.00 kB</td><td>500.00 kB</td><td>600.00 kB</td></tr>",
        "<tr><td>slow</td><td>1</td><td>1</td><td>0</td><td>—</td><td>—</td>\
         <td>500.00 kB</td><td>0 B</td><td>0 B</td></tr>",
    ] {
        assert!(html.contains(row), "missing {row}");
    }

    for svg in [COMPLETION_CDF_SVG, PROGRESS_SVG, QUEUE_CCDF_SVG] {
        assert!(html.contains(&format!("<img src=\"plots/{svg}\"")), "{svg}");
    }

    // Top 10 of 12 links by drops: 11 first, down to 2; 1 and 0 left out.
    assert!(html.contains("Top 10 of 12 links by drops"));
    let at = |s: &str| html.find(s);
    let (l11, l10, l2) = (
        at("<tr><td>h[11].up</td>"),
        at("<tr><td>h[10].up</td>"),
        at("<tr><td>h[2].up</td>"),
    );
    assert!(
        l11.is_some() && l11 < l10 && l10 < l2,
        "{l11:?} {l10:?} {l2:?}"
    );
    assert!(at("<tr><td>h[1].up</td>").is_none());
    assert!(at("<tr><td>h[0].up</td>").is_none());
    assert!(html.contains("<td>10 Mbit/s</td>"));

    // The scenario is shown escaped, never as live markup.
    assert!(!html.contains("<script"));
    assert!(html.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; co"));
    assert!(html.contains("<pre># As run by ppspp"));

    // Malformed rows are skipped and noted.
    assert!(html.contains("peers.csv: 1 malformed row(s) skipped, 4 used"));
    assert!(html.contains("links.csv: 1 malformed row(s) skipped, 5 used"));
}

/// The report of `dir` with `summary` as its summary.json.
fn report_with_summary(dir: &TempDir, summary: &str) -> String {
    dir.write("summary.json", summary);
    write_report(dir.path()).unwrap();
    dir.read("report.html")
}

/// Every row of `rows` is in `html`, in this order.
fn assert_rows_in_order(html: &str, rows: &[&str]) {
    let at: Vec<Option<usize>> = rows.iter().map(|r| html.find(r)).collect();
    assert!(at.iter().all(Option::is_some), "{at:?}");
    assert!(at.windows(2).all(|w| w[0] < w[1]), "out of order: {at:?}");
}

#[test]
fn viewers_get_playback_rows_between_downloads_and_packets() {
    let dir = full_folder();
    write_report(dir.path()).unwrap();
    assert!(
        !dir.read("report.html").contains("Stalls per viewer"),
        "no viewers, no rows"
    );
    let with_viewers = SUMMARY.replace(
        "\"packets\":",
        "\"playback\": {\"viewers\": 3, \"started\": 2, \
         \"startup_s\": {\"mean\": 4.5, \"p50\": 4.0, \"p95\": 6.0, \"max\": 6.0}, \
         \"stalls_per_viewer\": 1.5, \"stall_s_per_viewer\": 7.25, \"continuity\": 0.875},\n  \"packets\":",
    );
    let html = report_with_summary(&dir, &with_viewers);
    let rows = [
        "<td>Download time max (s)</td>",
        "<td>Viewers / started</td><td>3 / 2</td>",
        "<td>Startup delay mean (s)</td><td>4.500</td>",
        "<td>Startup delay p95 (s)</td><td>6.000</td>",
        "<td>Stalls per viewer</td><td>1.500</td>",
        "<td>Stall time per viewer (s)</td><td>7.250</td>",
        "<td>Continuity index</td><td>0.875</td>",
        "<td>Packets sent</td>",
    ];
    assert_rows_in_order(&html, &rows);
}

#[test]
fn message_types_get_a_row_each_largest_first() {
    let dir = full_folder();
    let with_messages = SUMMARY.replace(
        "\"packets\":",
        "\"messages_sent\": {\"ACK\": {\"messages\": 10, \"bytes\": 170}, \
         \"DATA\": {\"messages\": 3, \"bytes\": 3130}, \
         \"HAVE\": {\"messages\": 100, \"bytes\": 900}},\n  \"packets\":",
    );
    let html = report_with_summary(&dir, &with_messages);
    let rows = [
        "<td>DATA messages sent</td><td>3: 3.13 kB (74.5 % of message bytes)</td>",
        "<td>HAVE messages sent</td><td>100: 900 B (21.4 % of message bytes)</td>",
        "<td>ACK messages sent</td><td>10: 170 B (4.0 % of message bytes)</td>",
    ];
    assert_rows_in_order(&html, &rows);
}

#[test]
fn a_folder_without_results_is_refused() {
    let dir = TempDir::new("empty");
    let e = write_report(dir.path()).unwrap_err().to_string();
    assert!(e.contains("no results to report"), "{e}");
    assert!(e.contains("summary.json") && e.contains("sweep.csv"), "{e}");
    // A scenario alone is no result either; nothing is written.
    dir.write("scenario.toml", SCENARIO);
    assert!(write_report(dir.path()).is_err());
    assert!(!dir.path().join("report.html").exists());
    assert!(!dir.path().join(PLOTS_DIR).exists());
}

#[test]
fn a_folder_with_few_results_gives_page_with_no_data_notes() {
    let dir = TempDir::new("few");
    dir.write(
        "progress.csv",
        "t_s,present,leechers,completed,mean_progress\n",
    );
    write_report(dir.path()).unwrap();
    let html = dir.read("report.html");
    assert!(html.contains("<title>ppspp lab report</title>"));
    assert!(html.contains("No data: summary.json"));
    assert!(html.contains("No data: peers.csv"));
    assert!(html.contains("No data: link_stats.csv"));
    assert!(html.contains("No data: scenario.toml"));
    assert!(html.contains("links.csv: not found"));
    assert!(!dir.path().join("plots/queue_ccdf.svg").exists());
    assert!(dir
        .read("plots/completion_cdf.svg")
        .contains("no completed downloads"));
    assert!(dir
        .read("plots/progress.svg")
        .contains("no progress samples"));
}

#[test]
fn header_only_and_blank_files_give_page_without_panic() {
    let dir = TempDir::new("headers");
    dir.write("summary.json", "");
    dir.write("scenario.toml", "name = \"only-headers\"\n");
    dir.write("peers.csv", &PEERS[..PEERS.find('\n').unwrap() + 1]);
    dir.write(
        "progress.csv",
        "t_s,present,leechers,completed,mean_progress\n",
    );
    dir.write("links.csv", "link,t_s,backlog_bytes,backlog_ms\n");
    dir.write("link_stats.csv", "");
    write_report(dir.path()).unwrap();
    let html = dir.read("report.html");
    // The title falls back to the scenario's name.
    assert!(html.contains("<title>only-headers</title>"));
    assert!(html.contains("summary.json: malformed"));
    assert!(html.contains("peers.csv: no data rows"));
    assert!(html.contains("links.csv: no data rows"));
    assert!(html.contains("link_stats.csv: no usable header"));
    assert!(!dir.path().join("plots/queue_ccdf.svg").exists());
}

#[test]
fn links_without_drops_are_reported_as_such() {
    let dir = TempDir::new("nodrops");
    dir.write(
        "link_stats.csv",
        "link,capacity_bps,packets_in,bytes_out,drops_queue,drops_loss,\
         mean_backlog_bytes,max_backlog_bytes,mean_wait_ms\n0,0,10,100,0,0,0.0,0,0.000\n",
    );
    write_report(dir.path()).unwrap();
    assert!(dir
        .read("report.html")
        .contains("No drops on any of the 1 links."));
}

#[test]
fn missing_folder_is_an_error() {
    let dir = TempDir::new("missing");
    let gone = dir.path().join("nope");
    assert!(write_report(&gone).is_err());
}

#[test]
fn many_link_samples_are_streamed_and_decimated() {
    let dir = TempDir::new("many");
    let mut text = String::from("link,t_s,backlog_bytes,backlog_ms\n");
    for i in 0..1000 {
        text.push_str(&format!("3,{i}.0,{},{}.000\n", i % 10, i % 10));
    }
    dir.write("links.csv", &text);
    let (links, src) = csv::read_link_samples(&dir.path().join("links.csv"), 64);
    assert_eq!(
        src,
        csv::Source::Read {
            rows: 1000,
            skipped: 0
        }
    );
    let d = &links[&3].1;
    assert_eq!(d.seen(), 1000);
    assert!(d.values().len() <= 64);
    // Stride 16 keeps i = 16k, whose i % 10 cycle through 0, 6, 2, 8, 4:
    // the sample still spans 0..=8.
    let c = ccdf(d.values());
    assert_eq!(c.first().map(|p| p.0), Some(0.0));
    assert_eq!(c.last(), Some(&(8.0, 0.0)));
}

#[test]
fn figures_without_value_are_dashes_with_a_footnote() {
    let dir = full_folder();
    let nothing = SUMMARY
        .replace("\"completed\": 2", "\"completed\": 0")
        .replace(
            "{\"mean\": 15.0, \"p50\": 20.0, \"p95\": 20.0, \"max\": 20.0}",
            "{\"mean\": null, \"p50\": null, \"p95\": null, \"max\": null}",
        )
        .replace(
            "\"packets\":",
            "\"playback\": {\"viewers\": 3, \"started\": 0, \"startup_s\": {\"mean\": null, \
             \"p50\": null, \"p95\": null, \"max\": null}, \"stalls_per_viewer\": 0.0, \
             \"stall_s_per_viewer\": 0.0, \"continuity\": null},\n  \"packets\":",
        );
    let html = report_with_summary(&dir, &nothing);
    assert!(!html.contains("NaN"));
    assert!(
        html.contains("<td>Continuity index</td><td>—</td>"),
        "{html}"
    );
    assert!(
        html.contains("<p>— : no leecher completed; no viewer started.</p>"),
        "{html}"
    );
    // The group without completions ("slow") is explained too.
    assert!(html.contains("— : none of the group's leechers completed"));
    // A run with every figure has no summary footnote.
    let full = report_with_summary(&dir, SUMMARY);
    assert!(!full.contains("<p>— :"), "{full}");
}
