//! Download scheduling (piece picking) behind a trait.
//!
//! A picker chooses which chunks to REQUEST from a peer (RFC 7574 §3.7).
//! The swarm owns the bookkeeping — what we have, what is requested from
//! whom, how many connected peers have each chunk — and hands the picker a
//! read-only [`PickView`] of it. One policy per file; a [`PickerKind`]
//! (parsed from the name used on the command line and in scenario files)
//! builds one, and [`by_name`] does both.

use std::fmt;
use std::time::Duration;

use rand::Rng;

use crate::binmap::Binmap;
use crate::chunk::{ChunkRange, ChunkSize};
use crate::play::timing::Timing;
use crate::play::Bitrate;
use crate::time::Instant;

pub mod availability;
mod block_minima;
pub mod buffer_vod;
mod candidates;
pub mod dry;
pub mod fast_peers;
pub mod kind;
pub mod linear;
pub mod live;
pub mod rarest;
pub mod sequential;
pub mod std_vod;
pub mod swift_vod;
#[cfg(test)]
mod test_sets;
mod window;

pub use buffer_vod::BufferVod;
pub use dry::{DryBlocks, DryView};
pub use kind::{PickerKind, UnknownPicker};
pub use linear::Linear;
pub use live::LivePicker;
pub use rarest::RarestFirst;
pub use sequential::Sequential;
pub use std_vod::StdVod;
pub use swift_vod::SwiftVod;

/// The names [`by_name`] accepts, one per policy ([`PickerKind::ALL`]).
pub const NAMES: &[&str] = &[
    "sequential",
    "rarest-first",
    "linear",
    "std-vod",
    "swift-vod",
    "buffer-vod",
    "live",
];

/// The picker called `name` (one of [`NAMES`]) with its default settings,
/// its windows sized for [`MediaRate::default`].
pub fn by_name(name: &str) -> Result<Box<dyn Picker>, UnknownPicker> {
    by_name_for(name, MediaRate::default())
}

/// The picker called `name`, streaming pickers sizing their default
/// windows ([`VodWindows::default`]) for content played at `rate`.
pub fn by_name_for(name: &str, rate: MediaRate) -> Result<Box<dyn Picker>, UnknownPicker> {
    by_name_with(name, rate, VodWindows::default())
}

/// The picker called `name`, streaming pickers using `windows` of content
/// played at `rate`.
pub fn by_name_with(
    name: &str,
    rate: MediaRate,
    windows: VodWindows,
) -> Result<Box<dyn Picker>, UnknownPicker> {
    Ok(name.parse::<PickerKind>()?.build(rate, windows))
}

/// The media time of the VoD pickers' high and mid priority sets (seed
/// paper 000 §III-C, Fig. 4); the low set is the rest of the content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VodWindows {
    /// The high set, taken in order from the playhead.
    pub high: Duration,
    /// The mid set after it, taken rarest-first.
    pub mid: Duration,
}

impl Default for VodWindows {
    /// [`std_vod::HIGH_WINDOW`] and [`std_vod::MID_WINDOW`].
    fn default() -> Self {
        VodWindows {
            high: std_vod::HIGH_WINDOW,
            mid: std_vod::MID_WINDOW,
        }
    }
}

/// How fast playback consumes chunks: what streaming pickers need to turn
/// windows of media time into chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaRate {
    /// Bytes per chunk.
    pub chunk_size: ChunkSize,
    /// The media bitrate.
    pub bitrate: Bitrate,
}

impl Default for MediaRate {
    /// 1 KiB chunks (RFC 7574 §8.1's default) of 1 Mbit/s video.
    fn default() -> Self {
        MediaRate {
            chunk_size: ChunkSize::DEFAULT,
            bitrate: Bitrate::MBIT,
        }
    }
}

impl MediaRate {
    /// Chunks holding `d` of media, at least one.
    pub fn chunks_for(self, d: Duration) -> u64 {
        Timing::new(self.chunk_size, self.bitrate).chunks_for(d)
    }
}

/// What a picker may look at when choosing chunks for one peer.
pub struct PickView<'a> {
    /// The current time.
    pub now: Instant,
    /// The number of chunks in the content, once known.
    pub chunk_count: Option<u64>,
    /// Chunks we have verified.
    pub have: &'a Binmap,
    /// Chunks requested from any peer and not yet received.
    pub requested: &'a Binmap,
    /// Chunks requested from this peer and not yet received.
    pub requested_from_peer: &'a Binmap,
    /// Chunks this peer has announced (HAVE, or a seeder's everything).
    pub peer_has: &'a Binmap,
    /// Chunks asked of a second peer, or to be: an end-game duplicate, or
    /// an urgent request that passed its deadline at another peer (seed
    /// paper 000 §III-C). The late ones not asked again yet are fresh.
    pub late: &'a Binmap,
    /// How many connected peers have each chunk.
    pub availability: &'a availability::Availability,
    /// Whether this peer's chunks are counted one by one in `availability`
    /// (so each counts at least one); false for a peer counted once as
    /// having everything.
    pub peer_counted: bool,
    /// The playback position for streaming pickers (the first chunk the
    /// player needs next); `None` when nothing plays.
    pub playhead: Option<crate::chunk::ChunkIndex>,
    /// A live stream (RFC 7574 §6.1): no end, so no end game, and
    /// `chunk_count` stays unknown.
    pub live: bool,
    /// Blocks known to hold nothing fresh at this peer, which a picker may
    /// skip and add to (see [`dry`]); `None`: none known.
    pub dry: Option<DryView<'a>>,
    /// What the swarm knows of this peer as a source of urgent data.
    pub link: PeerLink,
}

/// This peer as a source of urgent data (seed paper 000 §III-A, eq. 3).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PeerLink {
    /// Whether the peer is in the fast-peer set; `None` while no set is
    /// known (no picker asked for one, or no peer measured yet).
    pub fast: Option<bool>,
    /// How many peers the fast-peer set holds (F of eq. 3).
    pub fast_count: u64,
    /// The request window to this peer in chunks (W_ledbat of eq. 3).
    pub window: u64,
    /// Requests to this peer that timed out per chunk received (L_r).
    pub loss: f64,
    /// How long this peer normally takes to answer a request (its smoothed
    /// request round trip): a deadline sooner than that cannot be met. It
    /// must stay below the request timeout, or a deadline could never
    /// pass before the timeout gives the request up anyway.
    pub answer_time: Duration,
    /// The player waits for its prebuffer (not a stall): a picker that
    /// ranks urgency may spend every request on the high set (seed paper
    /// 000 §IV-A: "the initial buffer is fetched aggressively").
    pub prebuffering: bool,
}

/// A download scheduling policy.
pub trait Picker: fmt::Debug + Send {
    /// The policy's name ("sequential", "rarest-first", …).
    fn name(&self) -> &'static str;

    /// Chooses up to `max_chunks` chunks to request from the peer described
    /// by `view`, appending them to `out` as ranges. Chunks must be ones the
    /// peer has and we lack. Normally they are requested from nobody else;
    /// in the end game — when every missing chunk the peer has is already
    /// requested elsewhere — a picker may choose chunks requested from other
    /// peers (never ones already requested from this peer), so the last
    /// chunks do not wait on one slow peer.
    fn pick(
        &mut self,
        view: &PickView<'_>,
        max_chunks: u64,
        rng: &mut dyn Rng,
        out: &mut Vec<ChunkRange>,
    );

    /// The rate the content plays at, for a picker that wants the swarm
    /// to keep a fast-peer set (its need is x times this rate, eq. 2);
    /// `None` (the default): no fast-peer set.
    fn fast_peer_rate(&self) -> Option<MediaRate> {
        None
    }

    /// When a request for `range`, just picked with `view`, is late and
    /// should go to another peer (and be cancelled here); `None` (the
    /// default): only the channel's request timeout applies.
    fn deadline(&self, view: &PickView<'_>, range: ChunkRange) -> Option<Instant> {
        let _ = (view, range);
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_its_picker() {
        for &name in NAMES {
            let picker = by_name(name).expect("listed names build");
            assert_eq!(picker.name(), name);
        }
        for name in ["random", ""] {
            let e = by_name(name).unwrap_err();
            assert_eq!(e, UnknownPicker { name: name.into() });
        }
    }
}
