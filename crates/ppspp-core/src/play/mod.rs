//! The player model: what a viewer of a streamed download sees.
//!
//! A [`Player`] consumes the content in chunk order at the media bitrate
//! (seed paper 000, §IV-A): it waits for a prebuffer before it starts, then
//! plays; when the next chunk is missing it stalls, and resumes once a
//! rebuffer's worth of chunks is there again. A seek moves the playback
//! position and waits for a prebuffer there; a [`SeekModel`] makes the
//! viewer seek on its own, to random positions at a rate per minute of
//! playback. It is sans-IO like the rest of the core: the driver hands in
//! time, the chunks we have and the chunks as they verify, and the random
//! source of the seek model, and asks when to look again. The lab drives one per
//! simulated viewer and the HTTP gateway one per stream, so both report
//! the same metrics: startup delay, stalls, stall time, continuity and
//! seeks.

mod player;
mod seek;
mod stall_log;
pub(crate) mod timing;
mod viewer;

pub use player::{PlaybackStats, Player, PlayerState, PLAY_OUT_LOOKS};
pub use seek::{SeekModel, SeekRateError, MAX_SEEKS_PER_MINUTE};
pub use stall_log::{StallLog, StallSpan, MAX_LOGGED_STALLS};
pub use viewer::Viewer;

use std::time::Duration;

/// A media bitrate, in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bitrate(pub u64);

impl Bitrate {
    /// One megabit per second: the video bitrate of seed paper 000's
    /// experiments ("an average bitrate of about 1 Mbit/s", §IV-A).
    pub const MBIT: Bitrate = Bitrate(1_000_000);

    /// Bits per second, at least one.
    pub fn bps(self) -> u64 {
        self.0.max(1)
    }
}

/// How a player plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlayerConfig {
    /// The rate at which playback consumes the content.
    pub bitrate: Bitrate,
    /// Media time buffered before playback starts, and after a seek.
    pub prebuffer: Duration,
    /// Media time buffered before playback resumes after a stall.
    pub rebuffer: Duration,
}

impl Default for PlayerConfig {
    /// 1 Mbit/s, 5 s prebuffer, 5 s rebuffer: seed paper 000's player
    /// starts "once the initial 5-second buffer has been filled" and after a
    /// stall resumes "once the buffer has been filled again" (§IV-A).
    fn default() -> Self {
        PlayerConfig {
            bitrate: Bitrate::MBIT,
            prebuffer: Duration::from_secs(5),
            rebuffer: Duration::from_secs(5),
        }
    }
}
