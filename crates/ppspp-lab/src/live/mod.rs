//! Live streaming in the lab (RFC 7574 §6.1): a source that makes chunks
//! at the stream's bitrate and injects them through the core
//! (`Endpoint::push_live_chunk`, which signs each full munro), and viewers
//! whose live player hooks in, plays, stalls and skips ahead.
//!
//! - [`player`]: the live player model (pure, no endpoint);
//! - [`viewer`]: a player driven from a receiving endpoint, with its lag
//!   samples;
//! - [`source`]: the camera: when each chunk is made, and pushing it;
//! - [`metrics`]: per-viewer figures and the run's live summary.
//!
//! Nothing here forks protocol logic: hook-in, the discard window,
//! signatures and verification are the core's; the lab only decides when
//! chunks exist and what a viewer sees.

pub mod metrics;
pub mod player;
pub mod source;
pub mod viewer;

use std::io;
use std::time::Duration;

use ppspp_core::live::{LiveKeyPair, LiveParams, LiveShape};
use ppspp_core::storage::Storage;
use ppspp_core::time::Instant;
use ppspp_core::wire::{DiscardWindow, LiveSignatureAlgorithm};
use ppspp_core::{ChunkIndex, ChunkSize};

use crate::content::read_filled;
use crate::rng::{derive, Stream};
use crate::scenario::live::LiveSpec;
use crate::scenario::Scenario;

/// Chunks against media time at the stream's bitrate, in exact integer
/// arithmetic (as the core's player does), so runs do not drift.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MediaClock {
    chunk_bits: u128,
    bps: u128,
}

impl MediaClock {
    /// Chunks of `chunk_size` played at `bps` bits per second (at least 1).
    pub fn new(chunk_size: ChunkSize, bps: u64) -> MediaClock {
        MediaClock {
            chunk_bits: u128::from(chunk_size.bytes_u64()) * 8,
            bps: u128::from(bps.max(1)),
        }
    }

    /// Microseconds that `k` chunks last, rounded up.
    pub fn span_us(self, k: u64) -> u64 {
        let num = u128::from(k) * self.chunk_bits * 1_000_000;
        u64::try_from(num.div_ceil(self.bps)).unwrap_or(u64::MAX)
    }

    /// Whole chunks that fit in `us` microseconds.
    pub fn chunks_in_us(self, us: u64) -> u64 {
        let num = u128::from(us) * self.bps;
        u64::try_from(num / (self.chunk_bits * 1_000_000)).unwrap_or(u64::MAX)
    }

    /// Chunks that hold `d` of media, at least one.
    pub fn chunks_for(self, d: Duration) -> u64 {
        let us = ppspp_core::time::duration_micros(d);
        let num = u128::from(us) * self.bps;
        let n = num.div_ceil(self.chunk_bits * 1_000_000);
        u64::try_from(n).unwrap_or(u64::MAX).max(1)
    }

    /// Seconds of media in one chunk.
    pub fn chunk_secs(self) -> f64 {
        self.chunk_bits as f64 / self.bps as f64
    }
}

/// A scenario's live stream, as every peer of the run sees it.
#[derive(Clone, Debug)]
pub struct LiveStream {
    /// The stream's chunk size.
    pub chunk_size: ChunkSize,
    /// Its bitrate (bit/s).
    pub bitrate: u64,
    /// Chunks against time.
    pub clock: MediaClock,
    /// The discard window in chunks, whole munros.
    pub window_chunks: u64,
    /// Chunks per munro.
    pub munro_chunks: u64,
    /// Chunks in the stream when it has a length (whole munros).
    pub end: Option<u64>,
    /// Munros behind the newest that a viewer hooks in.
    pub hook_in_behind: u64,
    /// The source's signature algorithm.
    pub algorithm: LiveSignatureAlgorithm,
    /// The source's secret key, derived from the experiment seed.
    pub secret: [u8; 32],
    /// The swarm id: the source's public key (RFC 7574 §12.1).
    pub swarm_id: Vec<u8>,
    /// When the source starts making chunks: its arrival.
    pub start: Instant,
}

/// Why a live stream could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LiveSetupError {
    /// The algorithm name is not known (the scenario check refuses it).
    #[error("unknown live signature algorithm {0}")]
    Algorithm(String),
    /// The key could not be made.
    #[error(transparent)]
    Key(#[from] ppspp_core::live::LiveKeyError),
}

impl LiveStream {
    /// The stream of `spec` in `scenario`, keyed from `seed`.
    pub fn new(
        scenario: &Scenario,
        spec: &LiveSpec,
        chunk_size: ChunkSize,
        seed: u64,
    ) -> Result<LiveStream, LiveSetupError> {
        let algorithm = spec
            .signature_algorithm()
            .ok_or_else(|| LiveSetupError::Algorithm(spec.algorithm.clone()))?;
        let clock = MediaClock::new(chunk_size, spec.bitrate.0);
        let munro_chunks = LiveParams::default().munro.chunks();
        let window_chunks = clock.chunks_for(spec.window.0).div_ceil(munro_chunks) * munro_chunks;
        // The source streams from its arrival: a stream that would outlast
        // the run is cut there (it could not be watched past it anyway).
        let length = spec.duration.map(|d| d.0).unwrap_or(scenario.duration.0);
        let end = Some(
            clock.chunks_in_us(ppspp_core::time::duration_micros(length)) / munro_chunks
                * munro_chunks,
        );
        let mut secret = [0u8; 32];
        for (i, part) in secret.chunks_mut(8).enumerate() {
            part.copy_from_slice(&derive(seed, Stream::LiveKey, i as u64).to_le_bytes());
        }
        let key = LiveKeyPair::from_secret(algorithm, &secret)?;
        Ok(LiveStream {
            chunk_size,
            bitrate: spec.bitrate.0,
            clock,
            window_chunks,
            munro_chunks,
            end,
            hook_in_behind: spec.hook_in_behind,
            algorithm,
            secret,
            swarm_id: key.public_key().swarm_id(),
            start: Instant::ZERO,
        })
    }

    /// The swarm's shape, the same at the source and every receiver.
    pub fn shape(&self) -> LiveShape {
        LiveShape {
            params: LiveParams::default(),
            algorithm: self.algorithm,
            window: DiscardWindow::Window(self.window_chunks),
            chunk_size: Some(self.chunk_size.bytes_u64() as u32),
        }
    }

    /// The source's key pair.
    pub fn key(&self) -> Result<LiveKeyPair, ppspp_core::live::LiveKeyError> {
        LiveKeyPair::from_secret(self.algorithm, &self.secret)
    }

    /// A store for one peer of the stream.
    pub fn storage(&self) -> SyntheticLiveStorage {
        SyntheticLiveStorage {
            chunk_size: self.chunk_size,
        }
    }
}

/// A peer's store of a synthetic live stream: every chunk is a full chunk
/// whose bytes derive from its index ([`fill_chunk`](crate::content::fill_chunk)), so reads make them
/// and writes (of verified chunks) keep nothing; which chunks a peer has is
/// the core's binmap, which the discard window bounds. Five hundred viewers
/// then cost no window of bytes each.
#[derive(Clone, Copy, Debug)]
pub struct SyntheticLiveStorage {
    chunk_size: ChunkSize,
}

impl Storage for SyntheticLiveStorage {
    fn read_chunk(&mut self, chunk: ChunkIndex, out: &mut [u8]) -> io::Result<usize> {
        read_filled(chunk, self.chunk_size.bytes_usize(), out)
    }

    fn write_chunk(&mut self, _chunk: ChunkIndex, _data: &[u8]) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::content::fill_chunk;

    #[test]
    fn a_kilobyte_chunk_at_one_megabit_lasts_8192_microseconds() {
        let c = MediaClock::new(ChunkSize::DEFAULT, 1_000_000);
        assert_eq!(c.span_us(1), 8192);
        assert_eq!(c.chunks_in_us(8191), 0);
        assert_eq!(c.chunks_in_us(8192), 1);
        assert_eq!(c.chunks_for(Duration::from_secs(5)), 611);
        assert!((c.chunk_secs() - 0.008192).abs() < 1e-12);
    }

    #[test]
    fn the_store_makes_the_bytes_the_source_pushed() {
        let mut s = SyntheticLiveStorage {
            chunk_size: ChunkSize::DEFAULT,
        };
        let mut out = vec![0u8; 1024];
        assert_eq!(s.read_chunk(ChunkIndex(9), &mut out).unwrap(), 1024);
        let mut want = vec![0u8; 1024];
        fill_chunk(9, &mut want);
        assert_eq!(out, want);
        assert!(s.read_chunk(ChunkIndex(9), &mut [0u8; 10]).is_err());
    }
}
