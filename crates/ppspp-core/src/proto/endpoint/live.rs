//! The injector's input: chunks of a live stream pushed by the driver as
//! they are made (RFC 7574 §6.1.2). A chunk is stored at once and
//! announced only when its munro is complete and signed (§6.1.2.3); chunks
//! that leave the discard window are no longer announced or served.

use super::Endpoint;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::proto::event::Event;
use crate::proto::integrity::LiveIntegrity;
use crate::proto::{StorageFailure, StorageOp, SwarmHandle};
use crate::time::Instant;

/// Why a live chunk could not be taken.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LivePushError {
    /// No such swarm, or it is not one we inject.
    #[error("the swarm is not a live stream we inject")]
    NotInjector,
    /// The chunk is longer than the swarm's chunk size.
    #[error("a chunk of {0} bytes is longer than the chunk size")]
    TooLong(usize),
    /// The storage refused it (reported as an event too).
    #[error("the storage refused the chunk")]
    Storage,
}

impl Endpoint {
    /// Takes the next chunk of the live stream `swarm` injects, signed at
    /// `unix_us` (wall-clock µs since the Unix epoch, for the munro's
    /// timestamp) when it completes a munro. Returns the chunk's index.
    pub fn push_live_chunk(
        &mut self,
        now: Instant,
        swarm: SwarmHandle,
        data: &[u8],
        unix_us: u64,
    ) -> Result<ChunkIndex, LivePushError> {
        let s = self
            .swarms
            .get_mut(swarm)
            .ok_or(LivePushError::NotInjector)?;
        if data.len() > s.chunk_size.bytes_usize() {
            return Err(LivePushError::TooLong(data.len()));
        }
        let Some(LiveIntegrity::Injector(inj)) = s.integrity.live_mut() else {
            return Err(LivePushError::NotInjector);
        };
        let chunk = ChunkIndex(inj.chunks_taken());
        if let Err(e) = s.storage.write_chunk(chunk, data) {
            self.events.push_back(Event::StorageError {
                swarm,
                error: StorageFailure::new(StorageOp::WriteChunk(chunk), &e),
            });
            return Err(LivePushError::Storage);
        }
        let signed = inj.push_chunk(data, unix_us).and_then(|m| m.bin.chunks());
        let kept = inj.available();
        if let Some(range) = signed {
            s.have.set(range);
            s.have_log
                .extend((range.first().0..=range.last().0).map(ChunkIndex));
            s.bound_live_logs();
            s.stats.chunks_verified += range.len();
        }
        // Chunks out of the window are no longer ours to announce.
        if let Some(old) = kept.and_then(|k| k.first().0.checked_sub(1)) {
            if let Some(gone) = ChunkRange::new(0u64, old) {
                s.have.clear(gone);
            }
        }
        if signed.is_some() {
            self.notice_news(now, swarm);
        }
        Ok(chunk)
    }
}
