//! The seek model: a viewer that jumps to a uniformly random position of
//! the content now and then, as viewers of video on demand do (seed paper
//! 000's E1 viewers watch front to back; issue 23 asks how the download
//! algorithms hold up when viewers seek).
//!
//! Seeks form a Poisson process in *playback* time: while the player plays,
//! a seek comes with probability `per_minute` per minute played; prebuffering,
//! stalled or ended, the process pauses. A Poisson process is the memoryless
//! choice: how long the viewer has watched says nothing of when it jumps,
//! so one number describes the model and the gaps between seeks are drawn
//! independently (exponential, by inversion). The target is uniform over
//! the content's chunks.
//!
//! Sans-IO like the rest of the core: the random source is handed in by
//! the driver (the lab derives one per viewer from the experiment seed),
//! and the model reads no clock: the player tells it how long it played.

use std::time::Duration;

use rand::rngs::Xoshiro256PlusPlus;
use rand::RngExt;

/// The highest seek rate a model takes: one a second of playback. Above
/// it a viewer watches almost nothing between jumps, and playing a
/// complete download out to its end (see `Player::play_out`) would take
/// very many seeks.
pub const MAX_SEEKS_PER_MINUTE: f64 = 60.0;

/// How often a viewer seeks: a Poisson process of `per_minute` seeks per
/// minute of playback, each to a uniformly random chunk.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeekModel {
    per_minute: f64,
}

/// A seek rate that is not a number of seeks per minute in
/// `(0, MAX_SEEKS_PER_MINUTE]`.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error(
    "a seek rate must be above 0 and at most {MAX_SEEKS_PER_MINUTE} seeks per minute of \
     playback, not {0}"
)]
pub struct SeekRateError(pub f64);

impl SeekModel {
    /// Seeks at `rate` per minute of playback.
    pub fn per_minute(rate: f64) -> Result<SeekModel, SeekRateError> {
        if rate > 0.0 && rate <= MAX_SEEKS_PER_MINUTE {
            Ok(SeekModel { per_minute: rate })
        } else {
            Err(SeekRateError(rate))
        }
    }

    /// Seeks per minute of playback.
    pub fn rate_per_minute(self) -> f64 {
        self.per_minute
    }

    /// Playback time until the next seek: exponential with mean
    /// `1 / rate`, at least a microsecond (so that a player always plays
    /// between two seeks).
    fn gap(self, rng: &mut Xoshiro256PlusPlus) -> Duration {
        let u: f64 = rng.random::<f64>();
        let secs = -(1.0 - u).ln() * 60.0 / self.per_minute;
        // Far beyond any simulation (about 3,000 years) is "never".
        let us = (secs * 1e6).clamp(1.0, 1e17) as u64;
        Duration::from_micros(us)
    }
}

/// A seek model with its random source and the playback time left until
/// its next seek.
#[derive(Clone, Debug)]
pub(crate) struct Seeker {
    model: SeekModel,
    rng: Xoshiro256PlusPlus,
    /// Playback time left before the next seek.
    left: Duration,
}

impl Seeker {
    /// A seeker drawing from `rng`; its first gap is drawn at once.
    pub(crate) fn new(model: SeekModel, mut rng: Xoshiro256PlusPlus) -> Seeker {
        let left = model.gap(&mut rng);
        Seeker { model, rng, left }
    }

    /// Playback time left before the next seek.
    pub(crate) fn left(&self) -> Duration {
        self.left
    }

    /// The player played for `d` without seeking.
    pub(crate) fn played(&mut self, d: Duration) {
        self.left = self.left.saturating_sub(d);
    }

    /// The seek is due: the chunk to jump to, uniform over `0..chunks`
    /// (`chunks` at least 1), and the next gap drawn.
    pub(crate) fn fire(&mut self, chunks: u64) -> u64 {
        let target = self.rng.random_range(0..chunks.max(1));
        self.left = self.model.gap(&mut self.rng);
        target
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn rates_outside_the_range_are_refused() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 60.5] {
            let e = SeekModel::per_minute(bad).unwrap_err();
            assert!(e.0.to_bits() == bad.to_bits(), "{bad}");
        }
        assert_eq!(SeekModel::per_minute(0.5).unwrap().rate_per_minute(), 0.5);
        assert_eq!(SeekModel::per_minute(60.0).unwrap().rate_per_minute(), 60.0);
    }

    #[test]
    fn gaps_average_the_inverse_rate() {
        let m = SeekModel::per_minute(2.0).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let n = 20_000;
        let total: f64 = (0..n).map(|_| m.gap(&mut rng).as_secs_f64()).sum();
        // Mean 30 s; the standard error of 20,000 exponential draws is
        // 0.7 % of it.
        let mean = total / f64::from(n);
        assert!((mean - 30.0).abs() < 1.0, "{mean}");
    }

    #[test]
    fn targets_are_uniform_and_in_range() {
        let m = SeekModel::per_minute(1.0).unwrap();
        let mut s = Seeker::new(m, Xoshiro256PlusPlus::seed_from_u64(9));
        let mut halves = [0u32; 2];
        for _ in 0..10_000 {
            let t = s.fire(100);
            assert!(t < 100);
            halves[usize::from(t >= 50)] += 1;
        }
        assert!(halves[0].abs_diff(halves[1]) < 400, "{halves:?}");
        assert_eq!(s.fire(0), 0, "no content: the first chunk");
    }
}
