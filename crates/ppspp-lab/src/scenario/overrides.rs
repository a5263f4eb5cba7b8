//! `--set KEY=VALUE` overrides of a scenario (`lab run`, and each point of
//! `lab sweep`). The text with the overrides applied is the program's, not
//! the user's: its lines are no line of the scenario file, so an error the
//! overrides cause names the override instead
//! (`--set content.size=big: 'big' is not a size …`).

use super::{parse, read, Scenario, ScenarioError};
use crate::sweep::apply;

/// One `--set KEY=VALUE`: a dotted key (an element of `[[peers]]` named by
/// its `name` or its index) and a value as TOML would read it, else a
/// string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Override {
    /// Dotted key, e.g. `peers.near.count`.
    pub key: String,
    /// The value as written, e.g. `200` or `4MB`.
    pub value: String,
}

/// A `--set` argument that is not `KEY=VALUE`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum OverrideError {
    /// No `=`.
    #[error("'{0}' is not KEY=VALUE")]
    NotKeyValue(String),
    /// Nothing before or after the `=`.
    #[error("'{0}' has an empty key or value (KEY=VALUE)")]
    Empty(String),
}

impl Override {
    /// Parses `KEY=VALUE`.
    pub fn parse(s: &str) -> Result<Override, OverrideError> {
        let (key, value) = s
            .split_once('=')
            .ok_or_else(|| OverrideError::NotKeyValue(s.into()))?;
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || value.is_empty() {
            return Err(OverrideError::Empty(s.into()));
        }
        Ok(Override {
            key: key.into(),
            value: value.into(),
        })
    }

    /// How the user wrote it, to name it in errors.
    fn label(&self) -> String {
        format!("--set {}={}", self.key, self.value)
    }

    /// An error this override caused.
    fn error(&self, message: String, hint: Option<String>) -> ScenarioError {
        ScenarioError {
            file: self.label(),
            line: None,
            message,
            hint,
        }
    }
}

/// Applies `overrides` in order to the scenario `text` (named `file` in
/// errors) and reads the result: the new text and its scenario. A mistake
/// of the scenario itself is told with `file` and its line; one the
/// overrides cause names the override that causes it alone, else all of
/// them.
pub fn apply_overrides(
    text: &str,
    file: &str,
    overrides: &[Override],
) -> Result<(String, Scenario), ScenarioError> {
    if overrides.is_empty() {
        return parse(text, file).map(|s| (text.to_string(), s));
    }
    let mut t = text.to_string();
    for o in overrides {
        t = match apply(&t, &o.key, &o.value) {
            Ok(t) => t,
            // A file that is not TOML at all is the file's mistake.
            Err(_) if toml::from_str::<toml::Table>(text).is_err() => {
                return Err(parse(text, file).expect_err("not TOML"));
            }
            Err(e) => return Err(o.error(e.to_string(), None)),
        };
    }
    match read(&t, file, false) {
        Ok(s) => Ok((t, s)),
        Err(e) => Err(blame(text, file, overrides, e)),
    }
}

/// Who made the scenario with `overrides` fail with `e`: the scenario
/// itself if it fails alike without them, else the override that fails
/// alike on its own, else all of them together (e.g. a count that
/// disagrees with a list of arrival times).
fn blame(text: &str, file: &str, overrides: &[Override], e: ScenarioError) -> ScenarioError {
    if read(text, file, false).is_err_and(|own| own.message == e.message) {
        return parse(text, file).expect_err("fails alike");
    }
    let alone = overrides.iter().find(|o| {
        apply(text, &o.key, &o.value)
            .ok()
            .and_then(|t| read(&t, file, false).err())
            .is_some_and(|x| x.message == e.message)
    });
    match alone {
        Some(o) => o.error(e.message, e.hint),
        None => ScenarioError {
            file: overrides
                .iter()
                .map(Override::label)
                .collect::<Vec<_>>()
                .join(" "),
            line: None,
            ..e
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::DEFAULT_TEXT;

    fn set(pairs: &[&str]) -> Vec<Override> {
        pairs.iter().map(|p| Override::parse(p).unwrap()).collect()
    }

    fn err(pairs: &[&str]) -> String {
        apply_overrides(DEFAULT_TEXT, "fc.toml", &set(pairs))
            .expect_err("should be refused")
            .to_string()
    }

    #[test]
    fn a_bad_value_names_the_override_not_a_line() {
        let e = err(&["peers.near.count=3", "content.size=big"]);
        assert!(
            e.starts_with("--set content.size=big: 'big' is not a size"),
            "{e}"
        );
        assert!(!e.contains("fc.toml"), "{e}");
        let e = err(&["content.size=5"]);
        assert!(
            e.starts_with("--set content.size=5: a size needs a unit"),
            "{e}"
        );
        let e = err(&["peers.near.speed=3"]);
        assert!(
            e.starts_with("--set peers.near.speed=3: unknown field `speed`"),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_policy_names_the_override_and_the_known_names() {
        let e = err(&["peers.near.congestion=cubic"]);
        assert_eq!(
            e,
            "--set peers.near.congestion=cubic: unknown congestion controller 'cubic' \
             (known: ledbat, fixed; ledbat:<N>ms sets LEDBAT's target)"
        );
        let e = err(&["peers.near.algorithm=random"]);
        assert!(
            e.starts_with("--set peers.near.algorithm=random: unknown algorithm 'random' (known: "),
            "{e}"
        );
    }

    #[test]
    fn an_unknown_group_lists_the_groups() {
        let e = err(&["peers.home.count=200"]);
        assert!(e.starts_with("--set peers.home.count=200: "), "{e}");
        assert!(
            e.contains("'home'") && e.contains("seeder, near, far"),
            "{e}"
        );
    }

    #[test]
    fn overrides_that_fail_only_together_are_named_together() {
        // 25 arrival times for 25 peers; 2 times alone disagree with the
        // count, and together with count = 2 they agree.
        let times = "peers.near.arrival={ kind = \"times\", times = [\"1s\", \"2s\"] }";
        let (_, s) = apply_overrides(
            DEFAULT_TEXT,
            "fc.toml",
            &set(&["peers.near.count=2", times]),
        )
        .unwrap();
        assert_eq!(s.peers[1].get_ref().count, 2);
        let e = err(&["peers.near.count=3", times]);
        assert!(
            e.starts_with(&format!("--set peers.near.count=3 --set {times}: ")),
            "{e}"
        );
    }

    #[test]
    fn a_set_that_is_not_key_value_says_so() {
        let e = Override::parse("content.size").unwrap_err();
        assert_eq!(e, OverrideError::NotKeyValue("content.size".into()));
        assert_eq!(e.to_string(), "'content.size' is not KEY=VALUE");
        let e = Override::parse(" =4MB").unwrap_err();
        assert_eq!(
            e.to_string(),
            "' =4MB' has an empty key or value (KEY=VALUE)"
        );
    }

    #[test]
    fn a_mistake_of_the_scenario_keeps_its_line() {
        let text = DEFAULT_TEXT.replace("tracker_peers = 5", "tracker_peer = 5");
        let e = apply_overrides(&text, "fc.toml", &set(&["content.size=2MB"])).unwrap_err();
        assert_eq!(e.file, "fc.toml");
        assert!(e.line.is_some(), "{e}");
    }
}
