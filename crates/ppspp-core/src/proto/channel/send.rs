//! What a channel puts in the next datagram to its peer.

use super::{Channel, Outcome, State};
use crate::bin::Bin;
use std::collections::BTreeSet;

use crate::chunk::{ChunkIndex, ChunkRange};
use crate::hash::Hash;
use crate::pick::{PeerLink, PickView};
use crate::proto::event::Event;
use crate::proto::pex::may_share;
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::time::Instant;
use crate::wire::{
    ChannelId, ChunkAddressing, ChunkSpec, DatagramWriter, DelaySample, HandshakeOptions, Message,
    SwarmParams, Timestamp, PPSPP_VERSION,
};

/// Chunks requested per REQUEST round at most, whatever the window says.
const MAX_PICK: u64 = 256;
/// Most chunks whose hashes go out ahead in one datagram.
const MAX_AHEAD: u64 = 32;
/// Most chunks of the have-log sorted into runs at once (a control datagram
/// holds fewer HAVEs than this).
const HAVE_BLOCK: usize = 192;
/// How long a channel waits after a pick that found nothing, when nothing
/// says a new pick could find more (see `Channel::pick_idle_until`); a
/// safety net, not a poll.
const PICK_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

impl Channel {
    /// Writes the next datagram for this peer into `buf`; returns its length,
    /// or `None` when there is nothing to send now, and what the endpoint
    /// has to do about it (which rate limit held a message back).
    pub fn poll_transmit(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        buf: &mut [u8],
    ) -> (Option<usize>, Outcome) {
        let len = self.transmit(swarm, ctx, buf);
        (len, std::mem::take(&mut self.out))
    }

    fn transmit(&mut self, swarm: &mut Swarm, ctx: &mut Ctx<'_>, buf: &mut [u8]) -> Option<usize> {
        let w = if self.close.is_some() {
            self.write_close(buf)
        } else {
            match self.state {
                State::Initiating => self.write_handshake(swarm, ctx, buf),
                State::Responding => self.write_answer(swarm, ctx, buf),
                State::Established => self.write_established(swarm, ctx, buf),
            }
        }?;
        ctx.sent.merge(w.tally());
        let len = w.finish();
        self.last_send = ctx.now;
        self.sent_since_recv = self.sent_since_recv.saturating_add(1);
        self.bytes_out += len as u64;
        Some(len)
    }

    fn write_close<'b>(&mut self, buf: &'b mut [u8]) -> Option<DatagramWriter<'b>> {
        if !self.close_notify {
            return None;
        }
        self.close_notify = false;
        // RFC 7574 §8.4: source channel 0, options empty or just the version.
        let options = HandshakeOptions {
            version: Some(PPSPP_VERSION),
            ..HandshakeOptions::default()
        };
        let mut w = DatagramWriter::new(buf, self.remote, self.params).ok()?;
        w.push(&Message::Handshake {
            source: ChannelId::ZERO,
            options,
        })
        .ok()?;
        Some(w)
    }

    /// Our first HANDSHAKE, and its retransmissions (with the libswift
    /// fallback: after two unanswered tries, drop options 8 and 9).
    fn write_handshake<'b>(
        &mut self,
        swarm: &Swarm,
        ctx: &mut Ctx<'_>,
        buf: &'b mut [u8],
    ) -> Option<DatagramWriter<'b>> {
        if ctx.now < self.hs_next || self.hs_attempts >= ctx.config.handshake_attempts {
            return None;
        }
        if self.hs_attempts >= 2 && matches!(ctx.config.compat, crate::proto::Compat::Auto) {
            self.extended_options = false;
        }
        let options = super::our_options(
            swarm.root.as_bytes(),
            swarm.hash_function,
            swarm.chunk_size,
            self.params.addressing,
            self.extended_options,
            true,
        );
        let mut w = DatagramWriter::new(buf, ChannelId::ZERO, SwarmParams::default()).ok()?;
        w.push(&Message::Handshake {
            source: self.local,
            options,
        })
        .ok()?;
        self.hs_attempts += 1;
        self.hs_next =
            ctx.now + ctx.config.handshake_retry * 2u32.pow(self.hs_attempts.min(10) - 1);
        Some(w)
    }

    /// Our answer to a HANDSHAKE, then HAVEs, all within the bytes the
    /// initiator sent us: its address is not proven yet, so we must not
    /// amplify (RFC 7574 §13.2.1).
    fn write_answer<'b>(
        &mut self,
        swarm: &Swarm,
        _ctx: &mut Ctx<'_>,
        buf: &'b mut [u8],
    ) -> Option<DatagramWriter<'b>> {
        if !self.reply_due {
            return None;
        }
        let budget =
            usize::try_from(self.bytes_in.saturating_sub(self.bytes_out)).unwrap_or(usize::MAX);
        let limit = budget.min(buf.len());
        let options = super::our_options(
            swarm.root.as_bytes(),
            swarm.hash_function,
            swarm.chunk_size,
            self.params.addressing,
            self.extended_options,
            false,
        );
        // The answer is due once, whether or not it fits: a HANDSHAKE
        // larger than the initiator's datagram waits for its
        // retransmission, which adds to the budget and makes it due again.
        // Left due, the channel would ask to be polled again at once,
        // forever (issue 22).
        self.reply_due = false;
        let mut w = DatagramWriter::new(&mut buf[..limit], self.remote, self.params).ok()?;
        w.push(&Message::Handshake {
            source: self.local,
            options,
        })
        .ok()?;
        self.push_haves(swarm, &mut w);
        Some(w)
    }

    fn write_established<'b>(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        buf: &'b mut [u8],
    ) -> Option<DatagramWriter<'b>> {
        let mut w = DatagramWriter::new(buf, self.remote, self.params).ok()?;
        // Control messages stay within the configured datagram size; a DATA
        // may make the datagram as large as one chunk needs.
        w.set_limit(ctx.config.max_datagram);
        if self.requests_voided
            && w.push(&Message::Choke).is_ok()
            && w.push(&Message::Unchoke).is_ok()
        {
            self.requests_voided = false;
        }
        if self.choke_dirty {
            let m = if self.choking_remote {
                Message::Choke
            } else {
                Message::Unchoke
            };
            if w.push(&m).is_ok() {
                self.choke_dirty = false;
            }
        }
        let keepalive_due =
            ctx.now.saturating_since(self.last_send) >= ctx.config.keepalive_interval;
        // HAVEs ride on a datagram that goes out anyway, or get their own
        // once they have waited `have_interval`.
        let riding = !self.acks.is_empty() || !w.is_empty() || self.third_due || keepalive_due;
        let haves_due =
            riding || ctx.now.saturating_since(self.last_have) >= ctx.config.have_interval;
        self.push_acks(swarm, &mut w);
        self.push_cancels(swarm, &mut w);
        if haves_due && self.haves_pending(swarm.have_log.len()) {
            self.push_haves(swarm, &mut w);
            self.last_have = ctx.now;
        }
        self.push_pex(swarm, ctx, &mut w);
        self.push_requests(swarm, ctx, &mut w);
        self.push_data(swarm, ctx, &mut w);
        if !w.is_empty() || self.third_due || keepalive_due {
            self.third_due = false;
            Some(w)
        } else {
            None
        }
    }

    fn push_acks(&mut self, swarm: &Swarm, w: &mut DatagramWriter<'_>) {
        let mut sent = 0;
        let ranges = self.params.addressing.is_chunk_ranges();
        'acks: for &(range, delay) in &self.acks {
            let (run, covered) = reack(self.ack_run, range);
            // Bins would cost a message per bin of the repeated run: only
            // chunk ranges repeat it, at the cost of one.
            let acked = if ranges { covered } else { range };
            for spec in self.specs_for(swarm, acked) {
                if w.push(&Message::Ack {
                    spec,
                    delay: DelaySample(delay),
                })
                .is_err()
                {
                    break 'acks;
                }
            }
            self.ack_run = Some(run);
            sent += 1;
        }
        self.acks.drain(..sent);
    }

    /// Chunks we asked this peer for that arrived from others: CANCEL them.
    /// Only chunks in the swarm's cancel-log can be such (see
    /// `Swarm::cancel_log`), so a channel looks at a few, not at every
    /// chunk that verifies.
    fn push_cancels(&mut self, swarm: &Swarm, w: &mut DatagramWriter<'_>) {
        // Requests that timed out here went to other peers.
        while let Some(&range) = self.expired.last() {
            let specs: Vec<ChunkSpec> = self.specs_for(swarm, range).collect();
            if w.remaining() < specs.len() * (1 + self.params.addressing.spec_len()) {
                return;
            }
            for spec in specs {
                let _ = w.push(&Message::Cancel(spec));
            }
            self.expired.pop();
        }
        if self.outstanding.count() == 0 {
            self.cancel_cursor = swarm.cancel_log.len();
            return;
        }
        while let Some(&chunk) = swarm.cancel_log.get(self.cancel_cursor) {
            if self.outstanding.chunks().contains(chunk) {
                let Some(range) = ChunkRange::single(chunk) else {
                    break;
                };
                let specs: Vec<ChunkSpec> = self.specs_for(swarm, range).collect();
                if w.remaining() < specs.len() * (1 + self.params.addressing.spec_len()) {
                    return;
                }
                for spec in specs {
                    let _ = w.push(&Message::Cancel(spec));
                }
                self.outstanding.remove(range);
            }
            self.cancel_cursor += 1;
        }
    }

    /// HAVE for what we have: first a sweep over what we had when the
    /// channel opened, then each chunk as it verifies. Never to a peer that
    /// has everything (RFC 7574 §3.2: it does not need them).
    fn push_haves(&mut self, swarm: &Swarm, w: &mut DatagramWriter<'_>) {
        if self.remote_complete {
            self.have_sweep = None;
            self.have_cursor = swarm.have_log.len();
            return;
        }
        if let Some(from) = self.have_sweep {
            let rest = ChunkRange::new(from, crate::chunk::MAX_CHUNK_INDEX);
            let runs: Vec<ChunkRange> = rest
                .map(|r| swarm.have.filled_runs_in(r).take(64).collect())
                .unwrap_or_default();
            for r in &runs {
                if !self.push_have_range(swarm, w, *r) {
                    return;
                }
                self.have_sweep = Some(r.last().0 + 1);
            }
            if runs.len() < 64 {
                self.have_sweep = None;
            }
            return;
        }
        // New chunks, a block of the log at a time, sorted into runs: chunks
        // arrive from several peers at once and rarest-first scatters them,
        // so a HAVE per logged chunk was most of the control bytes a viewer
        // uploads (E1, 176 viewers: 105 M HAVEs, a quarter of all bytes
        // sent). With chunk ranges, two new chunks with only chunks we had
        // between them go in one HAVE (announcing those again is harmless;
        // a bin spec would cost a message per bin of the gap). A run the
        // peer has entirely is left out: it will not ask us for it (as with
        // a complete peer, RFC 7574 §3.2). A block never holds more chunks
        // than the datagram has room for HAVEs of single chunks, so it
        // always fits: a run holding n new chunks takes at most n specs.
        let per_spec = 1 + self.params.addressing.spec_len();
        let ranges = self.params.addressing.is_chunk_ranges();
        let mut block = [ChunkIndex(0); HAVE_BLOCK];
        while self.have_cursor < swarm.have_log.len() {
            let n = (w.remaining() / per_spec)
                .min(HAVE_BLOCK)
                .min(swarm.have_log.len() - self.have_cursor);
            if n == 0 {
                return;
            }
            let block = &mut block[..n];
            block.copy_from_slice(&swarm.have_log[self.have_cursor..self.have_cursor + n]);
            block.sort_unstable();
            let reach = |c: ChunkIndex| match ranges {
                true => swarm.have.first_empty_from(c).map_or(u64::MAX, |e| e.0),
                false => c.0,
            };
            for range in runs(block, reach) {
                if self.remote_has.is_filled(range) {
                    continue;
                }
                if !self.push_have_range(swarm, w, range) {
                    return;
                }
            }
            self.have_cursor += n;
        }
    }

    /// Writes HAVE for `range` if all of it fits.
    fn push_have_range(
        &self,
        swarm: &Swarm,
        w: &mut DatagramWriter<'_>,
        range: ChunkRange,
    ) -> bool {
        // Counted first, then written: no allocation for the common case
        // of one spec.
        let n = self.specs_for(swarm, range).count();
        if w.remaining() < n * (1 + self.params.addressing.spec_len()) {
            return false;
        }
        self.specs_for(swarm, range)
            .all(|spec| w.push(&Message::Have(spec)).is_ok())
    }

    fn push_pex(&mut self, swarm: &Swarm, ctx: &mut Ctx<'_>, w: &mut DatagramWriter<'_>) {
        if !self.pex_requested && ctx.config.pex_auto_connect && w.push(&Message::PexReq).is_ok() {
            self.pex_requested = true;
        }
        if self.pex_reply_due {
            self.pex_reply_due = false;
            let shareable = swarm.peers.iter().filter(|a| may_share(**a, self.peer));
            for addr in shareable.take(ctx.config.pex_max_addresses) {
                let m = match addr {
                    std::net::SocketAddr::V4(a) => Message::PexResV4(*a),
                    std::net::SocketAddr::V6(a) => Message::PexResV6(*a),
                };
                if w.push(&m).is_err() {
                    break;
                }
            }
        }
    }

    fn push_requests(&mut self, swarm: &mut Swarm, ctx: &mut Ctx<'_>, w: &mut DatagramWriter<'_>) {
        if self.choked_by_remote
            || swarm.is_complete()
            || self.remote_has.is_empty()
            || ctx.now < self.picks_paused_until
        {
            return;
        }
        let cs = u64::from(swarm.chunk_size.bytes());
        let window = self.req_cc.window() / self.mss;
        let have_room = window
            .max(1)
            .min(ctx.config.max_requests_per_peer)
            .saturating_sub(self.outstanding.count())
            .min(MAX_PICK);
        // Ask for no more than the download limit pays for now: the
        // chunks come about a round trip later, at most at the limit.
        let affordable = match ctx.download.as_deref_mut() {
            Some(bucket) => have_room.min(bucket.available(ctx.now) / cs),
            None => have_room,
        };
        if affordable == 0 && have_room > 0 && ctx.download.is_some() {
            self.out.download_blocked = Some(cs);
        }
        // Pick in batches (a quarter window at a time), and not again soon
        // after a pick that found nothing.
        let batch = (window / 4).clamp(1, 16);
        let starving = self.outstanding.count() == 0;
        let idle = ctx.now < self.pick_idle_until && swarm.releases == self.releases_seen;
        if affordable == 0 || (affordable < batch && !starving) || idle {
            return;
        }
        let mut picked = Vec::new();
        if self.releases_seen != swarm.releases {
            // Given-back chunks may lie in blocks marked dry.
            self.dry.forget();
            self.releases_seen = swarm.releases;
        }
        // Not a tentative count whose height no chunk proved: it may be a
        // forged 2^28 (see `Swarm::counted_chunk_count`).
        let chunk_count = swarm.counted_chunk_count();
        let link = PeerLink {
            fast: self.fast,
            fast_count: swarm.fast_count,
            window,
            loss: self.link.loss_ratio(),
            answer_time: self.req_rtt.srtt().unwrap_or(self.request_timeout()),
            prebuffering: swarm.player_waiting,
        };
        let view = PickView {
            now: ctx.now,
            chunk_count,
            have: &swarm.have,
            requested: &swarm.requested,
            requested_from_peer: self.outstanding.chunks(),
            peer_has: &self.remote_has,
            late: &swarm.doubled,
            availability: &swarm.availability,
            peer_counted: !self.remote_complete,
            playhead: swarm.playhead,
            dry: chunk_count.map(|n| self.dry.view(n)),
            link,
        };
        swarm.picker.pick(&view, affordable, ctx.rng, &mut picked);
        // While the player prebuffers no chunk has a play time: playback
        // starts only when the whole prebuffer is in. Deadlines counted
        // from "plays now" were floored at one mean request round trip, so
        // a batch's later chunks went late and were asked again elsewhere,
        // adding load when the flash crowd makes it highest (E1, 96
        // viewers, seeds 1-4: mean startup 8.4 s with them, 7.0 s
        // without). A silent peer still loses its requests to the request
        // timeout.
        let deadlines: Vec<Option<Instant>> = picked
            .iter()
            .map(|&r| {
                if swarm.player_waiting {
                    None
                } else {
                    swarm.picker.deadline(&view, r)
                }
            })
            .collect();
        self.pick_idle_until = if picked.is_empty() {
            ctx.now + PICK_IDLE
        } else {
            Instant::ZERO
        };
        for (range, deadline) in picked.into_iter().zip(deadlines) {
            let Some(range) = swarm.clamp(range) else {
                continue;
            };
            let specs: Vec<ChunkSpec> = self.specs_for(swarm, range).collect();
            if specs.is_empty()
                || w.remaining() < specs.len() * (1 + self.params.addressing.spec_len())
            {
                break;
            }
            for spec in specs {
                // Room was checked above.
                let _ = w.push(&Message::Request(spec));
            }
            self.outstanding.add(range, ctx.now, deadline);
            if !swarm.requested.is_empty_range(range) {
                // End game: asked from two peers, so whichever answers
                // second must hear CANCEL.
                swarm.doubled.set(range);
            }
            swarm.requested.set(range);
            swarm.availability.mark_taken(range);
            // The request window counts a chunk as one MSS, so that its
            // flight and its window are in the same unit.
            let unit = self.mss;
            self.req_cc
                .on_sent(ctx.now, range.len() * unit, self.outstanding.count() * unit);
            if let Some(bucket) = ctx.download.as_deref_mut() {
                bucket.take_saturating(ctx.now, range.len() * cs);
            }
        }
    }

    /// Appends INTEGRITY and DATA for the next requested chunk, if the
    /// congestion window, pacing and the upload limit allow and it fits
    /// beside the control messages (else it goes in the next datagram).
    fn push_data(&mut self, swarm: &mut Swarm, ctx: &mut Ctx<'_>, w: &mut DatagramWriter<'_>) {
        if self.choking_remote || self.uploads.is_empty() {
            return;
        }
        let cs = swarm.chunk_size.bytes_usize();
        let mss = self.mss;
        if self.inflight.bytes() > 0 && self.inflight.bytes() + mss > self.cc.window() {
            return;
        }
        let rate = self.rtt.srtt().and_then(|srtt| self.cc.pacing_rate(srtt));
        self.next_data_at = self.pacer.ready_at(ctx.now, mss, rate, mss);
        if self.next_data_at > ctx.now {
            return;
        }
        let (chunk, hashes) = loop {
            let Some(chunk) = self.uploads.peek() else {
                return;
            };
            let sent_ahead = self.ahead.remove(&chunk);
            let hashes = swarm
                .have
                .contains(chunk)
                .then(|| {
                    if sent_ahead {
                        Some(Vec::new())
                    } else {
                        self.hashes_for(swarm, chunk)
                    }
                })
                .flatten();
            match (hashes, self.spec_for_chunk(swarm, chunk)) {
                (Some(h), Some(spec)) => break ((chunk, spec), h),
                _ => {
                    self.uploads.pop();
                }
            }
        };
        let (chunk, spec) = chunk;
        if !hashes.is_empty()
            && w.is_empty()
            && ctx.config.integrity_ahead
            && !matches!(ctx.config.compat, crate::proto::Compat::Libswift)
            && self.push_hashes_ahead(swarm, w, chunk)
        {
            return; // This datagram carries the hashes; the DATA follow.
        }
        let spec_len = 1 + self.params.addressing.spec_len();
        let needed = hashes.len() * (spec_len + self.params.hash_len()) + spec_len + 8 + cs;
        let start = w.len();
        let limit = ctx
            .config
            .max_datagram
            .max(crate::wire::CHANNEL_ID_LEN + needed);
        if start + needed > limit {
            return;
        }
        if let Some(bucket) = ctx.upload.as_deref_mut() {
            if !bucket.try_take(ctx.now, needed as u64) {
                self.out.upload_blocked =
                    Some(self.out.upload_blocked.unwrap_or(0).max(needed as u64));
                return;
            }
        }
        w.set_limit(limit);
        for (bin, hash) in &hashes {
            let Some(s) = self.spec_for_bin(swarm, *bin) else {
                return;
            };
            if w.push(&Message::Integrity {
                spec: s,
                hash: *hash,
            })
            .is_err()
            {
                return;
            }
        }
        let timestamp = Timestamp(ctx.wire_now());
        let storage = &mut swarm.storage;
        let Ok(read) = w.push_data_with(spec, timestamp, cs, |out| storage.read_chunk(chunk, out))
        else {
            return;
        };
        self.uploads.pop();
        let n = match read {
            Ok(n) => n,
            Err(e) => {
                ctx.events.push_back(Event::StorageError {
                    swarm: self.swarm,
                    error: e.to_string(),
                });
                return;
            }
        };
        let bytes = (w.len() - start) as u64;
        self.inflight.on_sent(chunk.0, bytes, ctx.now);
        self.cc.on_sent(ctx.now, bytes, self.inflight.bytes());
        self.pacer.on_sent(bytes);
        self.stats.chunks_sent += 1;
        self.stats.payload_bytes_sent += n as u64;
        swarm.stats.payload_bytes_sent += n as u64;
        let peer = swarm.peer_stats(self.peer);
        peer.chunks_sent += 1;
        peer.payload_bytes_sent += n as u64;
    }

    /// Writes the INTEGRITY messages for the next chunks to send, starting
    /// with `first`, as one datagram, and marks the chunks whose hashes it
    /// holds so their DATA go without. Each chunk's uncles are chosen as if
    /// the chunks before it in the burst had arrived. Returns false (and
    /// writes nothing) when fewer than two chunks would benefit.
    fn push_hashes_ahead(
        &mut self,
        swarm: &Swarm,
        w: &mut DatagramWriter<'_>,
        first: ChunkIndex,
    ) -> bool {
        let mss = self.mss;
        let room = self.cc.window().saturating_sub(self.inflight.bytes()) / mss;
        let burst: Vec<ChunkIndex> = self
            .uploads
            .upcoming()
            .take(room.clamp(1, MAX_AHEAD) as usize)
            .take_while(|c| swarm.have.contains(*c) && !self.ahead.contains(c))
            .collect();
        if burst.len() < 2 || burst[0] != first {
            return false;
        }
        let entry = 1 + self.params.addressing.spec_len() + self.params.hash_len();
        let room = w.remaining();
        let mut seen = BTreeSet::new();
        let mut msgs: Vec<(Bin, Hash)> = Vec::new();
        if self.remote_has.is_empty() {
            for (bin, hash) in swarm.integrity.peaks().unwrap_or_default() {
                seen.insert(bin);
                msgs.push((bin, hash));
            }
        }
        let mut covered = Vec::new();
        for (i, &c) in burst.iter().enumerate() {
            let before = &burst[..i];
            let earlier = |keep: fn(ChunkIndex, ChunkIndex) -> bool| {
                before.iter().copied().filter(move |b| keep(*b, c))
            };
            let left = self
                .remote_has
                .last_filled_to(c)
                .into_iter()
                .chain(earlier(|b, c| b < c))
                .max();
            let right = self
                .remote_has
                .first_filled_from(c)
                .into_iter()
                .chain(earlier(|b, c| b > c))
                .min();
            let holds = |b: Bin| {
                left.is_some_and(|x| b.contains_chunk(x))
                    || right.is_some_and(|x| b.contains_chunk(x))
            };
            let Some(uncles) = swarm.integrity.uncles(c, holds) else {
                break;
            };
            let fresh: Vec<(Bin, Hash)> = uncles
                .into_iter()
                .filter(|(b, _)| !seen.contains(b))
                .collect();
            if (msgs.len() + fresh.len()) * entry > room {
                break;
            }
            seen.extend(fresh.iter().map(|f| f.0));
            msgs.extend(fresh);
            covered.push(c);
        }
        if covered.len() < 2 {
            return false;
        }
        for (bin, hash) in msgs {
            let Some(spec) = self.spec_for_bin(swarm, bin) else {
                return false;
            };
            // Room was checked above.
            let _ = w.push(&Message::Integrity { spec, hash });
        }
        if self.ahead.len() > 4 * MAX_AHEAD as usize {
            self.ahead.clear();
        }
        self.ahead.extend(covered);
        true
    }

    /// The hashes to put before DATA of `chunk`: the peaks until the peer
    /// has acknowledged something (RFC 7574 §5.6.2), then the uncles it
    /// lacks, top down (§5.4). `None` if we cannot vouch for the chunk.
    fn hashes_for(&self, swarm: &Swarm, chunk: ChunkIndex) -> Option<Vec<(Bin, Hash)>> {
        // The walk asks, for ancestors of `chunk`, whether the receiver holds
        // a chunk under them: exactly when the nearest chunk it holds on
        // either side lies under them. Two searches instead of one per layer.
        let left = self.remote_has.last_filled_to(chunk);
        let right = self.remote_has.first_filled_from(chunk);
        let holds = |b: Bin| {
            left.is_some_and(|c| b.contains_chunk(c)) || right.is_some_and(|c| b.contains_chunk(c))
        };
        let uncles = swarm.integrity.uncles(chunk, holds)?;
        if self.remote_has.is_empty() {
            let mut all = swarm.integrity.peaks()?;
            all.extend(uncles);
            Some(all)
        } else {
            Some(uncles)
        }
    }

    fn specs_for<'s>(
        &self,
        swarm: &'s Swarm,
        range: ChunkRange,
    ) -> impl Iterator<Item = ChunkSpec> + 's {
        let len = swarm.integrity.content_len().unwrap_or(u64::MAX);
        self.params
            .addressing
            .specs_for(range, swarm.chunk_size, len)
    }

    fn spec_for_chunk(&self, swarm: &Swarm, chunk: ChunkIndex) -> Option<ChunkSpec> {
        let mut specs = self.specs_for(swarm, ChunkRange::single(chunk)?);
        let s = specs.next()?;
        specs.next().is_none().then_some(s)
    }

    fn spec_for_bin(&self, swarm: &Swarm, bin: Bin) -> Option<ChunkSpec> {
        match self.params.addressing {
            ChunkAddressing::Bins32 | ChunkAddressing::Bins64 => Some(ChunkSpec::Bin(bin)),
            _ => self.specs_for(swarm, bin.chunks()?).next(),
        }
    }
}

/// How many chunks an ACK repeats of the run before it (chosen: 64, about
/// a round trip of DATA at a few Mbit/s over 1 KiB chunks).
pub(crate) const REACK_CHUNKS: u64 = 64;

/// An ACK for `range` after ACKs covering `run`: the run it extends, and
/// the chunks to acknowledge — `range` and up to [`REACK_CHUNKS`] of the
/// run right before it. An ACK lost on the way is thus repeated by the
/// next one, so the sender does not take its DATA for lost and halve its
/// window over a lost ACK (on a path that loses 2 % of its datagrams that
/// cut throughput to a quarter in E1). Acknowledging a chunk again is
/// harmless: an ACK only confirms receipt (RFC 7574 §8.7).
pub(crate) fn reack(run: Option<ChunkRange>, range: ChunkRange) -> (ChunkRange, ChunkRange) {
    let Some(run) = run else {
        return (range, range);
    };
    let touches = range.first() >= run.first() && range.first().0 <= run.last().0.saturating_add(1);
    if !touches {
        return (range, range);
    }
    let last = range.last().max(run.last());
    let merged = ChunkRange::new(run.first(), last).unwrap_or(range);
    let from = run
        .first()
        .0
        .max(range.first().0.saturating_sub(REACK_CHUNKS))
        .min(range.first().0);
    let covered = ChunkRange::new(from, range.last().0).unwrap_or(range);
    (merged, covered)
}

/// The runs that hold the chunks of `sorted` (ascending; repeats allowed).
/// `reach(x)` is the first chunk
/// from `x` on that a run cannot cover unless it is one of `sorted` (the
/// first chunk not had, or `x` itself when only consecutive chunks may
/// join): a run ending at `c` takes in the next chunk of `sorted` if it is
/// at most `reach(c + 1)`. A run covers everything up to its bound, so
/// `reach` is asked about once per run, and again only when a chunk at
/// the bound joins.
fn runs<'a>(
    sorted: &'a [ChunkIndex],
    reach: impl Fn(ChunkIndex) -> u64 + 'a,
) -> impl Iterator<Item = ChunkRange> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        let first = *sorted.get(i)?;
        let mut last = first;
        let mut bound = reach(ChunkIndex(first.0 + 1));
        i += 1;
        while let Some(&c) = sorted.get(i) {
            if c.0 > bound {
                break;
            }
            if c > last {
                last = c;
                if c.0 >= bound {
                    bound = reach(ChunkIndex(c.0 + 1));
                }
            }
            i += 1;
        }
        ChunkRange::new(first, last)
    })
}

#[cfg(test)]
mod reack_tests {
    use super::{reack, REACK_CHUNKS};
    use crate::chunk::ChunkRange;

    fn r(a: u64, b: u64) -> ChunkRange {
        ChunkRange::new(a, b).unwrap()
    }

    #[test]
    fn an_ack_repeats_the_run_before_it() {
        // The first ACK covers only its own chunks.
        assert_eq!(reack(None, r(0, 1)), (r(0, 1), r(0, 1)));
        // The next one repeats them: had the first been lost, this one
        // acknowledges chunks 0-1 as well.
        assert_eq!(reack(Some(r(0, 1)), r(2, 2)), (r(0, 2), r(0, 2)));
        // Never more than REACK_CHUNKS back.
        let long = r(0, 999);
        let (run, covered) = reack(Some(long), r(1000, 1000));
        assert_eq!(run, r(0, 1000));
        assert_eq!(covered, r(1000 - REACK_CHUNKS, 1000));
    }

    #[test]
    fn a_gap_starts_a_new_run() {
        // Chunk 5 did not arrive (its DATA was lost): it must stay
        // unacknowledged, so the sender learns of the loss.
        assert_eq!(reack(Some(r(0, 4)), r(6, 7)), (r(6, 7), r(6, 7)));
        // An older chunk arriving late does not reach back into the run.
        assert_eq!(reack(Some(r(6, 7)), r(5, 5)), (r(5, 5), r(5, 5)));
    }
}

#[cfg(test)]
mod runs_tests {
    use super::runs;
    use crate::binmap::Binmap;
    use crate::chunk::{ChunkIndex, ChunkRange};

    fn of(chunks: &[u64], had: &Binmap) -> Vec<(u64, u64)> {
        let v: Vec<ChunkIndex> = chunks.iter().map(|&c| ChunkIndex(c)).collect();
        let reach = |c: ChunkIndex| had.first_empty_from(c).map_or(u64::MAX, |e| e.0);
        let out: Vec<ChunkRange> = runs(&v, reach).collect();
        // Every chunk is in a run, and runs are apart and in order.
        assert!(v.iter().all(|&c| out.iter().any(|r| r.contains(c))));
        assert!(out.windows(2).all(|w| w[0].last().0 + 1 < w[1].first().0));
        out.iter().map(|r| (r.first().0, r.last().0)).collect()
    }

    /// The chunks of `v` as had, the rest not.
    fn had(v: &[u64]) -> Binmap {
        let mut b = Binmap::new();
        for &c in v {
            b.set_chunk(ChunkIndex(c));
        }
        b
    }

    #[test]
    fn consecutive_chunks_make_one_run() {
        assert_eq!(of(&[], &had(&[])), vec![]);
        assert_eq!(of(&[7], &had(&[7])), vec![(7, 7)]);
        let v = [3, 4, 5, 9, 10, 12];
        assert_eq!(of(&v, &had(&v)), vec![(3, 5), (9, 10), (12, 12)]);
    }

    #[test]
    fn repeats_do_not_split_a_run() {
        let v = [1, 1, 2, 2, 3, 5, 5];
        assert_eq!(of(&v, &had(&v)), vec![(1, 3), (5, 5)]);
    }

    #[test]
    fn a_gap_of_chunks_had_is_bridged() {
        // New: 5, 9, 10, 12, 13. Had before: 6-8 and 11. Not had: 14 on.
        let new = [5, 9, 10, 12, 13];
        let h = had(&[5, 6, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(of(&new, &h), vec![(5, 13)]);
        // Only a gap wholly had is bridged: 3 is missing.
        let h = had(&[2, 4, 5]);
        assert_eq!(of(&[2, 4, 5], &h), vec![(2, 2), (4, 5)]);
    }

    #[test]
    fn only_consecutive_chunks_join_without_bridging() {
        let v = [5, 6, 8, 9, 9, 11];
        let out: Vec<(u64, u64)> = runs(&v.map(ChunkIndex), |c: ChunkIndex| c.0)
            .map(|r| (r.first().0, r.last().0))
            .collect();
        assert_eq!(out, vec![(5, 6), (8, 9), (11, 11)]);
    }
}
