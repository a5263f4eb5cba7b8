//! Sweeps: a scenario — or a family of them ([`crate::family`]) — run
//! over a grid of parameter values × seeds. This module expands the grid
//! and rewrites the scenario for each point; the CLI runs the points as
//! independent processes.

use toml::{Table, Value};

use crate::scenario::Override;

/// A `--set key=v1,v2,...` of `lab sweep` that is not one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AxisError {
    /// No `=`.
    #[error("'{0}' is not key=value1,value2,...")]
    NotAnAxis(String),
    /// Nothing before the `=`, or an empty value in the list.
    #[error("'{0}' has an empty key or value")]
    Empty(String),
}

/// Why a key cannot be set in a scenario's text ([`apply`]). The caller
/// names the override; this says what is wrong with its key.
#[derive(Debug, thiserror::Error)]
pub enum SetError {
    /// The scenario text is not TOML.
    #[error(transparent)]
    NotToml(#[from] toml::de::Error),
    /// The changed table could not be written as TOML.
    #[error(transparent)]
    Write(#[from] toml::ser::Error),
    /// The key is empty.
    #[error("empty key")]
    EmptyKey,
    /// The key ends at an array of tables without naming an element.
    #[error("name an element")]
    NoElementNamed,
    /// The array of tables named has no elements.
    #[error("'{0}' has no elements")]
    NoElements(String),
    /// No element of the array has this name or index.
    #[error("no element '{element}' in '{array}', {names}")]
    NoSuchElement {
        /// The element as named in the key.
        element: String,
        /// The array's key.
        array: String,
        /// What names its elements (see `element_names`).
        names: String,
    },
    /// The key goes on below an element that is not a table, or stops at
    /// one.
    #[error("'{0}' is not a table with keys")]
    NotATableElement(String),
    /// The key goes on below a value that is not a table.
    #[error("'{0}' is not a table")]
    NotATable(String),
    /// An algorithm was to be set on the leechers of a scenario without
    /// any ([`set_leecher_algorithm`]).
    #[error("no [[peers]] group with role = \"leecher\" to set the algorithm of")]
    NoLeechers,
}

/// The axis of a sweep over a folder: each point's scenario, by name.
pub const SCENARIO_AXIS: &str = "scenario";
/// The axis `lab sweep --algorithms` adds: the piece picker of every
/// leecher group ([`set_leecher_algorithm`]).
pub const ALGORITHM_AXIS: &str = "algorithm";

/// Sets `algorithm` on every `[[peers]]` group with `role = "leecher"` of
/// the scenario `text`: the algorithms of a family are compared on its
/// viewers whatever the scenarios call their groups (a scenario may split
/// its viewers in several). Seeders keep theirs (a seeder picks nothing).
pub fn set_leecher_algorithm(text: &str, algorithm: &str) -> Result<String, SetError> {
    let mut root: Table = toml::from_str(text)?;
    let mut set = 0;
    if let Some(Value::Array(groups)) = root.get_mut("peers") {
        for g in groups.iter_mut().filter_map(Value::as_table_mut) {
            if g.get("role").and_then(Value::as_str) == Some("leecher") {
                g.insert("algorithm".into(), Value::String(algorithm.into()));
                set += 1;
            }
        }
    }
    if set == 0 {
        return Err(SetError::NoLeechers);
    }
    Ok(toml::to_string(&root)?)
}

/// One `--set key=v1,v2,...`.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// Dotted key path, e.g. `content.size` or `peers.near.count`.
    pub key: String,
    /// The values to try, as written.
    pub values: Vec<String>,
}

impl Axis {
    /// Parses `key=v1,v2,...`.
    pub fn parse(s: &str) -> Result<Axis, AxisError> {
        let (key, values) = s
            .split_once('=')
            .ok_or_else(|| AxisError::NotAnAxis(s.into()))?;
        let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
        if key.trim().is_empty() || values.iter().any(String::is_empty) {
            return Err(AxisError::Empty(s.into()));
        }
        Ok(Axis {
            key: key.trim().to_string(),
            values,
        })
    }
}

/// Every combination of the axes' values, first axis slowest.
pub fn grid(axes: &[Axis]) -> Vec<Vec<Override>> {
    let mut points = vec![Vec::new()];
    for axis in axes {
        let mut next = Vec::new();
        for p in &points {
            for v in &axis.values {
                let mut q = p.clone();
                q.push(Override {
                    key: axis.key.clone(),
                    value: v.clone(),
                });
                next.push(q);
            }
        }
        points = next;
    }
    points
}

/// A value as TOML would read it (`10`, `0.5`, `true`), else a string
/// (`5MB`, `rarest-first`).
fn value_of(v: &str) -> Value {
    toml::from_str::<Table>(&format!("v = {v}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(v.to_string()))
}

/// Sets `key` (dotted; an array of tables is indexed by position or by its
/// `name`) to `value` in the scenario `text`, returning the new text. The
/// error says what is wrong with the key; the caller names the override
/// (see [`crate::scenario::apply_overrides`], which also checks the result).
pub fn apply(text: &str, key: &str, value: &str) -> Result<String, SetError> {
    let mut root: Table = toml::from_str(text)?;
    let parts: Vec<&str> = key.split('.').collect();
    set(&mut root, &parts, value_of(value))?;
    Ok(toml::to_string(&root)?)
}

/// What names the elements of an array of tables: their `name`s, else
/// their indices.
fn element_names(items: &[Value]) -> String {
    let names: Vec<&str> = items
        .iter()
        .filter_map(|v| v.get("name").and_then(Value::as_str))
        .collect();
    let last = items.len().saturating_sub(1);
    if names.is_empty() {
        format!("whose elements are 0 to {last}")
    } else {
        format!(
            "whose names are {} (or an index, 0 to {last})",
            names.join(", ")
        )
    }
}

/// Sets the value at `path` below `table`, creating tables on the way.
fn set(table: &mut Table, path: &[&str], value: Value) -> Result<(), SetError> {
    let (first, rest) = path.split_first().ok_or(SetError::EmptyKey)?;
    if rest.is_empty() {
        table.insert(first.to_string(), value);
        return Ok(());
    }
    match table
        .entry(first.to_string())
        .or_insert_with(|| Value::Table(Table::new()))
    {
        Value::Table(t) => set(t, rest, value),
        Value::Array(items) => {
            let (sel, rest) = rest.split_first().ok_or(SetError::NoElementNamed)?;
            let at = match sel.parse::<usize>() {
                Ok(i) => (i < items.len()).then_some(i),
                Err(_) => items
                    .iter()
                    .position(|v| v.get("name").and_then(Value::as_str) == Some(sel)),
            };
            let Some(at) = at else {
                return Err(if items.is_empty() {
                    SetError::NoElements(first.to_string())
                } else {
                    SetError::NoSuchElement {
                        element: sel.to_string(),
                        array: first.to_string(),
                        names: element_names(items),
                    }
                });
            };
            match &mut items[at] {
                Value::Table(t) if !rest.is_empty() => set(t, rest, value),
                _ => Err(SetError::NotATableElement(sel.to_string())),
            }
        }
        _ => Err(SetError::NotATable(first.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{parse, Bitrate, Bytes, DEFAULT_TEXT};

    #[test]
    fn axes_and_grid() {
        let a = Axis::parse("content.size=1MB,2MB").unwrap();
        let b = Axis::parse("peers.near.count=3,4,5").unwrap();
        let g = grid(&[a, b]);
        assert_eq!(g.len(), 6);
        assert_eq!(g[0][0].value, "1MB");
        assert_eq!(
            g[5],
            vec![
                Override::parse("content.size=2MB").unwrap(),
                Override::parse("peers.near.count=5").unwrap()
            ]
        );
        assert_eq!(
            Axis::parse("nokey"),
            Err(AxisError::NotAnAxis("nokey".into()))
        );
        assert_eq!(
            Axis::parse("nokey").unwrap_err().to_string(),
            "'nokey' is not key=value1,value2,..."
        );
        assert_eq!(
            Axis::parse("a=1,,2"),
            Err(AxisError::Empty("a=1,,2".into()))
        );
        assert_eq!(
            Axis::parse("=1").unwrap_err().to_string(),
            "'=1' has an empty key or value"
        );
    }

    #[test]
    fn the_algorithm_goes_to_every_leecher_group() {
        let t = set_leecher_algorithm(DEFAULT_TEXT, "swift-vod").unwrap();
        let s = parse(&t, "x").unwrap();
        let leechers: Vec<_> = s
            .peers
            .iter()
            .map(|p| p.get_ref())
            .filter(|p| p.role == crate::scenario::Role::Leecher)
            .collect();
        assert_eq!(leechers.len(), 2, "the default scenario's near and far");
        assert!(leechers
            .iter()
            .all(|p| p.picker() == ppspp_core::pick::PickerKind::SwiftVod));
        let seeder = s.peers[0].get_ref();
        assert_eq!(seeder.picker(), ppspp_core::pick::PickerKind::RarestFirst);
        let only_seeders = DEFAULT_TEXT.replace("role = \"leecher\"", "role = \"seeder\"");
        let e = set_leecher_algorithm(&only_seeders, "linear").unwrap_err();
        assert!(matches!(e, SetError::NoLeechers), "{e}");
    }

    #[test]
    fn apply_sets_nested_and_named_keys() {
        let t = apply(DEFAULT_TEXT, "content.size", "2MB").unwrap();
        let t = apply(&t, "peers.far.count", "7").unwrap();
        let t = apply(&t, "classes.home-near.up", "2Mbit/s").unwrap();
        let t = apply(&t, "peers.0.upload_slots", "3").unwrap();
        let s = parse(&t, "x").unwrap();
        assert_eq!(s.content.size, Bytes(2_000_000));
        let far = s.peers.iter().find(|p| p.get_ref().name == "far").unwrap();
        assert_eq!(far.get_ref().count, 7);
        assert_eq!(s.classes["home-near"].get_ref().up, Bitrate(2_000_000));
        assert_eq!(s.peers[0].get_ref().upload_slots, Some(3));
        let e = apply(DEFAULT_TEXT, "peers.mars.count", "1").unwrap_err();
        assert!(matches!(e, SetError::NoSuchElement { .. }), "{e:?}");
        assert!(
            e.to_string()
                .starts_with("no element 'mars' in 'peers', whose names are "),
            "{e}"
        );
        let e = apply(DEFAULT_TEXT, "seed.x", "1").unwrap_err();
        assert_eq!(e.to_string(), "'seed' is not a table");
        let e = apply(DEFAULT_TEXT, "peers.far", "1").unwrap_err();
        assert_eq!(e.to_string(), "'far' is not a table with keys");
    }
}
