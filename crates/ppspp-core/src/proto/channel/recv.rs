//! What a channel does with the messages it receives: the dispatch, the
//! handshake's answer, what the peer has (HAVE, ACK) and what it asks of
//! us (REQUEST, CANCEL, PEX_REQ). DATA and INTEGRITY are in `download/data.rs`.

use std::net::SocketAddr;

use super::download::refuse_have;
use super::{scope, Channel, Outcome, State};
use crate::bin::Bin;
use crate::chunk::ChunkRange;
use crate::hash::Hash;
use crate::merkle::DEFAULT_MAX_CHUNKS;
use crate::proto::event::{CloseReason, Event};
use crate::proto::integrity::Integrity;
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::wire::{ChannelId, ChunkSpec, DelaySample, HandshakeOptions, Message, Messages};

/// INTEGRITY messages kept per datagram; a DATA needs at most the peaks
/// and one uncle per tree layer.
const MAX_HASHES_PER_DATAGRAM: usize = 192;
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
        let mut out = Outcome::default();
        self.last_recv = ctx.now;
        self.sent_since_recv = 0;
        self.hs.handle_received(len);
        if to_our_channel && self.hs.state() == State::Responding {
            self.establish(swarm, ctx);
        }
        let mut hashes: Vec<(Bin, Hash)> = Vec::new();
        let mut haves: Vec<ChunkRange> = Vec::new();
        let mut pex = 0;
        for m in messages {
            let Ok(m) = m else {
                out.malformed += 1;
                break;
            };
            // Past a refusal, only the peer addresses it names are read
            // (any other close stops the loop below, before the next
            // message is decoded).
            if self.close.is_some() && !matches!(m, Message::PexResV4(_) | Message::PexResV6(_)) {
                break;
            }
            match m {
                Message::Handshake { source, options } => {
                    self.on_handshake(swarm, ctx, source, &options)
                }
                Message::Have(spec) => match self.range_of(swarm, spec) {
                    Some(range) => {
                        let sc = &mut scope(&mut self.peer, &self.hs, &mut out);
                        let recorded = self.down.handle_have(swarm, sc, range);
                        self.close_on(recorded);
                        // Never send a peer what it has: what it announces
                        // leaves our upload queue, and our flight once this
                        // datagram's ACKs are counted (libswift puts a HAVE
                        // before the ACK of the same chunk).
                        self.up.handle_cancel(range);
                        if self.up.flight_bytes() > 0 && haves.len() < MAX_HAVES_PER_DATAGRAM {
                            haves.push(range);
                        }
                    }
                    None => {
                        let refused = refuse_have(swarm, &mut self.peer);
                        self.close_on(refused);
                    }
                },
                Message::Ack { spec, delay } => self.on_ack(swarm, ctx, &mut out, spec, delay),
                Message::Integrity { spec, hash } => {
                    if let Some(bin) = self.bin_of(swarm, spec) {
                        if let Some(live) = swarm.integrity.live_mut() {
                            // In message order: a munro hash must be the
                            // last one before its SIGNED_INTEGRITY.
                            live.offer_hash(bin, hash);
                        } else if hashes.len() < MAX_HASHES_PER_DATAGRAM {
                            hashes.push((bin, hash));
                        }
                    }
                }
                Message::SignedIntegrity {
                    spec,
                    timestamp,
                    signature,
                } => {
                    let bin = self.bin_of(swarm, spec);
                    let sc = &mut scope(&mut self.peer, &self.hs, &mut out);
                    let taken = self
                        .down
                        .handle_signed(swarm, sc, bin, timestamp, signature);
                    self.close_on(taken);
                }
                Message::Data {
                    spec,
                    timestamp,
                    payload,
                } => {
                    let sc = &mut scope(&mut self.peer, &self.hs, &mut out);
                    let data = (spec, timestamp, payload);
                    let verified = self.down.handle_data(swarm, ctx, sc, data, &hashes);
                    self.close_on(verified);
                    hashes.clear();
                }
                Message::Request(spec) => self.on_request(swarm, ctx, &mut out, spec),
                Message::Cancel(spec) => {
                    if let Some(range) = self.range_of(swarm, spec) {
                        self.up.handle_cancel(range);
                    }
                }
                Message::Choke => {
                    self.choke.handle_remote(true);
                    let dropped = self.down.clear_outstanding();
                    out.released.extend(dropped.filled_runs());
                }
                Message::Unchoke => self.choke.handle_remote(false),
                Message::PexReq => self.ann.handle_pex_request(),
                Message::PexResV4(a) if pex < MAX_PEX_PER_DATAGRAM => {
                    pex += 1;
                    out.found.push(SocketAddr::V4(a));
                }
                Message::PexResV6(a) if pex < MAX_PEX_PER_DATAGRAM => {
                    pex += 1;
                    out.found.push(SocketAddr::V6(a));
                }
                // Certificate PEX is not spoken here.
                _ => {}
            }
            // A refusal of a full swarm names some of its peers after the
            // closing HANDSHAKE (`endpoint/refusal.rs`): only those are
            // read once the channel closes.
            if self.close.is_some() && self.close != Some(CloseReason::Refused) {
                break;
            }
        }
        for range in haves {
            self.up.handle_have(range);
        }
        // Hashes sent ahead of their DATA (RFC 7574 §5.3: INTEGRITY may
        // travel in earlier datagrams) wait as candidates in the tree.
        if !hashes.is_empty() && self.close.is_none() {
            let sc = &mut scope(&mut self.peer, &self.hs, &mut out);
            let accepted = self.down.handle_hashes(swarm, sc, &hashes);
            self.close_on(accepted);
        }
        out
    }

    /// Closes the channel, telling the peer, if a sub-state found the
    /// peer at fault.
    fn close_on(&mut self, verdict: Result<(), CloseReason>) {
        if let Err(reason) = verdict {
            self.close(reason, true);
        }
    }

    /// The handshake is complete on both sides.
    fn establish(&mut self, swarm: &mut Swarm, ctx: &mut Ctx<'_>) {
        self.hs.handle_established();
        swarm.peers.insert(self.peer.addr);
        ctx.events.push_back(Event::Connected {
            swarm: self.peer.swarm,
            peer: self.peer.addr,
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
            let reason = if self.hs.state() == State::Initiating {
                CloseReason::Refused
            } else {
                CloseReason::ClosedByPeer
            };
            self.close(reason, false);
            return;
        }
        if self.hs.state() != State::Initiating {
            return; // A duplicate answer.
        }
        match swarm.check_handshake(options) {
            Ok(offer) => {
                self.remote = source;
                self.hs.handle_answer(options, &offer);
                self.down.handle_peer_window(offer.window);
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
            Integrity::Live(_) => false,
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

    fn on_ack(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        out: &mut Outcome,
        spec: ChunkSpec,
        delay: DelaySample,
    ) {
        let Some(range) = self.range_of(swarm, spec) else {
            return;
        };
        let recorded =
            self.down
                .handle_have(swarm, &mut scope(&mut self.peer, &self.hs, out), range);
        self.close_on(recorded);
        self.up.handle_ack(ctx.now, range, delay.0);
    }

    fn on_request(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        out: &mut Outcome,
        spec: ChunkSpec,
    ) {
        // Interest begins, or comes back after the slot was let go idle
        // (see `choke`): look at the slots again. A choked peer's requests
        // are void (RFC 7574 §3.9), and so are those that reach us before
        // it hears the CHOKE that voids them.
        let (rechoke, void) = self
            .choke
            .handle_request(ctx.now, crate::proto::choke::IDLE);
        if rechoke {
            out.rechoke = true;
        }
        if void {
            return;
        }
        let Some(range) = self.range_of(swarm, spec) else {
            return;
        };
        // Serve only what we have; the rest of the request is ignored.
        let runs: Vec<ChunkRange> = swarm.have.filled_runs_in(range).collect();
        for r in runs {
            if self
                .up
                .handle_request(r, ctx.config.max_upload_queue_ranges)
                .is_err()
            {
                // Never drop part of a request silently: void them all with
                // CHOKE and UNCHOKE at once, so that the peer asks again.
                self.up.handle_void();
                self.choke.handle_overflow();
                return;
            }
        }
    }
}
