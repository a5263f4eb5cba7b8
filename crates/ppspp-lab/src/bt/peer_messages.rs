//! What a BitTorrent peer does with each message (BEP 3), the requests it
//! keeps out, and the uploads it writes.

use ppspp_core::time::Instant;

use super::peer::{BtPeer, ConnKey};
use super::picker::BlockOutcome;
use super::transport::Transport;
use super::wire::{BlockRef, Message};
use super::PieceIndex;

/// Requests from one peer kept at most (a peer asks for a few dozen; more
/// is a misbehaving peer, and the model's memory stays bounded).
const MAX_QUEUED_REQUESTS: usize = 256;

impl BtPeer {
    /// Handles the records that arrived on connection `k`, then keeps its
    /// requests out and its uploads going.
    pub(super) fn pump(&mut self, now: Instant, k: ConnKey) {
        while let Some(r) = self.conns.get_mut(&k).and_then(|c| c.link.take_record()) {
            match Message::decode(&r.data) {
                Ok(m) => self.handle(now, k, m),
                // Only our own peers write here; a bad record would be a
                // bug, and a real client drops such a peer.
                Err(_) => self.close(k),
            }
        }
        let peer_ended = self
            .conns
            .get(&k)
            .is_some_and(|c| !c.closing && c.link.peer_finished());
        if peer_ended {
            self.close(k);
        }
        self.fill(k);
        self.serve(k);
    }

    fn handle(&mut self, now: Instant, k: ConnKey, m: Message) {
        let have_any = self.picker.have_count() > 0;
        let Some(c) = self.conns.get_mut(&k) else {
            return;
        };
        if c.closing {
            return;
        }
        match m {
            Message::Handshake { .. } => {
                c.got_handshake = true;
                if !c.sent_handshake {
                    c.send(&Message::Handshake { peer: self.host.0 });
                    c.sent_handshake = true;
                }
                if have_any {
                    c.send(&Message::Bitfield(self.picker.bitfield()));
                }
                self.dirty.insert(k);
                self.resolve_duplicates(c_remote(self, k));
            }
            _ if !c.got_handshake => {}
            Message::Bitfield(bits) => {
                for (i, held) in c.pieces.iter_mut().enumerate() {
                    let bit = bits.get(i / 8).is_some_and(|b| b & (0x80 >> (i % 8)) != 0);
                    if bit && !*held {
                        *held = true;
                        self.picker.peer_has(PieceIndex(i as u32));
                    }
                }
                self.update_interest(k);
            }
            Message::Have(p) => {
                if let Some(held) = c.pieces.get_mut(p.0 as usize) {
                    if !*held {
                        *held = true;
                        self.picker.peer_has(p);
                    }
                }
                self.update_interest(k);
            }
            Message::Interested => {
                c.peer_interested = true;
                // A free slot is given at once rather than at the next
                // round (libtorrent, mainline's rechoke on interest).
                let unchoked = self.conns.values().filter(|o| !o.am_choking).count();
                if unchoked < self.config.slots {
                    if let Some(c) = self.conns.get_mut(&k) {
                        c.am_choking = false;
                        c.send(&Message::Unchoke);
                    }
                }
            }
            Message::NotInterested => c.peer_interested = false,
            Message::Choke => {
                // BEP 3: when a peer chokes us, what we asked is dropped.
                c.peer_choking = true;
                for b in c.asked.drain(..) {
                    self.picker.unask(&b);
                }
            }
            Message::Unchoke => c.peer_choking = false,
            Message::Request(b) => {
                let valid = self.picker.has(b.piece)
                    && b.length > 0
                    && b.length <= self.config.block_len
                    && u64::from(b.begin) + u64::from(b.length)
                        <= u64::from(self.picker.piece_bytes(b.piece));
                if !c.am_choking && valid && c.requests.len() < MAX_QUEUED_REQUESTS {
                    c.requests.push_back(b);
                }
            }
            Message::Piece(b) => self.on_piece(now, k, b),
            Message::Cancel(b) => c.requests.retain(|x| *x != b),
        }
    }

    fn on_piece(&mut self, now: Instant, k: ConnKey, b: BlockRef) {
        let Some(c) = self.conns.get_mut(&k) else {
            return;
        };
        if let Some(i) = c.asked.iter().position(|x| *x == b) {
            c.asked.swap_remove(i);
        }
        let outcome = self.picker.on_block(&b);
        if outcome == BlockOutcome::Duplicate {
            self.stats.duplicate_blocks += 1;
            return;
        }
        let n = u64::from(b.length);
        c.down.add(n);
        let remote = c.remote.0;
        self.stats.bytes_down += n;
        match k.1 {
            Transport::Tcp => self.stats.bytes_down_tcp += n,
            Transport::Utp => self.stats.bytes_down_utp += n,
        }
        *self.stats.down_from.entry(remote).or_insert(0) += n;
        // End game: whoever else was asked for it is told not to bother.
        for (ok, other) in self.conns.iter_mut() {
            if let Some(i) = other.asked.iter().position(|x| *x == b) {
                other.asked.swap_remove(i);
                other.send(&Message::Cancel(b));
                self.dirty.insert(*ok);
            }
        }
        if let BlockOutcome::PieceDone(p) = outcome {
            let keys: Vec<ConnKey> = self.conns.keys().copied().collect();
            for ok in keys {
                if let Some(o) = self.conns.get_mut(&ok) {
                    if o.is_ready() {
                        o.send(&Message::Have(p));
                        self.dirty.insert(ok);
                    }
                }
                self.update_interest(ok);
            }
            if self.picker.is_complete() && self.completed_at.is_none() {
                self.completed_at = Some(now);
            }
        }
    }

    /// Tells the peer on `k` whether we are interested, when that changed.
    fn update_interest(&mut self, k: ConnKey) {
        let Some(c) = self.conns.get_mut(&k) else {
            return;
        };
        if !c.is_ready() {
            return;
        }
        let want = self.picker.interesting(&c.pieces);
        if want != c.am_interested {
            c.am_interested = want;
            c.send(if want {
                &Message::Interested
            } else {
                &Message::NotInterested
            });
            self.dirty.insert(k);
        }
    }

    /// Keeps requests out to an unchoking peer we are interested in: the
    /// blocks of `request_queue_time` at its recent rate, within the
    /// pipeline's bounds (libtorrent's rule).
    fn fill(&mut self, k: ConnKey) {
        let cfg = &self.config;
        let Some(c) = self.conns.get_mut(&k) else {
            return;
        };
        if !c.is_ready() || !c.am_interested || c.peer_choking {
            return;
        }
        let window = 2 * cfg.choke_interval.as_micros().max(1) as u64;
        let rate_per_s = c.down.recent() * 1_000_000 / window;
        let depth = rate_per_s * cfg.request_queue_time.as_millis() as u64
            / 1000
            / u64::from(cfg.block_len);
        let depth = (depth as usize).clamp(cfg.min_pipeline, cfg.max_pipeline);
        if c.asked.len() >= depth {
            return;
        }
        let want = depth - c.asked.len();
        let asked = &c.asked;
        let blocks = self
            .picker
            .pick(&c.pieces, want, &|b| asked.contains(b), &mut self.rng);
        for b in blocks {
            c.send(&Message::Request(b));
            c.asked.push(b);
        }
        self.dirty.insert(k);
    }

    /// Writes piece messages for the peer's requests while it is unchoked,
    /// keeping at most `send_ahead` bytes unsent in the transport.
    pub(super) fn serve(&mut self, k: ConnKey) {
        let Some(c) = self.conns.get_mut(&k) else {
            return;
        };
        while c.is_ready() && !c.am_choking && c.link.unsent() < self.config.send_ahead {
            let Some(b) = c.requests.pop_front() else {
                break;
            };
            c.send(&Message::Piece(b));
            let n = u64::from(b.length);
            c.up.add(n);
            self.stats.bytes_up += n;
            match k.1 {
                Transport::Tcp => self.stats.bytes_up_tcp += n,
                Transport::Utp => self.stats.bytes_up_utp += n,
            }
            self.dirty.insert(k);
        }
    }

    /// Two connections to one peer, both through their handshakes: one
    /// is kept, uTP before TCP, then the one opened by the lower host (a
    /// rule both ends apply alike, so they close the same one).
    fn resolve_duplicates(&mut self, remote: u32) {
        let mut ready: Vec<ConnKey> = self
            .conns
            .iter()
            .filter(|(_, c)| c.remote.0 == remote && c.is_ready())
            .map(|(k, _)| *k)
            .collect();
        if ready.len() < 2 {
            return;
        }
        // Transport's order puts the preferred one last.
        ready.sort_by_key(|(id, t)| (std::cmp::Reverse(*t), *id >> 32));
        for k in ready.into_iter().skip(1) {
            self.stats.duplicates_closed += 1;
            self.close(k);
        }
    }
}

fn c_remote(p: &BtPeer, k: ConnKey) -> u32 {
    p.conns.get(&k).map_or(u32::MAX, |c| c.remote.0)
}
