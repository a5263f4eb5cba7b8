//! A channel: our side of the conversation with one peer in one swarm
//! (RFC 7574 §3.11), as sub-state machines of one shape — `handle_*`
//! inputs, `poll_*` outputs, a `next_deadline` — each a struct with
//! private fields and unit tests beside it:
//!
//! - `handshake.rs`: where the handshake stands, the peer's parameters,
//!   retries, the answer and third datagram due, anti-amplification bytes
//!   (§3.1, §8.4, §13.2.1);
//! - `download/`: what the peer has, our requests and their timers, the
//!   request window, ACKs owed, CANCELs (§3.2–3.8);
//! - `upload/`: the peer's queued requests, DATA in flight, congestion
//!   window, pacing, hashes sent ahead (§3.4–3.5, §5);
//! - `announce/`: HAVEs we owe the peer, PEX (§3.2, §3.10);
//! - `choke.rs`: CHOKE / UNCHOKE both ways (§3.9).
//!
//! `recv.rs` dispatches a received datagram to the sub-states' `handle_*`
//! and `send.rs` fills the next one from their `poll_*`. What a sub-state
//! may use of the rest of the channel (the peer, its counters, how chunks
//! are named, the outcome) it gets as a [`Scope`] (`scope.rs`); what it
//! needs of another sub-state (what the peer has, who chokes whom) comes
//! in as an argument; a peer found at fault comes back as the
//! `CloseReason` to close with. `access.rs` is what the rest of the core
//! reads and sets, by method only; what the channel leaves for the
//! endpoint comes back as an [`Outcome`] (`outcome.rs`), built afresh for
//! each call. Unit tests of each sub-state sit beside it, on the small
//! swarms of `fixture.rs`.

mod access;
mod announce;
mod choke;
mod download;
#[cfg(test)]
mod fixture;
mod handshake;
mod options;
mod outcome;
mod recv;
mod scope;
mod send;
#[cfg(test)]
mod tests;
mod upload;

use std::net::SocketAddr;

use super::event::{CloseReason, PeerStats};
use super::{Ctx, EndpointConfig, SwarmHandle};
use crate::cc;
use crate::time::Instant;
use crate::wire::{ChannelId, SwarmParams};

use announce::Announce;
use choke::ChokeState;
use download::Download;
use handshake::Handshake;
use upload::Upload;

pub(crate) use handshake::State;
pub(crate) use options::{check_options, our_options, Offer};
pub(crate) use outcome::Outcome;
use scope::{Peer, Scope};

/// One peer in one swarm.
pub(crate) struct Channel {
    local: ChannelId,
    remote: ChannelId,
    /// Who the channel talks to, in which swarm, and what it exchanged.
    peer: Peer,
    /// The handshake, then the channel's parameters.
    hs: Handshake,
    last_recv: Instant,
    last_send: Instant,
    sent_since_recv: u32,
    /// CHOKE / UNCHOKE both ways.
    choke: ChokeState,
    /// Downloading from the peer.
    down: Download,
    /// Uploading to the peer.
    up: Upload,
    /// HAVEs and PEX for the peer.
    ann: Announce,
    /// Set when the channel is to end; the endpoint removes it.
    close: Option<CloseReason>,
    /// Whether to tell the peer with a closing HANDSHAKE.
    close_notify: bool,
    /// Where the endpoint's schedule has this channel filed (see
    /// `schedule.rs`); `None` while it is due or has no timer.
    filed: Option<Instant>,
    /// Whether the channel is on its swarm's list of channels to wake when
    /// new chunks verify (it had no HAVE left to send when it settled).
    awaits_haves: bool,
}

/// Lends the channel's peer, parameters and outcome to a sub-state: a
/// function of the fields it borrows, so the sub-states stay free to borrow.
fn scope<'a>(peer: &'a mut Peer, hs: &Handshake, out: &'a mut Outcome) -> Scope<'a> {
    Scope {
        peer,
        params: hs.params(),
        out,
    }
}

/// The MSS the congestion controllers count in: a DATA datagram of one
/// chunk with a few hashes.
pub(crate) fn mss(chunk_size: u32) -> u64 {
    u64::from(chunk_size) + 64
}

/// Who a new channel talks to, and how.
pub(crate) struct Opening {
    pub local: ChannelId,
    pub peer: SocketAddr,
    pub swarm: SwarmHandle,
    pub state: State,
    pub chunk_size: u32,
    pub params: SwarmParams,
    /// Where the swarm's have-log stands: HAVEs from there on are news.
    pub have_log_len: usize,
    /// Where the swarm's cancel-log stands.
    pub cancel_log_len: usize,
    /// Whether the swarm is a live stream (its HAVEs wait less:
    /// `EndpointConfig::live_have_interval`).
    pub live: bool,
}

impl Channel {
    pub fn new(ctx: &mut Ctx<'_>, o: Opening) -> Channel {
        let Opening {
            local,
            peer,
            swarm,
            state,
            chunk_size,
            params,
            have_log_len,
            cancel_log_len,
            live,
        } = o;
        let now = ctx.now;
        let mss = mss(chunk_size);
        let make = |c: &cc::CongestionControl| c.build(mss);
        let extended = !matches!(ctx.config.compat, super::Compat::Libswift);
        Channel {
            local,
            remote: ChannelId::ZERO,
            peer: Peer {
                addr: peer,
                swarm,
                mss,
                stats: PeerStats::default(),
            },
            hs: Handshake::new(now, state, params, extended),
            last_recv: now,
            last_send: now,
            sent_since_recv: 0,
            choke: ChokeState::new(now),
            down: Download::new(now, make(&ctx.config.request_congestion), cancel_log_len),
            up: Upload::new(now, make(&ctx.config.congestion)),
            ann: Announce::new(now, have_log_len, ctx.config.have_interval_for(live)),
            close: None,
            close_notify: false,
            filed: None,
            awaits_haves: false,
        }
    }

    /// Ends the channel for `reason`; `notify` sends a closing HANDSHAKE.
    pub fn close(&mut self, reason: CloseReason, notify: bool) {
        if self.close.is_none() {
            self.close = Some(reason);
            self.close_notify = notify && self.remote != ChannelId::ZERO;
        }
    }

    /// The next instant at which the channel has timer work or may send,
    /// as seen at `now`: the earliest of its sub-states' deadlines, or
    /// `now` while one of them has something due.
    pub fn next_deadline(
        &self,
        cfg: &EndpointConfig,
        now: Instant,
        swarm_have_log_len: usize,
    ) -> Option<Instant> {
        if self.close.is_some() {
            return Some(now);
        }
        if self.hs.state() != State::Established {
            return self.hs.next_deadline(cfg, now);
        }
        if self.down.poll_due(now, cfg) || self.hs.third_due() || self.choke.poll_due() {
            return Some(now);
        }
        let mut t = self.last_send + cfg.keepalive_interval;
        if let Some(ack) = self.down.ack_deadline(cfg) {
            t = t.min(ack);
        }
        if self.haves_pending(swarm_have_log_len) {
            t = t.min(self.ann.last_have() + self.ann.interval());
        }
        if let Some(held) = self.ann.held_due() {
            t = t.min(held.max(self.ann.last_have() + self.ann.interval()));
        }
        if self.sent_since_recv >= cfg.dead_datagrams {
            t = t.min(self.last_recv + cfg.dead_timeout);
        }
        for d in [self.down.next_deadline(now), self.up.next_deadline(now)] {
            t = t.min(d.unwrap_or(Instant::MAX));
        }
        (t != Instant::MAX).then_some(t)
    }

    /// Whether HAVEs wait to be sent to this peer (never to a peer that has
    /// everything, RFC 7574 §3.2).
    pub fn haves_pending(&self, have_log_len: usize) -> bool {
        !self.down.remote_complete() && self.ann.haves_pending(have_log_len)
    }

    /// Timers: handshake retries, dead peers, request and DATA timeouts.
    /// Request ranges that expired come back as `released`, those past
    /// their deadline as `late`.
    pub fn on_timeout(&mut self, ctx: &mut Ctx<'_>) -> Outcome {
        let mut out = Outcome::default();
        self.handle_timeout(ctx, &mut out);
        out
    }

    fn handle_timeout(&mut self, ctx: &mut Ctx<'_>, out: &mut Outcome) {
        let now = ctx.now;
        let cfg = ctx.config;
        if self.hs.state() != State::Established {
            if self.hs.timed_out(now, cfg) {
                self.close(CloseReason::HandshakeTimeout, false);
            }
            return;
        }
        if self.sent_since_recv >= cfg.dead_datagrams
            && now.saturating_since(self.last_recv) >= cfg.dead_timeout
        {
            self.close(CloseReason::Dead, false);
            return;
        }
        self.down.handle_timeout(now, self.peer.mss, out);
        self.up.handle_timeout(now);
    }
}
