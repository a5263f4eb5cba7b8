//! Choosing a policy by name: every policy family of the endpoint (upload
//! scheduling, choking) is a small closed set of names that the CLI and
//! scenario files spell, each name one implementation in its own file
//! (architecture note, "Policies behind small traits").

/// A policy name nobody implements: the error names the ones that exist,
/// so a typo fails where it was typed instead of running another policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {family} '{name}' (known: {})", known.join(", "))]
pub struct UnknownPolicy {
    /// What kind of policy was asked for ("upload scheduling", "choking").
    pub family: &'static str,
    /// The name given.
    pub name: String,
    /// The names that exist.
    pub known: &'static [&'static str],
}

/// Looks `name` up among `(name, value)` pairs of `family`.
pub(crate) fn by_name<T: Copy>(
    family: &'static str,
    known: &'static [&'static str],
    table: &[(&str, T)],
    name: &str,
) -> Result<T, UnknownPolicy> {
    table
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
        .ok_or_else(|| UnknownPolicy {
            family,
            name: name.to_string(),
            known,
        })
}
