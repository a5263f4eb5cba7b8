//! Choosing a picker by name: the command line's `--algorithm` and a
//! scenario's `algorithm` hold a [`PickerKind`], parsed where the user
//! wrote it, so an unknown name is an error there (listing the known ones)
//! and never reaches a swarm.

use std::fmt;
use std::str::FromStr;

use super::{
    BufferVod, Linear, LivePicker, MediaRate, Picker, RarestFirst, Sequential, StdVod, SwiftVod,
    VodWindows, NAMES,
};

/// One of the picking policies, by name (see [`NAMES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PickerKind {
    /// [`Sequential`]: "sequential".
    Sequential,
    /// [`RarestFirst`]: "rarest-first".
    RarestFirst,
    /// [`Linear`]: "linear".
    Linear,
    /// [`StdVod`]: "std-vod".
    StdVod,
    /// [`SwiftVod`]: "swift-vod".
    SwiftVod,
    /// [`BufferVod`]: "buffer-vod".
    BufferVod,
    /// [`LivePicker`]: "live".
    Live,
}

impl PickerKind {
    /// The picker for a viewer when none is named: `ppspp stream`'s and a
    /// lab viewer group's default. buffer-vod: over the VoD family
    /// (`scenarios/vod-family/`, 3 seeds) its viewers stall for a third to
    /// a half of swift-vod's time on 11 of 13 scenarios (about as long on
    /// uplinks-mixed, 11 % longer when the seeder leaves), start as fast
    /// (within 0.2 s), and stall less often on 8 — not in flash crowds,
    /// where they stall more often but for far less (issue 23's table).
    pub const DEFAULT_VOD: PickerKind = PickerKind::BufferVod;

    /// The picker for a live viewer when none is named: `ppspp stream`'s
    /// on a live swarm and a lab live viewer group's default. With 8
    /// upload slots its viewers kept continuity 0.986-0.995 on
    /// `live-small` (seeds 1-4) and 0.86-0.99 on `live-500`'s links with
    /// 20 viewers (seeds 1-3), against sequential's 0.46-0.59 (0.71-0.80
    /// with 4 slots, which suit sequential better) on both.
    pub const DEFAULT_LIVE: PickerKind = PickerKind::Live;

    /// Every policy, in the order of [`NAMES`].
    pub const ALL: [PickerKind; 7] = [
        PickerKind::Sequential,
        PickerKind::RarestFirst,
        PickerKind::Linear,
        PickerKind::StdVod,
        PickerKind::SwiftVod,
        PickerKind::BufferVod,
        PickerKind::Live,
    ];

    /// The policy's name, as its pickers report it.
    pub fn name(self) -> &'static str {
        match self {
            PickerKind::Sequential => "sequential",
            PickerKind::RarestFirst => "rarest-first",
            PickerKind::Linear => "linear",
            PickerKind::StdVod => "std-vod",
            PickerKind::SwiftVod => "swift-vod",
            PickerKind::BufferVod => "buffer-vod",
            PickerKind::Live => "live",
        }
    }

    /// A picker of this policy with its default settings, streaming
    /// pickers using `windows` of content played at `rate`.
    pub fn build(self, rate: MediaRate, windows: VodWindows) -> Box<dyn Picker> {
        match self {
            PickerKind::Sequential => Box::new(Sequential::new()),
            PickerKind::RarestFirst => Box::new(RarestFirst::new()),
            PickerKind::Linear => Box::new(Linear::new()),
            PickerKind::StdVod => Box::new(StdVod::sized(rate, windows)),
            PickerKind::SwiftVod => Box::new(SwiftVod::sized(rate, windows)),
            PickerKind::BufferVod => Box::new(BufferVod::sized(rate, windows)),
            PickerKind::Live => Box::new(LivePicker::new(rate)),
        }
    }
}

impl fmt::Display for PickerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PickerKind {
    type Err = UnknownPicker;

    /// The policy called `name`, one of [`NAMES`].
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        PickerKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| UnknownPicker { name: name.into() })
    }
}

/// A picker name that is none of [`NAMES`]. "Algorithm" is what the
/// command line and scenario files call a picker.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown algorithm '{name}' (known: {known})", known = NAMES.join(", "))]
pub struct UnknownPicker {
    /// The name as given.
    pub name: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kinds_are_the_names() {
        let names: Vec<&str> = PickerKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, NAMES);
        for kind in PickerKind::ALL {
            assert_eq!(kind.name().parse::<PickerKind>(), Ok(kind));
            assert_eq!(kind.to_string(), kind.name());
            let picker = kind.build(MediaRate::default(), VodWindows::default());
            assert_eq!(picker.name(), kind.name());
        }
    }

    #[test]
    fn an_unknown_name_is_refused_with_the_known_ones() {
        for name in ["random", "", "Sequential", "rarest"] {
            let e = name.parse::<PickerKind>().unwrap_err();
            assert_eq!(e, UnknownPicker { name: name.into() });
            assert_eq!(
                e.to_string(),
                format!(
                    "unknown algorithm '{name}' (known: sequential, rarest-first, linear, \
                     std-vod, swift-vod, buffer-vod, live)"
                )
            );
        }
    }
}
