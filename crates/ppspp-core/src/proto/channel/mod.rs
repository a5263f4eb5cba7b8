//! A channel: our side of the conversation with one peer in one swarm
//! (RFC 7574 §3.11), split into its handshake, what it receives and what it
//! sends.

mod announce;
mod handshake;
mod outcome;
mod recv;
mod send;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Duration;

use super::event::{CloseReason, PeerStats};
use super::pacer::Pacer;
use super::requests::Outstanding;
use super::sent::InFlight;
use super::upload::UploadQueue;
use super::{Ctx, EndpointConfig, SwarmHandle};
use crate::binmap::Binmap;
use crate::cc::{self, CongestionController, RttEstimator};
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::pick::fast_peers::LinkEstimate;
use crate::pick::DryBlocks;
use crate::time::Instant;
use crate::wire::{ChannelId, SwarmParams};

pub(crate) use handshake::{check_options, our_options};
pub(crate) use outcome::Outcome;

/// Where the handshake stands (RFC 7574 §3.1, §8.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    /// We sent the first HANDSHAKE and wait for the answer.
    Initiating,
    /// We answered a HANDSHAKE and wait for the third datagram, which proves
    /// the initiator's address: until then we send no more bytes than we
    /// received (no amplification) and no DATA.
    Responding,
    /// Both sides know each other's channel.
    Established,
}

/// One peer in one swarm.
pub(crate) struct Channel {
    pub local: ChannelId,
    pub remote: ChannelId,
    pub peer: SocketAddr,
    pub swarm: SwarmHandle,
    pub state: State,
    /// How messages on this channel are sized: the peer's announced options.
    pub params: SwarmParams,
    /// Whether our handshakes carry options 8 and 9.
    pub extended_options: bool,
    pub hs_attempts: u32,
    pub hs_next: Instant,
    /// (Responder) our HANDSHAKE answer is due.
    pub reply_due: bool,
    /// (Initiator) the third datagram is due even if empty.
    pub third_due: bool,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub created: Instant,
    pub last_recv: Instant,
    pub last_send: Instant,
    pub sent_since_recv: u32,

    /// Chunks the peer has (HAVE, ACK).
    pub remote_has: Binmap,
    pub remote_complete: bool,
    pub choked_by_remote: bool,
    pub choking_remote: bool,
    pub choke_dirty: bool,
    /// The peer's requests overflowed our upload queue: we void them with
    /// CHOKE and UNCHOKE in the next datagram (RFC 7574 §3.9), and ignore
    /// its requests until then.
    pub requests_voided: bool,
    /// When we last choked or unchoked the peer (slot rotation).
    pub choke_changed: Instant,
    /// Whether the peer has held one of our upload slots since it became
    /// interested (`choke`'s newcomers go first).
    pub had_slot: bool,
    /// When the peer last requested something from us.
    pub requested_at: Option<Instant>,

    /// The chunk count the peer's peak hashes claimed, once they hashed up
    /// to the root: a bare-id download drops the peer if what verifies
    /// later shows the claim false (`PartialTree::refutes`).
    pub claimed: Option<u64>,
    /// Downloading from the peer.
    pub outstanding: Outstanding,
    /// Requests that timed out and were given to other peers, to CANCEL
    /// here so the peer does not send them as well (RFC 7574 §3.8).
    pub expired: Vec<ChunkRange>,
    /// After a request timed out, no new requests until the peer answers
    /// or this instant: otherwise the freed chunk — for a streaming picker
    /// the most urgent one — goes straight back to the peer that did not
    /// answer, before any other peer may pick it.
    pub picks_paused_until: Instant,
    /// When the newest request the peer answered with DATA was sent.
    pub last_answered_sent: Instant,
    /// What the congestion controllers count per chunk ([`mss`]).
    pub mss: u64,
    /// What we measure of the peer's link for the fast-peer set (seed
    /// paper 000 eq. 1), and whether the swarm last ranked it fast
    /// (`None`: no set).
    pub link: LinkEstimate,
    pub fast: Option<bool>,
    pub req_cc: Box<dyn CongestionController>,
    pub req_rtt: RttEstimator,
    pub acks: Vec<(ChunkRange, i64)>,
    /// The run of consecutive chunks our last ACKs covered, which the next
    /// ACK repeats (see `send::reack`).
    pub ack_run: Option<ChunkRange>,
    /// Where the first sweep of HAVEs over what we had when the channel
    /// opened stands (`None` when done).
    pub have_sweep: Option<u64>,
    /// How far into the swarm's `have_log` we have sent HAVEs…
    pub have_cursor: usize,
    /// When HAVEs last went out (see `EndpointConfig::have_interval`).
    pub last_have: Instant,
    /// How far into the swarm's `cancel_log` we have looked for chunks to
    /// CANCEL.
    pub cancel_cursor: usize,
    pub pex_requested: bool,
    /// After a pick that found nothing, the next is not before this,
    /// unless the peer announces a chunk we lack or the swarm gives back
    /// requested chunks (nothing else can make a pick find more): picking
    /// is the costly part of a datagram.
    pub pick_idle_until: Instant,
    /// Blocks where this peer has nothing we could ask for.
    pub dry: DryBlocks,
    /// The swarm's `releases` at the last pick: `pick_idle_until` and
    /// `dry` hold only while it has not moved.
    pub releases_seen: u64,

    /// Uploading to the peer.
    pub uploads: UploadQueue,
    pub inflight: InFlight,
    pub cc: Box<dyn CongestionController>,
    pub rtt: RttEstimator,
    pub pacer: Pacer,
    /// Chunks whose hashes went out ahead of their DATA.
    pub ahead: BTreeSet<ChunkIndex>,
    /// When the pacer lets the next DATA go (for the timer).
    pub next_data_at: Instant,
    pub pex_reply_due: bool,

    pub stats: PeerStats,
    /// Set when the channel is to end; the endpoint removes it.
    pub close: Option<CloseReason>,
    /// Whether to tell the peer with a closing HANDSHAKE.
    pub close_notify: bool,
    /// Where the endpoint's schedule has this channel filed (see
    /// `schedule.rs`); `None` while it is due or has no timer.
    pub filed: Option<Instant>,
    /// Whether the channel is on its swarm's list of channels to wake when
    /// new chunks verify (it had no HAVE left to send when it settled).
    pub awaits_haves: bool,
    /// What the input being handled leaves for the endpoint; taken when
    /// the call returns.
    out: Outcome,
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
        } = o;
        let now = ctx.now;
        let mss = mss(chunk_size);
        let make = |c: &cc::CongestionControl| c.build(mss);
        Channel {
            local,
            remote: ChannelId::ZERO,
            peer,
            swarm,
            state,
            params,
            extended_options: !matches!(ctx.config.compat, super::Compat::Libswift),
            hs_attempts: 0,
            hs_next: now,
            reply_due: false,
            third_due: false,
            bytes_in: 0,
            bytes_out: 0,
            created: now,
            last_recv: now,
            last_send: now,
            sent_since_recv: 0,
            remote_has: Binmap::new(),
            remote_complete: false,
            choked_by_remote: false,
            choking_remote: false,
            choke_dirty: false,
            requests_voided: false,
            choke_changed: now,
            had_slot: false,
            requested_at: None,
            claimed: None,
            outstanding: Outstanding::default(),
            expired: Vec::new(),
            picks_paused_until: Instant::ZERO,
            last_answered_sent: Instant::ZERO,
            mss,
            link: LinkEstimate::default(),
            fast: None,
            req_cc: make(&ctx.config.request_congestion),
            req_rtt: RttEstimator::default(),
            acks: Vec::new(),
            ack_run: None,
            have_sweep: Some(0),
            have_cursor: have_log_len,
            last_have: now,
            cancel_cursor: cancel_log_len,
            pex_requested: false,
            pick_idle_until: now,
            dry: DryBlocks::new(),
            releases_seen: 0,
            uploads: UploadQueue::default(),
            inflight: InFlight::default(),
            cc: make(&ctx.config.congestion),
            rtt: RttEstimator::default(),
            pacer: Pacer::new(now),
            ahead: BTreeSet::new(),
            next_data_at: now,
            pex_reply_due: false,
            stats: PeerStats::default(),
            close: None,
            close_notify: false,
            filed: None,
            awaits_haves: false,
            out: Outcome::default(),
        }
    }

    /// Ends the channel for `reason`; `notify` sends a closing HANDSHAKE.
    pub fn close(&mut self, reason: CloseReason, notify: bool) {
        if self.close.is_none() {
            self.close = Some(reason);
            self.close_notify = notify && self.remote != ChannelId::ZERO;
        }
    }

    /// How long a request may stay unanswered before it is asked elsewhere:
    /// the request round trip's timeout *without* backoff. Backing off
    /// (RFC 6298 §5.5) protects a path from repeated retransmissions, but a
    /// released chunk goes to another peer, and the request window already
    /// shrinks on every expiry (`req_cc.on_timeout`). With the backoff, one
    /// unanswered request on a lossy channel held a chunk for up to
    /// `max_rto` (60 s) while other peers had it: a viewer in the E1
    /// scenario waited 110 s for one chunk.
    pub fn request_timeout(&self) -> Duration {
        self.req_rtt.base_rto().max(Duration::from_millis(500))
    }

    /// The next instant at which the channel has timer work or may send,
    /// as seen at `now`.
    pub fn next_deadline(
        &self,
        cfg: &EndpointConfig,
        now: Instant,
        swarm_have_log_len: usize,
    ) -> Option<Instant> {
        if self.close.is_some() {
            return Some(now);
        }
        let mut t = Instant::MAX;
        match self.state {
            State::Initiating => t = t.min(self.hs_next),
            State::Responding => {
                if self.reply_due {
                    return Some(now);
                }
                t = t.min(self.created + cfg.half_open_timeout);
            }
            State::Established => {
                if !self.acks.is_empty()
                    || self.third_due
                    || self.choke_dirty
                    || self.requests_voided
                    || !self.expired.is_empty()
                {
                    return Some(now);
                }
                t = t.min(self.last_send + cfg.keepalive_interval);
                if self.haves_pending(swarm_have_log_len) {
                    t = t.min(self.last_have + cfg.have_interval);
                }
                if self.sent_since_recv >= cfg.dead_datagrams {
                    t = t.min(self.last_recv + cfg.dead_timeout);
                }
                if let Some(o) = self.outstanding.oldest() {
                    t = t.min(o + self.request_timeout());
                }
                if let Some(d) = self.outstanding.next_deadline() {
                    t = t.min(d);
                }
                if self.picks_paused_until > now {
                    t = t.min(self.picks_paused_until);
                }
                if let Some(o) = self.inflight.oldest() {
                    t = t.min(o + self.rtt.rto());
                }
                // Paced DATA waiting for its time (not when the window or the
                // upload limit holds it: an ACK or the limiter wakes us then).
                if !self.uploads.is_empty() && self.next_data_at > now {
                    t = t.min(self.next_data_at);
                }
            }
        }
        (t != Instant::MAX).then_some(t)
    }

    /// Whether HAVEs wait to be sent to this peer.
    pub fn haves_pending(&self, have_log_len: usize) -> bool {
        !self.remote_complete && (self.have_sweep.is_some() || self.have_cursor < have_log_len)
    }

    /// Timers: handshake retries, dead peers, request and DATA timeouts.
    /// Request ranges that expired come back as `released`, those past
    /// their deadline as `late`.
    pub fn on_timeout(&mut self, ctx: &mut Ctx<'_>) -> Outcome {
        self.handle_timeout(ctx);
        std::mem::take(&mut self.out)
    }

    fn handle_timeout(&mut self, ctx: &mut Ctx<'_>) {
        let now = ctx.now;
        let cfg = ctx.config;
        match self.state {
            State::Initiating => {
                if now >= self.hs_next && self.hs_attempts >= cfg.handshake_attempts {
                    self.close(CloseReason::HandshakeTimeout, false);
                }
            }
            State::Responding => {
                if now.saturating_since(self.created) >= cfg.half_open_timeout {
                    self.close(CloseReason::HandshakeTimeout, false);
                }
            }
            State::Established => {
                if self.sent_since_recv >= cfg.dead_datagrams
                    && now.saturating_since(self.last_recv) >= cfg.dead_timeout
                {
                    self.close(CloseReason::Dead, false);
                    return;
                }
                let timeout = self.request_timeout();
                let released = &mut self.out.released;
                let before = released.len();
                let newest = self.outstanding.expire(now, timeout, released);
                if let Some(sent) = newest {
                    // A request the peer passed over while it answered one
                    // sent after it was lost (its datagram, or in the
                    // peer's queue): a loss, as TCP's fast retransmit takes
                    // one — the window halves. Otherwise it is a timeout:
                    // the window restarts, the timer backs off, and the
                    // peer is asked nothing new until it answers.
                    let lost: u64 = self.out.released[before..].iter().map(|r| r.len()).sum();
                    if self.last_answered_sent > sent {
                        self.req_cc.on_loss(now, lost * self.mss);
                    } else {
                        self.req_cc.on_timeout(now);
                        self.req_rtt.on_timeout();
                        self.picks_paused_until = now + self.request_timeout();
                        self.link.on_silence();
                    }
                    self.expired.extend_from_slice(&self.out.released[before..]);
                    self.link.on_lost(lost);
                }
                // Urgent requests past their deadline are asked of other
                // peers as well (seed paper 000 §III-C: "forward the same
                // request to a different peer"), without a timeout's
                // penalties — this peer may just be busy. They stay
                // outstanding here; whichever copy arrives second is
                // cancelled (the endpoint marks them doubled).
                let released = &mut self.out.released;
                let before = released.len();
                if self.outstanding.pass_deadlines(now, released) > 0 {
                    self.out.late.extend_from_slice(&released[before..]);
                }
                // The whole flight at once: see `InFlight::on_rto`.
                if self.inflight.on_rto(now, self.rtt.rto()) > 0 {
                    self.cc.on_timeout(now);
                    self.rtt.on_timeout();
                }
            }
        }
    }
}
