//! DATA and the INTEGRITY messages that vouch for it (RFC 7574 §3.4–3.5,
//! §5), within the congestion window, the pacer and the upload limit;
//! hashes may go out ahead of their DATA (§5.3).

use std::collections::BTreeSet;

use super::super::Scope;
use super::Upload;
use crate::bin::Bin;
use crate::binmap::Binmap;
use crate::chunk::ChunkIndex;
use crate::hash::Hash;
use crate::live::{LiveMethod, SignedMunro};
use crate::proto::event::Event;
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::proto::{StorageFailure, StorageOp};
use crate::time::Instant;
use crate::wire::{DatagramWriter, Message, Timestamp};

/// Most chunks whose hashes go out ahead in one datagram.
const MAX_AHEAD: u64 = 32;

impl Upload {
    /// Appends INTEGRITY and DATA for the next requested chunk, if the
    /// congestion window, pacing and the upload limit allow and it fits
    /// beside the control messages (else it goes in the next datagram).
    /// Nothing while we choke the peer (`choking`); `remote_has` is what
    /// the peer has, which decides the hashes it needs.
    pub fn poll_data(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        sc: &mut Scope<'_>,
        (choking, remote_has): (bool, &Binmap),
        w: &mut DatagramWriter<'_>,
    ) {
        if choking || self.queue.is_empty() {
            return;
        }
        let cs = swarm.chunk_size.bytes_usize();
        let mss = sc.peer.mss;
        if self.inflight.bytes() > 0 && self.inflight.bytes() + mss > self.cc.window() {
            return;
        }
        let rate = self.rtt.srtt().and_then(|srtt| self.cc.pacing_rate(srtt));
        self.next_data_at = self.pacer.ready_at(ctx.now, mss, rate, mss);
        if self.next_data_at > ctx.now {
            return;
        }
        let (chunk, hashes) = loop {
            let Some(chunk) = self.queue.peek() else {
                return;
            };
            let sent_ahead = self.ahead.remove(&chunk);
            // Looked up once per DATA: it walks the flight.
            let near = (!sent_ahead).then(|| self.held_near(ctx.now, remote_has, chunk));
            let hashes = swarm
                .have
                .contains(chunk)
                .then(|| match near {
                    None => Some(Vec::new()),
                    Some(near) => self.hashes_for(swarm, remote_has.is_empty(), near, chunk),
                })
                .flatten();
            match (hashes, sc.spec_for_chunk(swarm, chunk)) {
                (Some(h), Some(spec)) => break ((chunk, spec, near), h),
                _ => {
                    self.queue.pop();
                }
            }
        };
        let (chunk, spec, near) = chunk;
        if !hashes.is_empty()
            && w.is_empty()
            && ctx.config.integrity_ahead
            && !matches!(ctx.config.compat, crate::proto::Compat::Libswift)
            && swarm.live.is_none()
            && self.poll_hashes_ahead(swarm, sc, remote_has, w, chunk)
        {
            return; // This datagram carries the hashes; the DATA follow.
        }
        let near = near.unwrap_or_else(|| self.held_near(ctx.now, remote_has, chunk));
        let munro = live_munro(swarm, near, chunk);
        let spec_len = sc.spec_len();
        let munro_len = munro.as_ref().map_or(0, |m| {
            2 * spec_len + sc.params.hash_len() + 8 + m.signature.len()
        });
        let needed =
            munro_len + hashes.len() * (spec_len + sc.params.hash_len()) + spec_len + 8 + cs;
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
                sc.out.upload_blocked = Some(sc.out.upload_blocked.unwrap_or(0).max(needed as u64));
                return;
            }
        }
        w.set_limit(limit);
        if let Some(m) = &munro {
            // RFC 7574 §6.1.2.3: the munro hash, then its signature, then
            // the uncles up to it.
            if !push_signed_munro(swarm, sc, m, w) {
                return;
            }
        }
        for (bin, hash) in &hashes {
            let Some(s) = sc.spec_for_bin(swarm, *bin) else {
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
        self.queue.pop();
        let n = match read {
            Ok(n) => n,
            Err(e) => {
                ctx.events.push_back(Event::StorageError {
                    swarm: sc.peer.swarm,
                    error: StorageFailure::new(StorageOp::ReadChunk(chunk), &e),
                });
                return;
            }
        };
        let bytes = (w.len() - start) as u64;
        // Trace level, for following chunks hop by hop (`bench/live_hops.py`).
        tracing::trace!(chunk = chunk.0, to = %sc.peer.addr, "chunk sent");
        self.inflight.on_sent(chunk.0, bytes, ctx.now);
        self.cc.on_sent(ctx.now, bytes, self.inflight.bytes());
        self.pacer.on_sent(bytes);
        sc.peer.stats.chunks_sent += 1;
        sc.peer.stats.payload_bytes_sent += n as u64;
        swarm.stats.payload_bytes_sent += n as u64;
        let peer = swarm.peer_stats(sc.peer.addr);
        peer.chunks_sent += 1;
        peer.payload_bytes_sent += n as u64;
    }

    /// Writes the INTEGRITY messages for the next chunks to send, starting
    /// with `first`, as one datagram, and marks the chunks whose hashes it
    /// holds so their DATA go without. Each chunk's uncles are chosen as if
    /// the chunks before it in the burst had arrived. Returns false (and
    /// writes nothing) when fewer than two chunks would benefit.
    fn poll_hashes_ahead(
        &mut self,
        swarm: &Swarm,
        sc: &Scope<'_>,
        remote_has: &Binmap,
        w: &mut DatagramWriter<'_>,
        first: ChunkIndex,
    ) -> bool {
        let mss = sc.peer.mss;
        let room = self.cc.window().saturating_sub(self.inflight.bytes()) / mss;
        let burst: Vec<ChunkIndex> = self
            .queue
            .upcoming()
            .take(room.clamp(1, MAX_AHEAD) as usize)
            .take_while(|c| swarm.have.contains(*c) && !self.ahead.contains(c))
            .collect();
        if burst.len() < 2 || burst[0] != first {
            return false;
        }
        let entry = sc.spec_len() + sc.params.hash_len();
        let room = w.remaining();
        let mut seen = BTreeSet::new();
        let mut msgs: Vec<(Bin, Hash)> = Vec::new();
        if remote_has.is_empty() {
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
            let left = remote_has
                .last_filled_to(c)
                .into_iter()
                .chain(earlier(|b, c| b < c))
                .max();
            let right = remote_has
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
            let Some(spec) = sc.spec_for_bin(swarm, bin) else {
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

    /// The chunks nearest `chunk` on either side that the peer holds, or
    /// will hold once the DATA in flight to it arrives: the hashes those
    /// bring need not go again (RFC 7574 §5.4 sends only the uncles the
    /// receiver lacks). Counting the flight keeps a burst to one peer from
    /// repeating the same uncles and munro signature on every DATA until
    /// the first ACK returns. (Most of the 14.6 % of live bytes that were
    /// hashes and signatures came from elsewhere: the live uncle walk that
    /// did not stop, `MunroNodes::uncles`, and signatures on every HAVE,
    /// `newest_unheld_munro`.) The flight counts only while the peer's
    /// ACKs keep coming (within two round trips): DATA sent into silence
    /// may all be lost, and the first DATA after it carries its hashes
    /// again. A lost DATA leaves the flight when it is found lost, so the
    /// DATA sent after that carry what it carried.
    fn held_near(
        &self,
        now: Instant,
        remote_has: &Binmap,
        chunk: ChunkIndex,
    ) -> (Option<ChunkIndex>, Option<ChunkIndex>) {
        let left = remote_has.last_filled_to(chunk);
        let right = remote_has.first_filled_from(chunk);
        if !self.acks_flowing(now) {
            return (left, right);
        }
        let (l, r) = self.inflight.nearest_unacked(chunk.0);
        let right = match (right, r.map(ChunkIndex)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        (left.max(l.map(ChunkIndex)), right)
    }

    /// Whether the peer acknowledged DATA within the last two smoothed
    /// round trips.
    fn acks_flowing(&self, now: Instant) -> bool {
        match (self.last_ack, self.rtt.srtt()) {
            (Some(at), Some(srtt)) => now.saturating_since(at) <= 2 * srtt,
            _ => false,
        }
    }

    /// The hashes to put before DATA of `chunk`: the peaks until the peer
    /// has acknowledged something (`first_contact`, RFC 7574 §5.6.2), then
    /// the uncles it lacks, top down (§5.4), given the chunks nearest
    /// `chunk` it holds (`near`). `None` if we cannot vouch for the chunk.
    fn hashes_for(
        &self,
        swarm: &Swarm,
        first_contact: bool,
        (left, right): (Option<ChunkIndex>, Option<ChunkIndex>),
        chunk: ChunkIndex,
    ) -> Option<Vec<(Bin, Hash)>> {
        // The walk asks, for ancestors of `chunk`, whether the receiver holds
        // a chunk under them: exactly when the nearest chunk it holds on
        // either side lies under them. Two searches instead of one per layer.
        let holds = |b: Bin| {
            left.is_some_and(|c| b.contains_chunk(c)) || right.is_some_and(|c| b.contains_chunk(c))
        };
        let uncles = swarm.integrity.uncles(chunk, holds)?;
        if first_contact && swarm.live.is_none() {
            let mut all = swarm.integrity.peaks()?;
            all.extend(uncles);
            Some(all)
        } else {
            Some(uncles)
        }
    }
}

/// Writes a munro's hash and, right after it, its signature (libswift
/// takes the hash received last as the munro's, so the two must be
/// adjacent). False if they did not fit.
pub(in crate::proto::channel) fn push_signed_munro(
    swarm: &Swarm,
    sc: &Scope<'_>,
    m: &SignedMunro,
    w: &mut DatagramWriter<'_>,
) -> bool {
    let Some(s) = sc.spec_for_bin(swarm, m.bin) else {
        return false;
    };
    let integrity = Message::Integrity {
        spec: s,
        hash: m.hash,
    };
    let signed = Message::SignedIntegrity {
        spec: s,
        timestamp: m.timestamp,
        signature: &m.signature,
    };
    // Sign All (RFC 7574 §6.1.1): the signature covers the chunk itself;
    // no hash goes with it.
    let sign_all = swarm
        .live
        .as_ref()
        .is_some_and(|l| l.shape.params.method == LiveMethod::SignAll);
    // Message ids, two specs, the hash, the timestamp, the signature.
    let need = 2 + 2 * sc.spec_len() + sc.params.hash_len() + 8 + m.signature.len();
    w.remaining() >= need && (sign_all || w.push(&integrity).is_ok()) && w.push(&signed).is_ok()
}

/// The signed munro to send before the DATA of `chunk` in a live swarm:
/// until the peer holds a chunk under it, or one is in flight to it
/// (`near`, see `Upload::held_near`; RFC 7574 §6.1.2.3).
fn live_munro(
    swarm: &Swarm,
    (left, right): (Option<ChunkIndex>, Option<ChunkIndex>),
    chunk: ChunkIndex,
) -> Option<SignedMunro> {
    let m = swarm.integrity.live()?.munro_for(chunk)?;
    let range = m.bin.chunks()?;
    let holds =
        left.is_some_and(|c| c >= range.first()) || right.is_some_and(|c| c <= range.last());
    (!holds).then(|| m.clone())
}
