//! Bounds on what a peer's announcements (HAVE, RFC 7574 §8.5) may cost us.
//! A peer's chunk set is kept as a binmap, whose memory grows with the
//! boundaries between chunks it has and lacks: a peer sending millions of
//! HAVEs for scattered chunks would grow it without end. Once the content
//! size is known, announcements are cut to the content, so the set is
//! bounded by what the peer can possibly have; before that (a download
//! started from a bare swarm id), by a fixed allowance. HAVEs past either
//! are misbehaviour: counted, and a peer that keeps sending them is closed.

use super::super::Peer;
use super::Download;
use crate::chunk::ChunkRange;
use crate::proto::event::CloseReason;
use crate::proto::swarm::Swarm;
use crate::proto::ProtocolViolation;

/// Heap a peer's chunk set may take while the content size is unknown. An
/// honest peer's announcements before the first chunk arrives (which
/// brings the size) are a handful of ranges; this is room for tens of
/// thousands of separate runs.
pub(crate) const MAX_UNSIZED_HAVE_BYTES: usize = 1 << 20;

/// HAVEs not recorded after which the peer is closed: an honest peer sends
/// none (a HAVE wholly past the content names chunks that do not exist).
pub(crate) const MAX_HAVES_REFUSED: u64 = 4096;

impl Download {
    /// Whether the peer's chunk set may grow by `range`.
    pub(super) fn may_record_has(&self, swarm: &Swarm, range: ChunkRange) -> bool {
        swarm.counted_chunk_count().is_some()
            || self.remote_has.heap_bytes() < MAX_UNSIZED_HAVE_BYTES
            || self.remote_has.is_filled(range)
    }
}

/// A HAVE we do not record: counted against the peer. Fails with the
/// reason to close once the peer has sent too many.
pub(in crate::proto::channel) fn refuse_have(
    swarm: &mut Swarm,
    peer: &mut Peer,
) -> Result<(), CloseReason> {
    peer.stats.haves_refused += 1;
    swarm.stats.haves_refused += 1;
    swarm.peer_stats(peer.addr).haves_refused += 1;
    if peer.stats.haves_refused >= MAX_HAVES_REFUSED {
        return Err(CloseReason::Protocol(ProtocolViolation::ImpossibleChunks));
    }
    Ok(())
}
