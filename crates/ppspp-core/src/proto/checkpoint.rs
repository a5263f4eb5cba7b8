//! When a downloading swarm checkpoints its progress: by time and by
//! progress.
//!
//! A checkpoint is what a killed process resumes from; everything verified
//! after the last one is fetched again. Time alone (one every
//! [`EndpointConfig::checkpoint_interval`]) leaves a process that is killed
//! again and again before its first interval with nothing, however much it
//! received. So a checkpoint is also due once enough bytes verified since
//! the last one: a fixed amount at first, so that the first comes early,
//! and then a share of what is stored, because a checkpoint records every
//! verified chunk (its cost grows with the content: about `hash_len + 1`
//! bytes per chunk, see `ppspp-store`) and a fixed step would make the
//! total written grow with the square of the content size; but at most a
//! fixed amount, because what a kill loses is what verified since the last
//! checkpoint, and a step that grows without bound loses more per kill the
//! larger the file (measured below). A full snapshot cannot have both a
//! bounded loss and an overhead that stays a fixed share of the content;
//! the cap trades them (an incremental checkpoint format would not have
//! to).
//!
//! [`EndpointConfig::checkpoint_interval`]: super::EndpointConfig::checkpoint_interval

use std::io;
use std::time::Duration;

use super::EndpointConfig;

/// A checkpoint the storage could not write, or not make durable
/// ([`Storage::checkpoint`], [`Storage::wait_checkpoint`]). The storage's
/// error is told in the message, so it is not also the source: a chain of
/// causes names it once.
///
/// [`Storage::checkpoint`]: crate::storage::Storage::checkpoint
/// [`Storage::wait_checkpoint`]: crate::storage::Storage::wait_checkpoint
#[derive(Debug, thiserror::Error)]
#[error("checkpoint failed: {0}")]
pub struct CheckpointError(pub io::Error);

/// The checkpoint triggers of an endpoint (from its [`EndpointConfig`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointPolicy {
    /// At least this often while the download moves.
    pub interval: Duration,
    /// Bytes verified since the last checkpoint that make one due, at the
    /// least (0: no progress trigger).
    pub bytes: u64,
    /// Or this share of the bytes stored at the last checkpoint, in
    /// percent, when that is more...
    pub growth_percent: u32,
    /// ...but never more than this many bytes (unless `bytes` is more).
    pub max_bytes: u64,
}

impl CheckpointPolicy {
    /// The policy `config` sets.
    pub fn of(config: &EndpointConfig) -> CheckpointPolicy {
        CheckpointPolicy {
            interval: config.checkpoint_interval,
            bytes: config.checkpoint_bytes,
            growth_percent: config.checkpoint_growth_percent,
            max_bytes: config.checkpoint_max_bytes,
        }
    }

    /// Bytes that must verify after a checkpoint taken with `stored` bytes
    /// stored before the next is due by progress.
    pub fn step(&self, stored: u64) -> u64 {
        let share = u128::from(stored) * u128::from(self.growth_percent) / 100;
        let share = u64::try_from(share).unwrap_or(u64::MAX).min(self.max_bytes);
        self.bytes.max(share)
    }

    /// Whether a checkpoint is due by progress: `verified` bytes verified
    /// since the last one, which was taken with `stored` bytes stored.
    pub fn due_by_progress(&self, verified: u64, stored: u64) -> bool {
        self.bytes > 0 && verified >= self.step(stored)
    }

    /// Whether a checkpoint is due, `elapsed` after the last one.
    pub fn due(&self, elapsed: Duration, verified: u64, stored: u64) -> bool {
        elapsed >= self.interval || self.due_by_progress(verified, stored)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_error_names_the_storage_error_once() {
        let e = CheckpointError(io::Error::other("disk full"));
        assert_eq!(e.to_string(), "checkpoint failed: disk full");
        assert!(std::error::Error::source(&e).is_none());
    }

    const MB: u64 = 1 << 20;

    fn policy() -> CheckpointPolicy {
        CheckpointPolicy {
            interval: Duration::from_secs(5),
            bytes: MB,
            growth_percent: 25,
            max_bytes: 32 * MB,
        }
    }

    #[test]
    fn the_first_comes_after_the_fixed_step() {
        let p = policy();
        assert!(!p.due(Duration::ZERO, MB - 1, 0));
        assert!(p.due(Duration::ZERO, MB, 0));
        assert!(p.due(Duration::from_secs(5), 1, 0));
    }

    #[test]
    fn later_ones_grow_with_what_is_stored() {
        let p = policy();
        assert_eq!(p.step(2 * MB), MB);
        assert_eq!(p.step(100 * MB), 25 * MB);
        assert!(!p.due_by_progress(25 * MB - 1, 100 * MB));
        assert!(p.due_by_progress(25 * MB, 100 * MB));
    }

    #[test]
    fn steps_stop_growing_at_the_cap() {
        let p = policy();
        assert_eq!(p.step(1000 * MB), 32 * MB);
        // No overflow at the edge.
        assert_eq!(p.step(u64::MAX), 32 * MB);
        let uncapped = CheckpointPolicy {
            max_bytes: u64::MAX,
            ..p
        };
        assert_eq!(uncapped.step(u64::MAX), u64::MAX / 4);
        // The fixed step wins over a smaller cap.
        let small_cap = CheckpointPolicy { max_bytes: 0, ..p };
        assert_eq!(small_cap.step(1000 * MB), MB);
    }

    #[test]
    fn zero_bytes_turns_the_progress_trigger_off() {
        let p = CheckpointPolicy {
            bytes: 0,
            ..policy()
        };
        assert!(!p.due_by_progress(u64::MAX, 0));
        assert!(p.due(Duration::from_secs(5), 0, 0));
    }
}
