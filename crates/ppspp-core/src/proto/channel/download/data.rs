//! DATA and INTEGRITY from the peer: hashes fed to the tree, chunks
//! verified and stored, requests answered, ACKs queued (RFC 7574 §3.4–3.5,
//! §5); a peer whose data fails verification is dropped.

use crate::bin::Bin;
use crate::cc::AckSample;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::hash::Hash;
use crate::merkle::{chunk_count_from_peaks, VerifyError};
use crate::proto::channel::Channel;
use crate::proto::event::{CloseReason, Event};
use crate::proto::integrity::Integrity;
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::time::Instant;
use crate::wire::{ChunkSpec, Timestamp};

/// Chunks one DATA message may carry that we look at.
const MAX_CHUNKS_PER_DATA: u64 = 64;

impl Channel {
    pub(in crate::proto::channel) fn on_data(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        spec: ChunkSpec,
        timestamp: Timestamp,
        payload: &[u8],
        hashes: &[(Bin, Hash)],
    ) {
        // The sender's wall clock against ours: the one-way delay plus the
        // offset between the two clocks, which LEDBAT's base delay cancels
        // (RFC 6817 §3.4).
        let delay = (ctx.wire_now() as i64).wrapping_sub(timestamp.0 as i64);
        let Some(range) = spec.to_chunks(swarm.chunk_size) else {
            return;
        };
        if !self.accept_hashes(swarm, hashes) {
            return;
        }
        let cs = swarm.chunk_size.bytes_usize();
        let count = range.len().min(MAX_CHUNKS_PER_DATA);
        for i in 0..count {
            let start = i as usize * cs;
            if start >= payload.len() || self.close.is_some() {
                break;
            }
            let data = &payload[start..(start + cs).min(payload.len())];
            self.on_chunk(swarm, ctx, ChunkIndex(range.first().0 + i), data, delay);
        }
    }

    /// Feeds the INTEGRITY messages that came before a DATA to the tree:
    /// the leading ones that form a peak decomposition as peak hashes (sent
    /// until we acknowledge something, RFC 7574 §5.6.2; they also bind the
    /// incomplete right edge of the tree), the rest as uncles. Returns false
    /// if the peer lied.
    ///
    /// With a bare swarm id any prefix that is the peaks of some count is
    /// offered, longest first (uncles can look like the peaks of a smaller
    /// tree, but they never hash up to the root): the tree decides whether
    /// the claim replaces the count held (`merkle/verify/claim.rs`).
    pub(in crate::proto::channel) fn accept_hashes(
        &mut self,
        swarm: &mut Swarm,
        hashes: &[(Bin, Hash)],
    ) -> bool {
        let Integrity::Partial(tree) = &mut swarm.integrity else {
            return true;
        };
        let before = tree.chunk_count();
        // Once the count is proven (or fixed by the metadata), only its own
        // peaks can be news: uncle prefixes that decompose another count are
        // not climbed to the root on every DATA (each climb hashes).
        let proven = tree.size_proven();
        let candidates: Vec<(usize, u64)> = (1..=hashes.len())
            .rev()
            .filter_map(|k| {
                let bins: Vec<Bin> = hashes[..k].iter().map(|h| h.0).collect();
                chunk_count_from_peaks(&bins).map(|n| (k, n))
            })
            .filter(|&(_, n)| !proven || before == Some(n))
            .collect();
        let mut uncles = hashes;
        for (k, n) in candidates {
            match tree.accept_peaks(&hashes[..k]) {
                Ok(n) => {
                    uncles = &hashes[k..];
                    self.down.claimed = Some(n);
                    if before != Some(n) {
                        swarm.size_counts();
                        self.out.size_learned = true;
                    }
                    break;
                }
                // The count we hold, with hashes that do not make the root;
                // once a chunk backs the count, an honest peer's uncles can
                // no longer decompose it.
                Err(VerifyError::BadPeaks) if before == Some(n) && tree.height_proven() => {
                    self.reject(swarm);
                    return false;
                }
                // Peaks that make the root but a count that what verified
                // shows false.
                Err(VerifyError::SizeMismatch { .. }) => {
                    self.down.claimed = Some(n);
                    self.reject(swarm);
                    return false;
                }
                Err(_) => {}
            }
        }
        let Integrity::Partial(tree) = &mut swarm.integrity else {
            return true;
        };
        for &(bin, hash) in uncles {
            if let Err(VerifyError::BadHash(_)) = tree.accept_uncle(bin, hash) {
                self.reject(swarm);
                return false;
            }
        }
        true
    }

    /// Whether a chunk that failed with `error` is the sender's fault for
    /// sure. While the size is only claimed by peaks, a chunk may fail
    /// because the claim is false (the honest last chunk is "too short"
    /// under a forged larger count, say): only a peer that vouched for the
    /// count held, with its own peaks, answers for it.
    pub(in crate::proto::channel) fn at_fault(&self, swarm: &Swarm, error: &VerifyError) -> bool {
        let Integrity::Partial(tree) = &swarm.integrity else {
            return true;
        };
        let vouched = self.down.claimed.is_some() && self.down.claimed == tree.chunk_count();
        match error {
            // Under a height-proven count every trusted hash is the real
            // tree's, so a mismatch is the data's fault.
            VerifyError::BadChunk(_) => vouched || tree.height_proven(),
            VerifyError::BadLength { .. } | VerifyError::ChunkOutOfRange { .. } => {
                vouched || tree.size_proven()
            }
            _ => true,
        }
    }

    pub(in crate::proto::channel) fn on_chunk(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        chunk: ChunkIndex,
        data: &[u8],
        delay: i64,
    ) {
        if swarm.have.contains(chunk) {
            // A duplicate (end game, or a retransmission): acknowledge it so
            // the sender's controller sees the delivery.
            swarm.stats.chunks_duplicate += 1;
            self.down.outstanding.received(chunk);
            self.queue_ack(chunk, delay);
            return;
        }
        // A partial tree verifies with the hashes received; a complete one
        // (hashes known in advance, as a simulated peer has them) checks the
        // chunk against its leaf.
        let height_known = swarm.integrity.partial().is_none_or(|t| t.height_proven());
        let count = swarm.chunk_count();
        let verified = swarm.integrity.verify(chunk, data);
        if swarm.chunk_count() != count {
            // The chunk showed the content ends with it, below a claimed
            // count (`PartialTree::verify_chunk`).
            swarm.size_counts();
            self.out.size_learned = true;
        }
        match verified {
            Ok(()) => {
                if !height_known {
                    // The claim is backed now: the endpoint drops the peers
                    // whose claims it shows false.
                    self.out.size_learned = true;
                }
                if let Err(e) = swarm.storage.write_chunk(chunk, data) {
                    ctx.events.push_back(Event::StorageError {
                        swarm: self.swarm,
                        error: e.to_string(),
                    });
                    self.release(chunk);
                    return;
                }
                swarm.on_verified(chunk, data.len(), self.peer);
                self.stats.chunks_received += 1;
                self.stats.payload_bytes_received += data.len() as u64;
                // In MSS per chunk, as the requests were counted.
                let unit = self.mss;
                let flight = self.down.outstanding.count() * unit;
                let asked = self.down.outstanding.received(chunk);
                swarm.note_cancellable(chunk, asked.is_none());
                let rtt = asked.map(|at| ctx.now.saturating_since(at));
                if let Some((at, rtt)) = asked.zip(rtt) {
                    self.down.req_rtt.on_sample(rtt);
                    // The peer answers again: ask it for more.
                    self.down.picks_paused_until = Instant::ZERO;
                    self.down.last_answered_sent = self.down.last_answered_sent.max(at);
                    let more_asked = self.down.outstanding.count() > 0;
                    self.down.link.on_data(ctx.now, data.len(), more_asked);
                }
                // The request window steers by the request's round trip,
                // not by the DATA's one-way delay: requests wait in the
                // peer's upload queue before their DATA is stamped, and
                // only the round trip sees that wait. So the window keeps
                // about LEDBAT's target of queueing at the peer, and a
                // request (an urgent one re-asked here, say) is not queued
                // behind seconds of others — the requester "notices an
                // increasing delay in the responses and decreases the rate
                // of its requests" (seed paper 000 §III-B). A chunk nobody
                // asked for gives no sample.
                let sample = AckSample {
                    bytes: unit,
                    one_way_delay: rtt.map(|r| r.as_micros().min(i64::MAX as u128) as i64),
                    rtt,
                    flight,
                };
                self.down.req_cc.on_ack(ctx.now, &sample);
                self.queue_ack(chunk, delay);
                if let Some(r) = ChunkRange::single(chunk) {
                    self.on_remote_has(swarm, r);
                }
            }
            Err(
                VerifyError::MissingHash(_)
                | VerifyError::UnknownSize
                | VerifyError::Ambiguous(_)
                | VerifyError::TooLarge { .. },
            ) => {
                // Not the peer's fault for sure (an INTEGRITY may have been
                // lost, the size is not settled yet): ask again.
                self.release(chunk);
            }
            Err(e) if !self.at_fault(swarm, &e) => self.release(chunk),
            Err(_) => self.reject(swarm),
        }
    }

    /// Forget a chunk we asked this peer for so it is asked again.
    pub(in crate::proto::channel) fn release(&mut self, chunk: ChunkIndex) {
        if self.down.outstanding.received(chunk).is_some() {
            self.out.released.extend(ChunkRange::single(chunk));
        }
    }

    /// The peer sent data or hashes that failed verification: drop it, count
    /// it, and have its chunks fetched elsewhere.
    pub(in crate::proto::channel) fn reject(&mut self, swarm: &mut Swarm) {
        self.stats.chunks_rejected += 1;
        swarm.stats.chunks_rejected += 1;
        swarm.stats.bad_peers += 1;
        swarm.peer_stats(self.peer).chunks_rejected += 1;
        let dropped = self.down.outstanding.clear();
        self.out.released.extend(dropped.filled_runs());
        self.close(CloseReason::BadData, true);
    }
}
