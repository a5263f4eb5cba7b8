//! Scenario families: every scenario file of a folder, swept together
//! (`ppspp lab sweep DIR`), e.g. `scenarios/vod-family/`, the deployment
//! variations of E1 that issue 23 compares the VoD algorithms on.
//!
//! A family sweep's folder records the family in [`FAMILY_TOML`] (its name,
//! and each scenario's name, file and description), which the sweep's page
//! lists in place of the one scenario of a plain sweep.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::scenario::{self, ScenarioError};

/// The record of the family a sweep ran, in the sweep's folder.
pub const FAMILY_TOML: &str = "family.toml";

/// Why a folder is no family.
#[derive(Debug, thiserror::Error)]
pub enum FamilyError {
    /// The folder or a file in it could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// What could not be read.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// It holds no scenario file.
    #[error("{}: no scenario (*.toml) in the folder", .0.display())]
    Empty(PathBuf),
    /// A scenario is wrong (its own message names the file).
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// Two scenarios have one name: the tables would mix them.
    #[error("{} and {} are both called '{name}'; a family's scenarios need distinct names", first.display(), second.display())]
    SameName {
        /// The name.
        name: String,
        /// The file that had it first.
        first: PathBuf,
        /// The other.
        second: PathBuf,
    },
}

/// One scenario of a family.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// Its `name`.
    pub name: String,
    /// Its file, relative to the family's folder.
    pub file: String,
    /// Its `description`.
    pub description: String,
}

/// A family: its name (the folder's) and its scenarios in file-name order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Family {
    /// The folder's name.
    pub name: String,
    /// The scenarios.
    pub scenarios: Vec<Member>,
}

/// The scenario files of a family: every `*.toml` directly in `dir`, by
/// file name.
pub fn family_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_file() && path.extension().is_some_and(|e| e == "toml") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

impl Family {
    /// Reads the family in `dir`: every scenario file, parsed and checked
    /// (a mistake in one is found before any runs), with its text.
    pub fn read(dir: &Path) -> Result<(Family, Vec<String>), FamilyError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FamilyError::Io { path, source }
        };
        let files = family_files(dir).map_err(io(dir))?;
        if files.is_empty() {
            return Err(FamilyError::Empty(dir.to_path_buf()));
        }
        let mut scenarios: Vec<Member> = Vec::new();
        let mut texts = Vec::new();
        let mut names = BTreeSet::new();
        for path in &files {
            let text = fs::read_to_string(path).map_err(io(path))?;
            let s = scenario::parse(&text, &path.display().to_string())?;
            if !names.insert(s.name.clone()) {
                let first = scenarios.iter().find(|m| m.name == s.name);
                return Err(FamilyError::SameName {
                    first: dir.join(first.map_or("", |m| m.file.as_str())),
                    second: path.clone(),
                    name: s.name,
                });
            }
            scenarios.push(Member {
                name: s.name,
                file: path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                description: s.description,
            });
            texts.push(text);
        }
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|f| f.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string());
        Ok((Family { name, scenarios }, texts))
    }

    /// The record written into a sweep's folder.
    pub fn to_toml(&self) -> String {
        let head = "# The scenario family this sweep ran (ppspp lab sweep FOLDER).\n";
        head.to_string() + &toml::to_string(self).unwrap_or_default()
    }

    /// The family recorded in the sweep folder `dir`, if it holds one.
    pub fn recorded(dir: &Path) -> Option<Family> {
        toml::from_str(&fs::read_to_string(dir.join(FAMILY_TOML)).ok()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_family_is_the_toml_files_of_a_folder_in_name_order() {
        let dir = tempfile::tempdir().unwrap();
        for f in ["b.toml", "a.toml", "notes.md", "c.toml.bak"] {
            fs::write(dir.path().join(f), "").unwrap();
        }
        fs::create_dir(dir.path().join("d.toml")).unwrap();
        let names: Vec<String> = family_files(dir.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["a.toml", "b.toml"]);
    }

    #[test]
    fn a_family_reads_checks_and_records_its_scenarios() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("fam");
        fs::create_dir(&d).unwrap();
        assert!(matches!(Family::read(&d), Err(FamilyError::Empty(_))));
        let text = scenario::DEFAULT_TEXT;
        fs::write(d.join("b.toml"), text.replacen("flash-crowd", "two", 1)).unwrap();
        fs::write(d.join("a.toml"), text).unwrap();
        let (f, texts) = Family::read(&d).unwrap();
        assert_eq!(f.name, "fam");
        let names: Vec<&str> = f.scenarios.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["flash-crowd", "two"]);
        assert_eq!(f.scenarios[0].file, "a.toml");
        assert_eq!(texts[0], text);
        // Recorded and read back.
        fs::write(dir.path().join(FAMILY_TOML), f.to_toml()).unwrap();
        assert_eq!(Family::recorded(dir.path()), Some(f));
        // Two of one name are refused, as is a broken scenario.
        fs::write(d.join("c.toml"), text).unwrap();
        let e = Family::read(&d).unwrap_err().to_string();
        assert!(e.contains("both called 'flash-crowd'"), "{e}");
        fs::write(d.join("c.toml"), "name = 1").unwrap();
        let e = Family::read(&d).unwrap_err().to_string();
        assert!(e.contains("c.toml"), "{e}");
    }
}
