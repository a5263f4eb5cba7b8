//! Results folders, written whole: a run or a sweep never leaves its files
//! beside an earlier one's, where a report would take them for its own
//! (a sweep over a smaller grid would keep the old `runs/run0007/`, the
//! old plots of another axis).
//!
//! A run's files have fixed names and are all written every time, so a run
//! goes into an empty folder or over an earlier run's; a sweep's depend on
//! its grid, so a sweep goes into an empty folder only. Either refuses
//! other cases unless forced; forced, it removes only what a run (or a
//! sweep) writes — never a file it does not know — and leaves the rest.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::family::FAMILY_TOML;
use crate::report::{
    is_sweep_plot, PLOTS_DIR, REPORT_HTML, RUN_PLOTS, SWEEP_CSV, SWEEP_HTML, SWEEP_SUMMARY_CSV,
    SWEEP_SUMMARY_MD,
};
use crate::results::{RUN_FILES, SCENARIO_TOML};

/// The folder of a sweep's runs (`runNNNN/`) and points (`pointNNN.toml`).
pub const RUNS_DIR: &str = "runs";

/// The folder of run `index` of the sweep in `dir`.
pub fn run_dir(dir: &Path, index: u64) -> PathBuf {
    dir.join(run_path(index))
}

/// The folder of run `index` relative to its sweep's, as a link in the
/// sweep's page: `runs/run0007`.
pub fn run_path(index: u64) -> String {
    format!("{RUNS_DIR}/run{index:04}")
}

/// The scenario file of grid point `index` of the sweep in `dir`.
pub fn point_file(dir: &Path, index: usize) -> PathBuf {
    dir.join(RUNS_DIR).join(format!("point{index:03}.toml"))
}

/// What writes into a results folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// `lab run`.
    Run,
    /// `lab sweep`.
    Sweep,
}

/// Why a results folder cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutDirError {
    /// It holds files that would mix with the new ones.
    #[error(
        "{}: not empty ({}); {}",
        dir.display(),
        entries.join(", "),
        match writer {
            Writer::Run => "a run writes into an empty folder or over an earlier run's; \
                            pass --force to write anyway (the files a run writes are replaced, \
                            the others left alone) or choose another --out",
            Writer::Sweep => "a sweep writes into an empty folder, so that old runs never mix \
                              with new ones; pass --force to remove what a sweep wrote there \
                              (other files are left alone) or choose another --out",
        }
    )]
    NotEmpty {
        /// The folder.
        dir: PathBuf,
        /// A few of its entries (those in the way first).
        entries: Vec<String>,
        /// Who was to write there.
        writer: Writer,
    },
    /// Listing or clearing it failed (the I/O error is the source, not
    /// repeated in the message: a CLI prints the chain).
    #[error("cannot write results to {}", path.display())]
    Io {
        /// What could not be read or removed.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> OutDirError + '_ {
    move |source| OutDirError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Whether `name` is `prefix` then at least `digits` digits then `suffix`.
fn numbered(name: &str, prefix: &str, digits: usize, suffix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|r| r.strip_suffix(suffix))
        .is_some_and(|n| n.len() >= digits && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `writer` writes the entry `rel` (a name at the top of the
/// folder, `plots/NAME` or `runs/NAME`).
fn owned(writer: Writer, rel: &str) -> bool {
    let (folder, name) = rel.split_once('/').unwrap_or(("", rel));
    match (writer, folder) {
        (Writer::Run, "") => RUN_FILES.contains(&name) || name == REPORT_HTML,
        (Writer::Run, PLOTS_DIR) => RUN_PLOTS.contains(&name),
        (Writer::Sweep, "") => [
            SCENARIO_TOML,
            FAMILY_TOML,
            SWEEP_CSV,
            SWEEP_SUMMARY_CSV,
            SWEEP_SUMMARY_MD,
            SWEEP_HTML,
        ]
        .contains(&name),
        (Writer::Sweep, PLOTS_DIR) => is_sweep_plot(name),
        (Writer::Sweep, RUNS_DIR) => {
            numbered(name, "run", 4, "") || numbered(name, "point", 3, ".toml")
        }
        _ => false,
    }
}

/// The entries of `dir` as `owned` sees them: top-level names, and the
/// names inside its `plots/` and `runs/` folders (`plots/x.svg`).
fn entries(dir: &Path) -> Result<Vec<String>, OutDirError> {
    let mut out = Vec::new();
    let list = |d: &Path| -> Result<Vec<String>, OutDirError> {
        let mut names: Vec<String> = fs::read_dir(d)
            .map_err(io_err(d))?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()
            .map_err(io_err(d))?;
        names.sort();
        Ok(names)
    };
    for name in list(dir)? {
        let path = dir.join(&name);
        if (name == PLOTS_DIR || name == RUNS_DIR) && path.is_dir() {
            out.extend(list(&path)?.into_iter().map(|n| format!("{name}/{n}")));
        } else {
            out.push(name);
        }
    }
    Ok(out)
}

/// Makes `dir` ready for `writer`: creates it if needed; refuses it (see
/// the [module](self) documentation) unless `force`, which removes what
/// `writer` writes there first. Returns the entries left alone.
pub fn prepare(dir: &Path, writer: Writer, force: bool) -> Result<Vec<String>, OutDirError> {
    if !dir.exists() {
        fs::create_dir_all(dir).map_err(io_err(dir))?;
        return Ok(Vec::new());
    }
    let all = entries(dir)?;
    let (mine, others): (Vec<String>, Vec<String>) =
        all.iter().cloned().partition(|e| owned(writer, e));
    let in_the_way = match writer {
        Writer::Run => &others,
        Writer::Sweep => &all,
    };
    if !in_the_way.is_empty() && !force {
        // Those in the way first, and not too many.
        let mut shown: Vec<String> = others.iter().chain(&mine).take(5).cloned().collect();
        if all.len() > shown.len() {
            shown.push(format!("{} more", all.len() - shown.len()));
        }
        return Err(OutDirError::NotEmpty {
            dir: dir.to_path_buf(),
            entries: shown,
            writer,
        });
    }
    for rel in &mine {
        let path = dir.join(rel);
        let removed = if path.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        };
        removed.map_err(io_err(&path))?;
    }
    // Sub-folders emptied above go too; one holding other files stays.
    for sub in [PLOTS_DIR, RUNS_DIR] {
        let _ = fs::remove_dir(dir.join(sub));
    }
    Ok(others)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, rel: &str) {
        let path = dir.join(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, "x").unwrap();
    }

    #[test]
    fn a_run_goes_over_an_earlier_run_but_not_beside_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("out");
        assert!(prepare(&d, Writer::Run, false).unwrap().is_empty());
        assert!(d.is_dir());
        touch(&d, "summary.json");
        touch(&d, "plots/wait_ccdf.svg");
        // An earlier run's folder: its files go (a plot the new report
        // may not draw among them).
        assert!(prepare(&d, Writer::Run, false).unwrap().is_empty());
        assert!(!d.join("plots/wait_ccdf.svg").exists());
        touch(&d, "summary.json");
        touch(&d, "notes.txt");
        let e = prepare(&d, Writer::Run, false).unwrap_err().to_string();
        assert!(e.contains("not empty (notes.txt, summary.json)"), "{e}");
        assert!(e.contains("--force"), "{e}");
        assert_eq!(prepare(&d, Writer::Run, true).unwrap(), ["notes.txt"]);
        assert!(d.join("notes.txt").is_file() && !d.join("summary.json").exists());
    }

    #[test]
    fn a_sweep_needs_an_empty_folder_and_force_clears_only_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for f in [
            "sweep.csv",
            "sweep.html",
            "sweep_summary.md",
            "family.toml",
            "scenario.toml",
            "plots/sweep_stalls_per_viewer.svg",
            "plots/startup_cdf_3.svg",
            "plots/mine.svg",
            "runs/point000.toml",
            "runs/run0007/peers.csv",
            "runs/README",
            "keep.txt",
        ] {
            touch(d, f);
        }
        let e = prepare(d, Writer::Sweep, false).unwrap_err().to_string();
        assert!(e.contains("keep.txt") && e.contains("--force"), "{e}");
        assert!(
            d.join("runs/run0007/peers.csv").is_file(),
            "refused: nothing removed"
        );
        let left = prepare(d, Writer::Sweep, true).unwrap();
        assert_eq!(left, ["keep.txt", "plots/mine.svg", "runs/README"]);
        assert!(!d.join("runs/run0007").exists() && !d.join("sweep.csv").exists());
        assert!(!d.join("family.toml").exists() && !d.join("sweep_summary.md").exists());
        assert!(!d.join("plots/startup_cdf_3.svg").exists());
        assert!(d.join("runs/README").is_file());
        // An empty folder is fine without force.
        let empty = tempfile::tempdir().unwrap();
        assert!(prepare(empty.path(), Writer::Sweep, false).is_ok());
    }
}
