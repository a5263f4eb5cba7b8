//! What a channel puts in the next datagram to its peer: the handshake
//! steps, then, once established, control messages in a fixed order
//! (CHOKE/UNCHOKE, ACK, CANCEL, HAVE, PEX) before REQUESTs and DATA. ACKs,
//! CANCELs and REQUESTs are written in `download/`, HAVEs and PEX in
//! `announce/haves.rs`, DATA in `upload/data.rs`.

use super::{Channel, Outcome, State};
use crate::bin::Bin;

use crate::chunk::{ChunkIndex, ChunkRange};
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::wire::{
    ChannelId, ChunkAddressing, ChunkSpec, DatagramWriter, HandshakeOptions, Message, SwarmParams,
    PPSPP_VERSION,
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
        let len = self.transmit(swarm, ctx, buf);
        (len, std::mem::take(&mut self.out))
    }

    fn transmit(&mut self, swarm: &mut Swarm, ctx: &mut Ctx<'_>, buf: &mut [u8]) -> Option<usize> {
        let w = if self.close.is_some() {
            self.write_close(buf)
        } else {
            match self.hs.state() {
                State::Initiating => self.write_handshake(swarm, ctx, buf),
                State::Responding => self.write_answer(swarm, ctx, buf),
                State::Established => self.write_established(swarm, ctx, buf),
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
        let options = super::our_options(
            swarm.root.as_bytes(),
            swarm.hash_function,
            swarm.chunk_size,
            self.hs.params().addressing,
            extended,
            true,
        );
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
        _ctx: &mut Ctx<'_>,
        buf: &'b mut [u8],
    ) -> Option<DatagramWriter<'b>> {
        // Due once, whether or not it fits (`Handshake::poll_answer`).
        let budget = self.hs.poll_answer()?;
        let limit = budget.min(buf.len());
        let options = super::our_options(
            swarm.root.as_bytes(),
            swarm.hash_function,
            swarm.chunk_size,
            self.hs.params().addressing,
            self.hs.extended(),
            false,
        );
        let mut w = DatagramWriter::new(&mut buf[..limit], self.remote, self.hs.params()).ok()?;
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
        let mut w = DatagramWriter::new(buf, self.remote, self.hs.params()).ok()?;
        // Control messages stay within the configured datagram size; a DATA
        // may make the datagram as large as one chunk needs.
        w.set_limit(ctx.config.max_datagram);
        self.choke.poll_transmit(&mut w);
        let keepalive_due =
            ctx.now.saturating_since(self.last_send) >= ctx.config.keepalive_interval;
        // HAVEs ride on a datagram that goes out anyway, or get their own
        // once they have waited `have_interval`.
        let riding = self.down.owes_acks() || !w.is_empty() || self.hs.third_due() || keepalive_due;
        let haves_due =
            riding || ctx.now.saturating_since(self.ann.last_have()) >= ctx.config.have_interval;
        self.push_acks(swarm, &mut w);
        self.push_cancels(swarm, &mut w);
        if haves_due && self.haves_pending(swarm.have_log.len()) {
            self.push_haves(swarm, &mut w);
            self.ann.handle_haves_sent(ctx.now);
        }
        self.push_pex(swarm, ctx, &mut w);
        self.push_requests(swarm, ctx, &mut w);
        self.push_data(swarm, ctx, &mut w);
        if self.hs.poll_third(!w.is_empty() || keepalive_due) {
            Some(w)
        } else {
            None
        }
    }

    pub(super) fn specs_for<'s>(
        &self,
        swarm: &'s Swarm,
        range: ChunkRange,
    ) -> impl Iterator<Item = ChunkSpec> + 's {
        let len = swarm.integrity.content_len().unwrap_or(u64::MAX);
        self.hs
            .params()
            .addressing
            .specs_for(range, swarm.chunk_size, len)
    }

    pub(super) fn spec_for_chunk(&self, swarm: &Swarm, chunk: ChunkIndex) -> Option<ChunkSpec> {
        let mut specs = self.specs_for(swarm, ChunkRange::single(chunk)?);
        let s = specs.next()?;
        specs.next().is_none().then_some(s)
    }

    pub(super) fn spec_for_bin(&self, swarm: &Swarm, bin: Bin) -> Option<ChunkSpec> {
        match self.hs.params().addressing {
            ChunkAddressing::Bins32 | ChunkAddressing::Bins64 => Some(ChunkSpec::Bin(bin)),
            _ => self.specs_for(swarm, bin.chunks()?).next(),
        }
    }
}
