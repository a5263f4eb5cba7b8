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

/// Gives a policy enum its names: `name`, `names`, `FromStr` (an unknown
/// name is an [`UnknownPolicy`] that lists the known ones) and `Display`,
/// from one table of variants and names.
macro_rules! policy_names {
    ($ty:ident, $family:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// The name the CLI and scenario files use.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name),+
                }
            }

            /// Every name.
            pub fn names() -> &'static [&'static str] {
                &[$($name),+]
            }
        }

        impl std::str::FromStr for $ty {
            type Err = $crate::proto::UnknownPolicy;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok($ty::$variant),)+
                    _ => Err($crate::proto::UnknownPolicy {
                        family: $family,
                        name: s.to_string(),
                        known: $ty::names(),
                    }),
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub(crate) use policy_names;

#[cfg(test)]
mod tests {
    use crate::proto::{Choking, UploadScheduling};
    use std::str::FromStr;

    /// Every name parses back to its policy; an unknown one is refused
    /// with the family and the known names.
    fn round_trip<T>(names: &[&str], name: fn(&T) -> &'static str, unknown: &str, message: &str)
    where
        T: FromStr<Err = super::UnknownPolicy>,
    {
        for n in names {
            let parsed: T = n.parse().unwrap();
            assert_eq!(name(&parsed), *n);
        }
        assert_eq!(unknown.parse::<T>().err().unwrap().to_string(), message);
    }

    #[test]
    fn names_round_trip_and_unknown_names_are_refused() {
        round_trip::<UploadScheduling>(
            UploadScheduling::names(),
            |p| p.name(),
            "wfg",
            "unknown upload scheduling 'wfg' (known: fifo, wfq)",
        );
        round_trip::<Choking>(
            Choking::names(),
            |p| p.name(),
            "tit-for-tat",
            "unknown choking 'tit-for-tat' (known: rotation, unchoke-all, delay-slots)",
        );
    }
}
