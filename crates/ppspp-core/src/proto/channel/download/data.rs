//! DATA and INTEGRITY from the peer: hashes fed to the tree, chunks
//! verified and stored, requests answered, ACKs queued (RFC 7574 §3.4–3.5,
//! §5); a peer whose data fails verification is dropped.

use super::super::Scope;
use super::Download;
use crate::bin::Bin;
use crate::cc::AckSample;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::hash::Hash;
use crate::live::MunroVerdict;
use crate::merkle::{chunk_count_from_peaks, VerifyError};
use crate::proto::event::{CloseReason, Event};
use crate::proto::integrity::{Integrity, LiveIntegrity};
use crate::proto::swarm::Swarm;
use crate::proto::{Ctx, StorageFailure, StorageOp};
use crate::time::Instant;
use crate::wire::{ChunkSpec, NtpTimestamp, Timestamp};

/// A DATA message as received: its chunks, the sender's timestamp, and the
/// payload.
pub(crate) type DataMessage<'p> = (ChunkSpec, Timestamp, &'p [u8]);

/// Chunks one DATA message may carry that we look at.
const MAX_CHUNKS_PER_DATA: u64 = 64;

impl Download {
    /// A DATA message and the INTEGRITY messages before it in the datagram.
    /// Fails with the reason to close the channel when the peer sent data or
    /// hashes that do not verify.
    pub fn handle_data(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        sc: &mut Scope<'_>,
        (spec, timestamp, payload): DataMessage<'_>,
        hashes: &[(Bin, Hash)],
    ) -> Result<(), CloseReason> {
        // The sender's wall clock against ours: the one-way delay plus the
        // offset between the two clocks, which LEDBAT's base delay cancels
        // (RFC 6817 §3.4).
        let delay = (ctx.wire_now() as i64).wrapping_sub(timestamp.0 as i64);
        let Some(range) = spec.to_chunks(swarm.chunk_size) else {
            return Ok(());
        };
        self.handle_hashes(swarm, sc, hashes)?;
        let cs = swarm.chunk_size.bytes_usize();
        let count = range.len().min(MAX_CHUNKS_PER_DATA);
        for i in 0..count {
            let start = i as usize * cs;
            if start >= payload.len() {
                break;
            }
            let data = &payload[start..(start + cs).min(payload.len())];
            self.handle_chunk(swarm, ctx, sc, ChunkIndex(range.first().0 + i), data, delay)?;
        }
        Ok(())
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
    pub fn handle_hashes(
        &mut self,
        swarm: &mut Swarm,
        sc: &mut Scope<'_>,
        hashes: &[(Bin, Hash)],
    ) -> Result<(), CloseReason> {
        let Integrity::Partial(tree) = &mut swarm.integrity else {
            return Ok(());
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
                    self.claimed = Some(n);
                    if before != Some(n) {
                        swarm.size_counts();
                        sc.out.size_learned = true;
                    }
                    break;
                }
                // The count we hold, with hashes that do not make the root;
                // once a chunk backs the count, an honest peer's uncles can
                // no longer decompose it.
                Err(VerifyError::BadPeaks) if before == Some(n) && tree.height_proven() => {
                    return Err(self.reject(swarm, sc));
                }
                // Peaks that make the root but a count that what verified
                // shows false.
                Err(VerifyError::SizeMismatch { .. }) => {
                    self.claimed = Some(n);
                    return Err(self.reject(swarm, sc));
                }
                Err(_) => {}
            }
        }
        let Integrity::Partial(tree) = &mut swarm.integrity else {
            return Ok(());
        };
        for &(bin, hash) in uncles {
            if let Err(VerifyError::BadHash(_)) = tree.accept_uncle(bin, hash) {
                return Err(self.reject(swarm, sc));
            }
        }
        Ok(())
    }

    /// Whether a chunk that failed with `error` is the sender's fault for
    /// sure. While the size is only claimed by peaks, a chunk may fail
    /// because the claim is false (the honest last chunk is "too short"
    /// under a forged larger count, say): only a peer that vouched for the
    /// count held, with its own peaks, answers for it.
    fn at_fault(&self, swarm: &Swarm, error: &VerifyError) -> bool {
        let Integrity::Partial(tree) = &swarm.integrity else {
            return true;
        };
        let vouched = self.claimed.is_some() && self.claimed == tree.chunk_count();
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

    /// One chunk of a DATA: verified, stored, counted and acknowledged,
    /// or asked again, or the peer is at fault.
    fn handle_chunk(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        sc: &mut Scope<'_>,
        chunk: ChunkIndex,
        data: &[u8],
        delay: i64,
    ) -> Result<(), CloseReason> {
        if swarm.have.contains(chunk) {
            // A duplicate (end game, or a retransmission): acknowledge it so
            // the sender's controller sees the delivery.
            swarm.stats.chunks_duplicate += 1;
            self.outstanding.received(chunk);
            self.queue_ack(chunk, delay, ctx.now);
            return Ok(());
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
            sc.out.size_learned = true;
        }
        match verified {
            Ok(()) => {
                if !height_known {
                    // The claim is backed now: the endpoint drops the peers
                    // whose claims it shows false.
                    sc.out.size_learned = true;
                }
                if let Err(e) = swarm.storage.write_chunk(chunk, data) {
                    ctx.events.push_back(Event::StorageError {
                        swarm: sc.peer.swarm,
                        error: StorageFailure::new(StorageOp::WriteChunk(chunk), &e),
                    });
                    self.release(chunk, sc);
                    return Ok(());
                }
                swarm.on_verified(chunk, data.len(), sc.peer.addr);
                // One line per chunk at trace level: with "chunk sent",
                // "chunks requested" and "have received", enough to follow a
                // chunk hop by hop through a simulated swarm, where the lab
                // names the peer (`bench/live_hops.py`).
                tracing::trace!(chunk = chunk.0, from = %sc.peer.addr, "chunk verified");
                if swarm.live_signs_all() {
                    // Under Sign All a chunk is its own munro, trusted now.
                    let one = ChunkRange::single(chunk).expect("a chunk");
                    swarm.on_live_munro_trusted(one, swarm.live_edge_before(chunk));
                }
                sc.peer.stats.chunks_received += 1;
                sc.peer.stats.payload_bytes_received += data.len() as u64;
                // In MSS per chunk, as the requests were counted.
                let unit = sc.peer.mss;
                let flight = self.outstanding.count() * unit;
                let asked = self.outstanding.received(chunk);
                swarm.note_cancellable(chunk, asked.is_none());
                let timed = asked.filter(|a| a.timed).map(|a| a.sent);
                let rtt = timed.map(|at| ctx.now.saturating_since(at));
                if let Some((at, rtt)) = timed.zip(rtt) {
                    self.req_rtt.on_sample(rtt);
                    self.last_answered_sent = self.last_answered_sent.max(at);
                }
                if asked.is_some() {
                    // The peer answers again: ask it for more.
                    self.picks_paused_until = Instant::ZERO;
                    let more_asked = self.outstanding.count() > 0;
                    self.link.on_data(ctx.now, data.len(), more_asked);
                    self.detect_passed_over(ctx, sc);
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
                self.req_cc.on_ack(ctx.now, &sample);
                self.queue_ack(chunk, delay, ctx.now);
                if let Some(r) = ChunkRange::single(chunk) {
                    self.handle_have(swarm, sc, r)?;
                }
                Ok(())
            }
            Err(
                VerifyError::MissingHash(_)
                | VerifyError::UnknownSize
                | VerifyError::Ambiguous(_)
                | VerifyError::TooLarge { .. },
            ) => {
                // Not the peer's fault for sure (an INTEGRITY may have been
                // lost, the size is not settled yet): ask again.
                if swarm.live.is_some() {
                    swarm.stats.live_chunks_refused += 1;
                }
                self.release(chunk, sc);
                Ok(())
            }
            Err(e) if !self.at_fault(swarm, &e) => {
                self.release(chunk, sc);
                Ok(())
            }
            Err(_) => Err(self.reject(swarm, sc)),
        }
    }

    /// A SIGNED_INTEGRITY of a live swarm (RFC 7574 §6.1.2): the munro
    /// `bin` is trusted if its hash came just before and the signature
    /// verifies against the swarm id. A forged signature drops the peer
    /// as bad data does; a munro without its hash, or outside our window,
    /// is counted and ignored (a race, or an old munro fed again).
    pub fn handle_signed(
        &mut self,
        swarm: &mut Swarm,
        sc: &mut Scope<'_>,
        bin: Option<Bin>,
        timestamp: NtpTimestamp,
        signature: &[u8],
    ) -> Result<(), CloseReason> {
        let Some(LiveIntegrity::Receiver(v)) = swarm.integrity.live_mut() else {
            return Ok(());
        };
        let Some(bin) = bin else {
            swarm.stats.live_munros_refused += 1;
            return Ok(());
        };
        // The live edge as we knew it before this munro: one far past it
        // means we lagged (`live_window.rs`).
        let edge_before = v.newest().and_then(|m| m.bin.chunks()).map(|r| r.last());
        match v.offer_signed(bin, timestamp, signature) {
            Ok(MunroVerdict::New) => {
                if let Some(munro) = bin.chunks() {
                    swarm.on_live_munro_trusted(munro, edge_before);
                }
                Ok(())
            }
            Ok(MunroVerdict::Known | MunroVerdict::Pending) => Ok(()),
            Err(e) if e.is_forgery() => {
                swarm.stats.live_munros_refused += 1;
                Err(self.reject(swarm, sc))
            }
            Err(_) => {
                swarm.stats.live_munros_refused += 1;
                Ok(())
            }
        }
    }

    /// Requests the peer passed over while answering later ones were lost
    /// (`Outstanding::passed_over`): they go back to the swarm to be asked
    /// again at once, and the request window halves as for any loss. They
    /// are CANCELled too, in case only the order was off.
    fn detect_passed_over(&mut self, ctx: &mut Ctx<'_>, sc: &mut Scope<'_>) {
        let threshold = ctx.config.loss_threshold;
        if threshold == 0 {
            return;
        }
        let before = sc.out.released.len();
        if self
            .outstanding
            .passed_over(threshold, &mut sc.out.released)
            .is_none()
        {
            return;
        }
        let lost = &sc.out.released[before..];
        let n: u64 = lost.iter().map(|r| r.len()).sum();
        self.req_cc.on_loss(ctx.now, n * sc.peer.mss);
        self.link.on_passed_over(n);
        self.expired.extend_from_slice(lost);
    }

    /// Forget a chunk we asked this peer for so it is asked again.
    fn release(&mut self, chunk: ChunkIndex, sc: &mut Scope<'_>) {
        if self.outstanding.received(chunk).is_some() {
            sc.out.released.extend(ChunkRange::single(chunk));
        }
    }

    /// The peer sent data or hashes that failed verification: drop it, count
    /// it, and have its chunks fetched elsewhere. Returns why the channel
    /// closes.
    fn reject(&mut self, swarm: &mut Swarm, sc: &mut Scope<'_>) -> CloseReason {
        sc.peer.stats.chunks_rejected += 1;
        swarm.stats.chunks_rejected += 1;
        swarm.stats.bad_peers += 1;
        swarm.peer_stats(sc.peer.addr).chunks_rejected += 1;
        let dropped = self.outstanding.clear();
        sc.out.released.extend(dropped.filled_runs());
        CloseReason::BadData
    }
}
