//! What a channel does with the messages it receives.

use std::net::SocketAddr;

use super::{Channel, Outcome, State};
use crate::bin::Bin;
use crate::binmap::Binmap;
use crate::cc::AckSample;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::hash::Hash;
use crate::merkle::{chunk_count_from_peaks, VerifyError, DEFAULT_MAX_CHUNKS};
use crate::proto::event::{CloseReason, Event};
use crate::proto::integrity::Integrity;
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::time::Instant;
use crate::wire::{
    ChannelId, ChunkSpec, DelaySample, HandshakeOptions, Message, Messages, Timestamp,
};

/// INTEGRITY messages kept per datagram; a DATA needs at most the peaks
/// and one uncle per tree layer.
const MAX_HASHES_PER_DATAGRAM: usize = 192;
/// Chunks one DATA message may carry that we look at.
const MAX_CHUNKS_PER_DATA: u64 = 64;
/// PEX addresses taken from one datagram.
const MAX_PEX_PER_DATAGRAM: usize = 64;
/// HAVEs of one datagram that may take DATA out of our flight.
const MAX_HAVES_PER_DATAGRAM: usize = 64;

impl Channel {
    /// Handles the messages of one datagram from the peer. `to_our_channel`
    /// is true when the datagram named our channel id, which proves the
    /// peer's address and completes a handshake we answered. Returns what
    /// the endpoint has to do about it.
    pub fn on_messages(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        messages: Messages<'_>,
        len: usize,
        to_our_channel: bool,
    ) -> Outcome {
        self.handle_messages(swarm, ctx, messages, len, to_our_channel);
        std::mem::take(&mut self.out)
    }

    fn handle_messages(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        messages: Messages<'_>,
        len: usize,
        to_our_channel: bool,
    ) {
        self.last_recv = ctx.now;
        self.sent_since_recv = 0;
        self.bytes_in += len as u64;
        if to_our_channel && self.state == State::Responding {
            self.establish(swarm, ctx);
        }
        let mut hashes: Vec<(Bin, Hash)> = Vec::new();
        let mut haves: Vec<ChunkRange> = Vec::new();
        let mut pex = 0;
        for m in messages {
            let Ok(m) = m else {
                self.out.malformed += 1;
                break;
            };
            match m {
                Message::Handshake { source, options } => {
                    self.on_handshake(swarm, ctx, source, &options)
                }
                Message::Have(spec) => match self.range_of(swarm, spec) {
                    Some(range) => {
                        self.on_remote_has(swarm, range);
                        // Never send a peer what it has: what it announces
                        // leaves our upload queue, and our flight once this
                        // datagram's ACKs are counted (libswift puts a HAVE
                        // before the ACK of the same chunk).
                        self.uploads.cancel(range);
                        if self.inflight.bytes() > 0 && haves.len() < MAX_HAVES_PER_DATAGRAM {
                            haves.push(range);
                        }
                    }
                    None => self.refuse_have(swarm),
                },
                Message::Ack { spec, delay } => self.on_ack(swarm, ctx, spec, delay),
                Message::Integrity { spec, hash } => {
                    if let Some(bin) = self.bin_of(swarm, spec) {
                        if hashes.len() < MAX_HASHES_PER_DATAGRAM {
                            hashes.push((bin, hash));
                        }
                    }
                }
                Message::Data {
                    spec,
                    timestamp,
                    payload,
                } => {
                    self.on_data(swarm, ctx, spec, timestamp, payload, &hashes);
                    hashes.clear();
                }
                Message::Request(spec) => self.on_request(swarm, ctx, spec),
                Message::Cancel(spec) => {
                    if let Some(range) = self.range_of(swarm, spec) {
                        self.uploads.cancel(range);
                    }
                }
                Message::Choke => {
                    self.choked_by_remote = true;
                    let dropped = self.outstanding.clear();
                    self.out.released.extend(dropped.filled_runs());
                }
                Message::Unchoke => self.choked_by_remote = false,
                Message::PexReq => self.pex_reply_due = true,
                Message::PexResV4(a) if pex < MAX_PEX_PER_DATAGRAM => {
                    pex += 1;
                    self.out.found.push(SocketAddr::V4(a));
                }
                Message::PexResV6(a) if pex < MAX_PEX_PER_DATAGRAM => {
                    pex += 1;
                    self.out.found.push(SocketAddr::V6(a));
                }
                // Live streaming and certificate PEX are not spoken here.
                _ => {}
            }
            if self.close.is_some() {
                break;
            }
        }
        for range in haves {
            self.inflight.on_have(range);
        }
        // Hashes sent ahead of their DATA (RFC 7574 §5.3: INTEGRITY may
        // travel in earlier datagrams) wait as candidates in the tree.
        if !hashes.is_empty() && self.close.is_none() {
            self.accept_hashes(swarm, &hashes);
        }
    }

    /// The handshake is complete on both sides.
    fn establish(&mut self, swarm: &mut Swarm, ctx: &mut Ctx<'_>) {
        self.state = State::Established;
        swarm.peers.insert(self.peer);
        ctx.events.push_back(Event::Connected {
            swarm: self.swarm,
            peer: self.peer,
        });
    }

    fn on_handshake(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        source: ChannelId,
        options: &HandshakeOptions<'_>,
    ) {
        if source == ChannelId::ZERO {
            // A refusal of our handshake, or a close (RFC 7574 §8.4).
            let reason = if self.state == State::Initiating {
                CloseReason::Refused
            } else {
                CloseReason::ClosedByPeer
            };
            self.close(reason, false);
            return;
        }
        if self.state != State::Initiating {
            return; // A duplicate answer.
        }
        match super::check_options(options, swarm.hash_function, swarm.chunk_size) {
            Ok(offer) => {
                self.remote = source;
                self.params.apply(options);
                self.params.addressing = offer.addressing;
                self.third_due = true;
                self.establish(swarm, ctx);
            }
            Err(why) => {
                self.remote = source;
                self.close(CloseReason::Protocol(why.into()), true);
            }
        }
    }

    /// The chunks a specification names, cut to the content (or to the most
    /// chunks a size claim may have while the size is unknown, or only
    /// claimed by peaks that no chunk has backed: the claim may be a lie
    /// far below the true size, and what honest peers announce must not be
    /// cut to it).
    fn range_of(&self, swarm: &Swarm, spec: ChunkSpec) -> Option<ChunkRange> {
        let range = spec.to_chunks(swarm.chunk_size)?;
        let backed = match &swarm.integrity {
            Integrity::Partial(t) => t.height_proven(),
            Integrity::Complete(_) => true,
        };
        match swarm.chunk_count() {
            Some(_) if backed => swarm.clamp(range),
            _ => range.intersect(ChunkRange::with_len(0u64, DEFAULT_MAX_CHUNKS)?),
        }
    }

    /// The tree node an INTEGRITY message names: its chunks must form one bin.
    fn bin_of(&self, swarm: &Swarm, spec: ChunkSpec) -> Option<Bin> {
        if let ChunkSpec::Bin(b) = spec {
            return (!b.is_none()).then_some(b);
        }
        let range = spec.to_chunks(swarm.chunk_size)?;
        let mut bins = range.bins();
        let bin = bins.next()?;
        bins.next().is_none().then_some(bin)
    }

    /// The peer has the chunks of `range` (HAVE, or implied by ACK).
    pub(crate) fn on_remote_has(&mut self, swarm: &mut Swarm, range: ChunkRange) {
        if self.remote_complete {
            return;
        }
        if !self.may_record_has(swarm, range) {
            self.refuse_have(swarm);
            return;
        }
        // Most HAVEs name one chunk: one descent tells new from known and
        // records it.
        let single = range.len() == 1;
        if single {
            if !self.remote_has.insert_chunk(range.first()) {
                return;
            }
            swarm.availability.add(range);
        } else if self.remote_has.is_filled(range) {
            return;
        } else if !self.remote_has.is_empty_range(range) {
            let mut fresh = Binmap::new();
            fresh.set(range);
            let runs: Vec<ChunkRange> = fresh.difference_runs(&self.remote_has).collect();
            runs.into_iter().for_each(|r| swarm.availability.add(r));
            self.remote_has.set(range);
        } else {
            swarm.availability.add(range);
            self.remote_has.set(range);
        }
        // Only a chunk we lack can make a pick find something. A chunk not
        // taken (neither had nor requested) is lacking; a taken one is
        // lacking when requested, which the small `requested` set tells.
        let lacking = if single {
            let c = range.first();
            let counted = c.0 < swarm.availability.chunk_count();
            if counted && swarm.availability.is_taken(c) {
                swarm.requested.contains(c)
            } else {
                !swarm.have.contains(c)
            }
        } else {
            !swarm.have.is_filled(range)
        };
        if lacking {
            self.pick_idle_until = Instant::ZERO;
            self.dry.wet(range);
        }
        self.check_remote_complete(swarm);
    }

    /// A peer with every chunk counts once in the availability, not per chunk.
    pub(crate) fn check_remote_complete(&mut self, swarm: &mut Swarm) {
        let Some(all) = swarm
            .chunk_count()
            .and_then(|n| ChunkRange::with_len(0u64, n))
        else {
            return;
        };
        // The count is kept by the binmap: the full check runs only when
        // it can succeed.
        if !self.remote_complete
            && self.remote_has.count() >= all.len()
            && self.remote_has.is_filled(all)
        {
            for r in self.remote_has.filled_runs() {
                swarm.availability.remove(r);
            }
            swarm.availability.add_complete_peer();
            self.remote_complete = true;
        }
    }

    /// Takes the peer out of the availability counts (on close).
    pub(crate) fn forget_availability(&self, swarm: &mut Swarm) {
        if self.remote_complete {
            swarm.availability.remove_complete_peer();
        } else {
            for r in self.remote_has.filled_runs() {
                swarm.availability.remove(r);
            }
        }
    }

    fn on_ack(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        spec: ChunkSpec,
        delay: DelaySample,
    ) {
        let Some(range) = self.range_of(swarm, spec) else {
            return;
        };
        self.on_remote_has(swarm, range);
        let flight = self.inflight.bytes();
        let out = self.inflight.on_ack(range, ctx.now);
        if let Some(rtt) = out.rtt {
            self.rtt.on_sample(rtt);
        }
        if out.acked_bytes > 0 {
            let sample = AckSample {
                bytes: out.acked_bytes,
                one_way_delay: Some(delay.0),
                rtt: out.rtt,
                flight,
            };
            self.cc.on_ack(ctx.now, &sample);
        }
        if out.lost_bytes > 0 {
            self.cc.on_loss(ctx.now, out.lost_bytes);
        }
    }

    fn on_request(&mut self, swarm: &mut Swarm, ctx: &mut Ctx<'_>, spec: ChunkSpec) {
        // Interest begins, or comes back after the slot was let go idle
        // (see `choke`): look at the slots again.
        if self
            .requested_at
            .is_none_or(|at| ctx.now.saturating_since(at) >= crate::proto::choke::IDLE)
        {
            self.out.rechoke = true;
        }
        self.requested_at = Some(ctx.now);
        // A choked peer's requests are void (RFC 7574 §3.9), and so are
        // those that reach us before it hears the CHOKE that voids them.
        if self.choking_remote || self.requests_voided {
            return;
        }
        let Some(range) = self.range_of(swarm, spec) else {
            return;
        };
        // Serve only what we have; the rest of the request is ignored.
        let runs: Vec<ChunkRange> = swarm.have.filled_runs_in(range).collect();
        for r in runs {
            if self
                .uploads
                .push(r, ctx.config.max_upload_queue_ranges)
                .is_err()
            {
                // Never drop part of a request silently: void them all with
                // CHOKE and UNCHOKE at once, so that the peer asks again.
                self.uploads.clear();
                self.requests_voided = true;
                return;
            }
        }
    }

    fn on_data(
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
    fn accept_hashes(&mut self, swarm: &mut Swarm, hashes: &[(Bin, Hash)]) -> bool {
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
                    self.claimed = Some(n);
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
                    self.claimed = Some(n);
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

    fn on_chunk(
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
            self.outstanding.received(chunk);
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
                let flight = self.outstanding.count() * unit;
                let asked = self.outstanding.received(chunk);
                swarm.note_cancellable(chunk, asked.is_none());
                let rtt = asked.map(|at| ctx.now.saturating_since(at));
                if let Some((at, rtt)) = asked.zip(rtt) {
                    self.req_rtt.on_sample(rtt);
                    // The peer answers again: ask it for more.
                    self.picks_paused_until = Instant::ZERO;
                    self.last_answered_sent = self.last_answered_sent.max(at);
                    let more_asked = self.outstanding.count() > 0;
                    self.link.on_data(ctx.now, data.len(), more_asked);
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
    fn release(&mut self, chunk: ChunkIndex) {
        if self.outstanding.received(chunk).is_some() {
            self.out.released.extend(ChunkRange::single(chunk));
        }
    }

    /// The peer sent data or hashes that failed verification: drop it, count
    /// it, and have its chunks fetched elsewhere.
    fn reject(&mut self, swarm: &mut Swarm) {
        self.stats.chunks_rejected += 1;
        swarm.stats.chunks_rejected += 1;
        swarm.stats.bad_peers += 1;
        swarm.peer_stats(self.peer).chunks_rejected += 1;
        let dropped = self.outstanding.clear();
        self.out.released.extend(dropped.filled_runs());
        self.close(CloseReason::BadData, true);
    }

    fn queue_ack(&mut self, chunk: ChunkIndex, delay: i64) {
        if let Some(last) = self.acks.last_mut() {
            if last.0.last().0.checked_add(1) == Some(chunk.0) {
                if let Some(r) = ChunkRange::new(last.0.first(), chunk) {
                    *last = (r, delay);
                    return;
                }
            }
        }
        if let Some(r) = ChunkRange::single(chunk) {
            self.acks.push((r, delay));
        }
    }
}
