//! What a channel puts in the next datagram to its peer: the handshake
//! steps, then, once established, control messages in a fixed order
//! (CHOKE/UNCHOKE, ACK, CANCEL, HAVE, PEX) before REQUESTs and DATA. ACKs,
//! CANCELs and REQUESTs are written in `download/`, HAVEs and PEX in
//! `announce/haves.rs`, DATA in `upload/data.rs`.

use super::{scope, Channel, Outcome, State};
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::time::Instant;
use crate::wire::{
    ChannelId, DatagramWriter, HandshakeOptions, Message, SwarmParams, WriterMark, PPSPP_VERSION,
};

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
        let mut out = Outcome::default();
        let len = self.transmit(swarm, ctx, &mut out, buf);
        (len, out)
    }

    fn transmit(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        out: &mut Outcome,
        buf: &mut [u8],
    ) -> Option<usize> {
        let w = if self.close.is_some() {
            self.write_close(buf)
        } else {
            match self.hs.state() {
                State::Initiating => self.write_handshake(swarm, ctx, buf),
                State::Responding => self.write_answer(swarm, ctx.now, out, buf),
                State::Established => self.write_established(swarm, ctx, out, buf),
            }
        }?;
        ctx.sent.merge(w.tally());
        let len = w.finish();
        self.last_send = ctx.now;
        self.sent_since_recv = self.sent_since_recv.saturating_add(1);
        self.hs.handle_sent(len);
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
        let mut w = DatagramWriter::new(buf, self.remote, self.hs.params()).ok()?;
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
        let extended = self.hs.poll_initiate(ctx.now, ctx.config)?;
        let options = swarm.handshake_options(self.hs.params().addressing, extended, true);
        let mut w = DatagramWriter::new(buf, ChannelId::ZERO, SwarmParams::default()).ok()?;
        w.push(&Message::Handshake {
            source: self.local,
            options,
        })
        .ok()?;
        self.hs.handle_initiated(ctx.now, ctx.config);
        Some(w)
    }

    /// Our answer to a HANDSHAKE, then HAVEs, all within the bytes the
    /// initiator sent us: its address is not proven yet, so we must not
    /// amplify (RFC 7574 §13.2.1).
    fn write_answer<'b>(
        &mut self,
        swarm: &Swarm,
        now: Instant,
        out: &mut Outcome,
        buf: &'b mut [u8],
    ) -> Option<DatagramWriter<'b>> {
        // Due once, whether or not it fits (`Handshake::poll_answer`).
        let budget = self.hs.poll_answer()?;
        let limit = budget.min(buf.len());
        let options =
            swarm.handshake_options(self.hs.params().addressing, self.hs.extended(), false);
        let mut w = DatagramWriter::new(&mut buf[..limit], self.remote, self.hs.params()).ok()?;
        w.push(&Message::Handshake {
            source: self.local,
            options,
        })
        .ok()?;
        let remote = (self.down.remote_has(), self.down.remote_complete());
        let sc = scope(&mut self.peer, &self.hs, out);
        self.ann.poll_haves(now, swarm, &sc, remote, &mut w);
        Some(w)
    }

    fn write_established<'b>(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        out: &mut Outcome,
        buf: &'b mut [u8],
    ) -> Option<DatagramWriter<'b>> {
        let mut w = DatagramWriter::new(buf, self.remote, self.hs.params()).ok()?;
        // Control messages stay within the configured datagram size; a DATA
        // may make the datagram as large as one chunk needs.
        w.set_limit(ctx.config.max_datagram);
        self.choke.poll_transmit(&mut w);
        let keepalive_due =
            ctx.now.saturating_since(self.last_send) >= ctx.config.keepalive_interval;
        // ACKs go when due (`Download::acks_due`), or ride on a datagram
        // that goes out anyway. HAVEs ride too, or get their own once they
        // have waited the swarm's HAVE interval.
        let acks_due = self.down.acks_due(ctx.now, ctx.config);
        let riding = acks_due || !w.is_empty() || self.hs.third_due() || keepalive_due;
        let haves_due =
            riding || ctx.now.saturating_since(self.ann.last_have()) >= self.ann.interval();
        // Asked before the scope borrows the peer, and only when HAVEs may
        // go at all, as on every datagram before.
        let held_due = self.ann.held_due().is_some_and(|t| t <= ctx.now);
        let send_haves = haves_due && (held_due || self.haves_pending(swarm.have_log.len()));
        let sc = &mut scope(&mut self.peer, &self.hs, out);
        let before_acks = w.mark();
        let acks = self.down.write_acks(swarm, sc, &mut w);
        let after_acks = w.message_count();
        self.down.poll_cancels(swarm, sc, &mut w);
        if send_haves {
            let remote = (self.down.remote_has(), self.down.remote_complete());
            self.ann.poll_haves(ctx.now, swarm, sc, remote, &mut w);
            self.ann.handle_haves_sent(ctx.now);
        }
        self.ann.poll_pex(swarm, ctx, sc, &mut w);
        let choked = self.choke.choked_by_remote();
        self.down.poll_requests(swarm, ctx, sc, choked, &mut w);
        let choking = self.choke.choking_remote();
        let remote_has = self.down.remote_has();
        self.up
            .poll_data(swarm, ctx, sc, (choking, remote_has), &mut w);
        if acks.any() {
            // ACKs that are not due wait for more chunks unless something
            // else goes to the peer in this datagram.
            let alone = acks_alone(&before_acks, &w, after_acks);
            if acks_due || !alone || keepalive_due || self.hs.third_due() {
                self.down.commit_acks(acks);
            } else {
                w.rollback(before_acks);
            }
        }
        if self.hs.poll_third(!w.is_empty() || keepalive_due) {
            Some(w)
        } else {
            None
        }
    }
}

/// Whether the ACKs written between `before` and the `after_acks`th
/// message are all the datagram holds.
fn acks_alone(before: &WriterMark, w: &DatagramWriter<'_>, after_acks: usize) -> bool {
    before.message_count() == 0 && w.message_count() == after_acks
}
