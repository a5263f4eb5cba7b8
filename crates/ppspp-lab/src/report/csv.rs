//! Reading a results folder: a tiny CSV splitter (fields hold no commas and
//! no quotes), typed rows of the files the report uses, and a streaming
//! reader for the possibly huge `links.csv`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::Path;

/// Splits one CSV line into trimmed fields. There is no quoting: the files
/// of a results folder never hold commas or quotes inside a field.
pub fn split_line(line: &str) -> Vec<&str> {
    line.trim_end_matches(['\r', '\n'])
        .split(',')
        .map(str::trim)
        .collect()
}

/// What became of reading one input file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The file does not exist.
    Missing,
    /// The file could not be read (the error text).
    Unreadable(String),
    /// The header is absent or lacks a needed column (the first one missing).
    BadHeader(String),
    /// Read: data rows used, and malformed rows skipped.
    Read { rows: u64, skipped: u64 },
}

impl Source {
    /// A sentence for the report's notes, or `None` when there is nothing
    /// worth saying (read cleanly with at least one row).
    pub(crate) fn note(&self, file: &str) -> Option<String> {
        match self {
            Source::Missing => Some(format!("{file}: not found")),
            Source::Unreadable(e) => Some(format!("{file}: unreadable ({e})")),
            Source::BadHeader(c) => Some(format!("{file}: no usable header (column {c})")),
            Source::Read {
                rows: 0,
                skipped: 0,
            } => Some(format!("{file}: no data rows")),
            Source::Read {
                rows,
                skipped: s @ 1..,
            } => Some(format!("{file}: {s} malformed row(s) skipped, {rows} used")),
            Source::Read { .. } => None,
        }
    }
}

/// Parses a number; `None` when empty or malformed.
fn num(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|x| !x.is_nan())
}

/// Parses an optional number: `Some(None)` for an empty field, `None` when
/// malformed.
fn opt_num(s: &str) -> Option<Option<f64>> {
    if s.is_empty() {
        Some(None)
    } else {
        num(s).map(Some)
    }
}

fn int(s: &str) -> Option<u64> {
    s.parse().ok()
}

/// Streams the data rows of the CSV file `path`, handing `f` the fields
/// named in `wanted`, in that order. `f` returns whether the row was well
/// formed; rows with the wrong field count or that `f` rejects are counted
/// as skipped. Blank lines are ignored.
pub(crate) fn for_each_row(
    path: &Path,
    wanted: &[&str],
    mut f: impl FnMut(&[&str]) -> bool,
) -> Source {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Source::Missing,
        Err(e) => return Source::Unreadable(e.to_string()),
    };
    let mut reader = BufReader::new(file);
    let mut buf = Vec::new();
    let mut columns: Option<(Vec<usize>, usize)> = None;
    let (mut rows, mut skipped) = (0u64, 0u64);
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Source::Unreadable(e.to_string()),
        }
        let Ok(line) = std::str::from_utf8(&buf) else {
            if columns.is_some() {
                skipped += 1;
                continue;
            }
            return Source::BadHeader(wanted.first().unwrap_or(&"").to_string());
        };
        if line.trim().is_empty() {
            continue;
        }
        let fields = split_line(line);
        let Some((idx, width)) = &columns else {
            let mut idx = Vec::with_capacity(wanted.len());
            for w in wanted {
                match fields.iter().position(|h| h == w) {
                    Some(i) => idx.push(i),
                    None => return Source::BadHeader((*w).to_string()),
                }
            }
            columns = Some((idx, fields.len()));
            continue;
        };
        if fields.len() != *width {
            skipped += 1;
            continue;
        }
        let picked: Vec<&str> = idx.iter().map(|&i| fields[i]).collect();
        if f(&picked) {
            rows += 1;
        } else {
            skipped += 1;
        }
    }
    match columns {
        Some(_) => Source::Read { rows, skipped },
        None => Source::BadHeader(wanted.first().unwrap_or(&"").to_string()),
    }
}

/// Whether the header of `path` has the column `col`: results folders
/// written before a column existed (links' `name`) lack it.
pub(crate) fn has_column(path: &Path, col: &str) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut head = String::new();
    BufReader::new(file).read_line(&mut head).is_ok() && split_line(&head).contains(&col)
}

/// A link's name from its `name` field, else (an older folder, an empty
/// field) from its number.
fn link_name(field: Option<&str>, link: u64) -> String {
    match field {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => format!("link {link}"),
    }
}

/// Collects the rows of `path` that `parse` accepts.
fn read_rows<T>(
    path: &Path,
    wanted: &[&str],
    parse: impl Fn(&[&str]) -> Option<T>,
) -> (Vec<T>, Source) {
    let mut out = Vec::new();
    let src = for_each_row(path, wanted, |f| match parse(f) {
        Some(row) => {
            out.push(row);
            true
        }
        None => false,
    });
    (out, src)
}

/// One row of `peers.csv` (the columns the report uses).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PeerRow {
    pub group: String,
    pub leecher: bool,
    pub download_s: Option<f64>,
    pub from_seeders: u64,
    pub from_peers: u64,
    pub up: u64,
}

/// Reads `peers.csv`.
pub(crate) fn read_peers(path: &Path) -> (Vec<PeerRow>, Source) {
    const COLS: [&str; 6] = [
        "group",
        "role",
        "download_s",
        "bytes_down_from_seeders",
        "bytes_down_from_peers",
        "bytes_up",
    ];
    read_rows(path, &COLS, |f| {
        // Roles other than seeder and leecher count as non-leechers.
        if f[0].is_empty() || f[1].is_empty() {
            return None;
        }
        let leecher = f[1] == "leecher";
        Some(PeerRow {
            group: f[0].to_string(),
            leecher,
            download_s: opt_num(f[2])?,
            from_seeders: int(f[3])?,
            from_peers: int(f[4])?,
            up: int(f[5])?,
        })
    })
}

/// One row of `progress.csv`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ProgressRow {
    pub t_s: f64,
    pub present: u64,
    pub leechers: u64,
    pub completed: u64,
    pub mean_progress: f64,
}

/// Reads `progress.csv`.
pub(crate) fn read_progress(path: &Path) -> (Vec<ProgressRow>, Source) {
    const COLS: [&str; 5] = ["t_s", "present", "leechers", "completed", "mean_progress"];
    read_rows(path, &COLS, |f| {
        Some(ProgressRow {
            t_s: num(f[0]).filter(|t| t.is_finite())?,
            present: int(f[1])?,
            leechers: int(f[2])?,
            completed: int(f[3])?,
            mean_progress: num(f[4]).filter(|p| p.is_finite())?,
        })
    })
}

/// One row of `link_stats.csv`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LinkStatRow {
    pub link: u64,
    /// As the scenario names it (`seeder.up`), see `Simulation::link_names`.
    pub name: String,
    pub capacity_bps: u64,
    pub packets_in: u64,
    pub bytes_out: u64,
    pub drops_queue: u64,
    pub drops_loss: u64,
    pub mean_backlog_bytes: f64,
    pub max_backlog_bytes: u64,
    pub mean_wait_ms: f64,
}

impl LinkStatRow {
    /// Packets dropped by the queue or lost.
    pub(crate) fn drops(&self) -> u64 {
        self.drops_queue.saturating_add(self.drops_loss)
    }
}

/// Reads `link_stats.csv`.
pub(crate) fn read_link_stats(path: &Path) -> (Vec<LinkStatRow>, Source) {
    const COLS: [&str; 10] = [
        "link",
        "capacity_bps",
        "packets_in",
        "bytes_out",
        "drops_queue",
        "drops_loss",
        "mean_backlog_bytes",
        "max_backlog_bytes",
        "mean_wait_ms",
        "name",
    ];
    let named = has_column(path, "name");
    let cols = if named { &COLS[..] } else { &COLS[..9] };
    read_rows(path, cols, |f| {
        let link = int(f[0])?;
        Some(LinkStatRow {
            link,
            name: link_name(f.get(9).copied(), link),
            capacity_bps: int(f[1])?,
            packets_in: int(f[2])?,
            bytes_out: int(f[3])?,
            drops_queue: int(f[4])?,
            drops_loss: int(f[5])?,
            mean_backlog_bytes: num(f[6])?,
            max_backlog_bytes: int(f[7])?,
            mean_wait_ms: num(f[8])?,
        })
    })
}

/// Samples kept per link before decimation starts.
pub(crate) const SAMPLE_CAP: usize = 1 << 20;

/// A bounded, systematic sample of a stream of values: it keeps every
/// `stride`-th value, doubling the stride (and dropping every other kept
/// value) whenever `cap` values are held, so the kept values stay evenly
/// spread over the whole stream.
#[derive(Clone, Debug)]
pub(crate) struct Decimator {
    cap: usize,
    stride: u64,
    seen: u64,
    values: Vec<f64>,
}

impl Decimator {
    /// An empty sample that holds at most `cap` (at least 2) values.
    pub(crate) fn new(cap: usize) -> Self {
        Decimator {
            cap: cap.max(2),
            stride: 1,
            seen: 0,
            values: Vec::new(),
        }
    }

    /// Offers the next value of the stream.
    pub(crate) fn push(&mut self, v: f64) {
        if self.seen.is_multiple_of(self.stride) {
            self.values.push(v);
            if self.values.len() >= self.cap {
                let mut i = 0;
                self.values.retain(|_| {
                    i += 1;
                    i % 2 == 1
                });
                self.stride *= 2;
            }
        }
        self.seen += 1;
    }

    /// Values offered so far.
    pub(crate) fn seen(&self) -> u64 {
        self.seen
    }

    /// One kept value per this many offered.
    pub(crate) fn stride(&self) -> u64 {
        self.stride
    }

    /// The kept values, in stream order.
    pub(crate) fn values(&self) -> &[f64] {
        &self.values
    }
}

/// Streams `links.csv` into a bounded sample of `backlog_ms` per link,
/// with the link's name.
pub(crate) fn read_link_samples(
    path: &Path,
    cap: usize,
) -> (BTreeMap<u64, (String, Decimator)>, Source) {
    let mut links: BTreeMap<u64, (String, Decimator)> = BTreeMap::new();
    let cols = ["link", "backlog_ms", "name"];
    let cols = if has_column(path, "name") {
        &cols[..]
    } else {
        &cols[..2]
    };
    let src = for_each_row(path, cols, |f| {
        let (Some(link), Some(ms)) = (int(f[0]), num(f[1])) else {
            return false;
        };
        if !ms.is_finite() {
            return false;
        }
        links
            .entry(link)
            .or_insert_with(|| (link_name(f.get(2).copied(), link), Decimator::new(cap)))
            .1
            .push(ms);
        true
    });
    (links, src)
}

/// Streams `waits.csv` into a bounded sample of `wait_ms` per traced
/// flow, keyed `"FLOW at LINK"`.
pub(crate) fn read_wait_samples(path: &Path, cap: usize) -> (BTreeMap<String, Decimator>, Source) {
    let mut flows: BTreeMap<String, Decimator> = BTreeMap::new();
    let src = for_each_row(path, &["name", "flow", "wait_ms"], |f| {
        let Some(ms) = num(f[2]).filter(|x| x.is_finite()) else {
            return false;
        };
        flows
            .entry(format!("{} at {}", f[1], f[0]))
            .or_insert_with(|| Decimator::new(cap))
            .push(ms);
        true
    });
    (flows, src)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_line_trims_fields_and_line_end() {
        assert_eq!(split_line("a, b,,c\r\n"), vec!["a", "b", "", "c"]);
        assert_eq!(split_line(""), vec![""]);
    }

    #[test]
    fn decimator_keeps_every_stride_th_value() {
        let mut d = Decimator::new(4);
        for i in 0..10 {
            d.push(i as f64);
        }
        // cap 4: at 4 kept (0..3) -> [0, 2], stride 2; then 4, 6 -> full
        // again -> [0, 4], stride 4; then 8.
        assert_eq!(d.values(), &[0.0, 4.0, 8.0]);
        assert_eq!(d.stride(), 4);
        assert_eq!(d.seen(), 10);
    }

    #[test]
    fn source_notes() {
        assert_eq!(
            Source::Read {
                rows: 3,
                skipped: 0
            }
            .note("x.csv"),
            None
        );
        assert_eq!(
            Source::Read {
                rows: 0,
                skipped: 0
            }
            .note("x.csv")
            .as_deref(),
            Some("x.csv: no data rows")
        );
        assert!(Source::Missing.note("x.csv").unwrap().contains("not found"));
    }
}
