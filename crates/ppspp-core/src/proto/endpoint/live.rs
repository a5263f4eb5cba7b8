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

/// Reading a live stream back, for a driver that plays or relays it.
impl Endpoint {
    /// The first chunk `swarm` keeps and requests (a live swarm's floor:
    /// the hook-in, then the start of the discard window); `None` before
    /// the hook-in, and for a static swarm.
    pub fn live_floor(&self, swarm: SwarmHandle) -> Option<ChunkIndex> {
        self.swarms.get(swarm)?.live_floor()
    }

    /// The newest chunk of `swarm`'s live stream that is signed (at the
    /// source) or under a trusted munro (at a receiver): the live edge as
    /// this endpoint knows it.
    pub fn live_edge(&self, swarm: SwarmHandle) -> Option<ChunkIndex> {
        match self.swarms.get(swarm)?.integrity.live()? {
            LiveIntegrity::Injector(i) => i.available().map(|r| r.last()),
            LiveIntegrity::Receiver(v) => v.trusted_span().map(|r| r.last()),
        }
    }

    /// When the source signed the munro holding `chunk`, in µs since the
    /// Unix epoch by the source's clock: how old the chunk is.
    pub fn live_signed_at(&self, swarm: SwarmHandle, chunk: ChunkIndex) -> Option<u64> {
        let s = self.swarms.get(swarm)?;
        let live = s.integrity.live()?;
        let profile = s.live.as_ref()?.shape.params.profile;
        profile.unix_micros(live.munro_for(chunk)?.timestamp)
    }

    /// The chunk size of `swarm`.
    pub fn chunk_size(&self, swarm: SwarmHandle) -> Option<crate::chunk::ChunkSize> {
        self.swarms.get(swarm).map(|s| s.chunk_size)
    }

    /// Reads verified chunk `chunk` of `swarm` into `out` (at least a chunk
    /// long); its length, or `None` when it is not verified here or the
    /// storage failed (reported as an event).
    pub fn read_chunk(
        &mut self,
        swarm: SwarmHandle,
        chunk: ChunkIndex,
        out: &mut [u8],
    ) -> Option<usize> {
        let s = self.swarms.get_mut(swarm)?;
        if !s.have.contains(chunk) {
            return None;
        }
        match s.storage.read_chunk(chunk, out) {
            Ok(n) => Some(n),
            Err(e) => {
                self.events.push_back(Event::StorageError {
                    swarm,
                    error: StorageFailure::new(StorageOp::ReadChunk(chunk), &e),
                });
                None
            }
        }
    }
}
