//! What a channel keeps to download from its peer: the peer's chunks, our
//! outstanding requests and their timers, the request window and round
//! trip, the ACKs we owe, and what pausing and skipping picks remembers
//! (RFC 7574 §3.2–3.8).

use crate::binmap::Binmap;
use crate::cc::{CongestionController, RttEstimator};
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::pick::fast_peers::LinkEstimate;
use crate::pick::DryBlocks;
use crate::proto::requests::Outstanding;
use crate::proto::EndpointConfig;

use super::Outcome;

mod acks;
mod cancels;
mod data;
mod have_limits;
mod live;
mod remote_has;
mod requests;
use crate::time::Instant;
pub(super) use have_limits::refuse_have;
use std::time::Duration;

/// One channel's download side: inputs `handle_have` (`remote_has.rs`),
/// `handle_data` and `handle_hashes` (`data.rs`), `handle_timeout`;
/// outputs `poll_acks`, `poll_cancels`, `poll_requests` (`acks.rs`,
/// `cancels.rs`, `requests.rs`).
pub(crate) struct Download {
    /// Chunks the peer has (HAVE, ACK).
    remote_has: Binmap,
    remote_complete: bool,
    /// The chunk count the peer's peak hashes claimed, once they hashed up
    /// to the root: a bare-id download drops the peer if what verifies
    /// later shows the claim false (`PartialTree::refutes`).
    claimed: Option<u64>,
    outstanding: Outstanding,
    /// Requests that timed out and were given to other peers, to CANCEL
    /// here so the peer does not send them as well (RFC 7574 §3.8).
    expired: Vec<ChunkRange>,
    /// After a request timed out, no new requests until the peer answers
    /// or this instant: otherwise the freed chunk — for a streaming picker
    /// the most urgent one — goes straight back to the peer that did not
    /// answer, before any other peer may pick it.
    picks_paused_until: Instant,
    /// When the newest request the peer answered with DATA was sent.
    last_answered_sent: Instant,
    /// What we measure of the peer's link for the fast-peer set (seed
    /// paper 000 eq. 1), and whether the swarm last ranked it fast
    /// (`None`: no set).
    link: LinkEstimate,
    fast: Option<bool>,
    req_cc: Box<dyn CongestionController>,
    req_rtt: RttEstimator,
    acks: Vec<(ChunkRange, i64)>,
    /// When the oldest chunk of `acks` arrived (`None` while `acks` is
    /// empty).
    acks_since: Option<Instant>,
    /// The run of consecutive chunks our last ACKs covered, which the next
    /// ACK repeats (see `acks::reack`).
    ack_run: Option<ChunkRange>,
    /// After a pick that found nothing, the next is not before this,
    /// unless the peer announces a chunk we lack or the swarm gives back
    /// requested chunks (nothing else can make a pick find more): picking
    /// is the costly part of a datagram.
    pick_idle_until: Instant,
    /// How far into the swarm's `cancel_log` we have looked for chunks to
    /// CANCEL.
    cancel_cursor: usize,
    /// Blocks where this peer has nothing we could ask for.
    dry: DryBlocks,
    /// The swarm's `releases` at the last pick: `pick_idle_until` and
    /// `dry` hold only while it has not moved.
    releases_seen: u64,
    /// In a live swarm, the chunk `remote_has` was last cut to.
    live_trimmed: ChunkIndex,
    /// A live peer's discard window in chunks, from its handshake.
    peer_window: Option<u64>,
}

impl Download {
    /// Nothing known of the peer yet; requests steered by `req_cc`.
    pub fn new(
        now: Instant,
        req_cc: Box<dyn CongestionController>,
        cancel_log_len: usize,
    ) -> Download {
        Download {
            remote_has: Binmap::new(),
            remote_complete: false,
            claimed: None,
            outstanding: Outstanding::default(),
            expired: Vec::new(),
            picks_paused_until: Instant::ZERO,
            last_answered_sent: Instant::ZERO,
            link: LinkEstimate::default(),
            fast: None,
            req_cc,
            req_rtt: RttEstimator::default(),
            acks: Vec::new(),
            acks_since: None,
            ack_run: None,
            pick_idle_until: now,
            cancel_cursor: cancel_log_len,
            dry: DryBlocks::new(),
            releases_seen: 0,
            live_trimmed: ChunkIndex(0),
            peer_window: None,
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

    /// The download side's timers as seen at `now`: the oldest request's
    /// timeout, the next request deadline, the end of a pick pause.
    pub fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let mut t = Instant::MAX;
        if let Some(o) = self.outstanding.oldest() {
            t = t.min(o + self.request_timeout());
        }
        if let Some(d) = self.outstanding.next_deadline() {
            t = t.min(d);
        }
        if self.picks_paused_until > now {
            t = t.min(self.picks_paused_until);
        }
        (t != Instant::MAX).then_some(t)
    }

    /// The request timers at `now`: requests unanswered for the request
    /// timeout are released (and CANCELled here, RFC 7574 §3.8), requests
    /// past their deadline go out as `late`. What expired goes into `out`.
    pub fn handle_timeout(&mut self, now: Instant, mss: u64, out: &mut Outcome) {
        let released = &mut out.released;
        let before = released.len();
        let newest = self
            .outstanding
            .expire(now, self.request_timeout(), released);
        if let Some(sent) = newest {
            // A request the peer passed over while it answered one sent
            // after it was lost (its datagram, or in the peer's queue): a
            // loss, as TCP's fast retransmit takes one — the window halves.
            // Otherwise it is a timeout: the window restarts, the timer
            // backs off, and the peer is asked nothing new until it
            // answers.
            let lost: u64 = released[before..].iter().map(|r| r.len()).sum();
            if self.last_answered_sent > sent {
                self.req_cc.on_loss(now, lost * mss);
            } else {
                self.req_cc.on_timeout(now);
                self.req_rtt.on_timeout();
                self.picks_paused_until = now + self.request_timeout();
                self.link.on_silence();
            }
            self.expired.extend_from_slice(&released[before..]);
            self.link.on_lost(lost);
        }
        // Urgent requests past their deadline are asked of other peers as
        // well (seed paper 000 §III-C: "forward the same request to a
        // different peer"), without a timeout's penalties — this peer may
        // just be busy. They stay outstanding here; whichever copy arrives
        // second is cancelled (the endpoint marks them doubled).
        let before = released.len();
        if self.outstanding.pass_deadlines(now, released) > 0 {
            out.late.extend_from_slice(&out.released[before..]);
        }
    }

    /// Whether something is due at once: ACKs (`acks_due`), or CANCELs
    /// for requests that went to other peers.
    pub fn poll_due(&self, now: Instant, cfg: &EndpointConfig) -> bool {
        self.acks_due(now, cfg) || !self.expired.is_empty()
    }

    /// Whether the swarm ranked the peer fast (`None`: no set).
    pub fn fast(&self) -> Option<bool> {
        self.fast
    }

    /// The peer's chunks.
    pub fn remote_has(&self) -> &Binmap {
        &self.remote_has
    }

    /// Whether the peer has every chunk (counted once in the availability).
    pub fn remote_complete(&self) -> bool {
        self.remote_complete
    }

    /// The chunks we asked the peer for and wait for.
    pub fn outstanding(&self) -> &Outstanding {
        &self.outstanding
    }

    /// The peer choked us (RFC 7574 §3.9), or the channel ends: every
    /// outstanding request is void; their chunks are returned.
    pub fn clear_outstanding(&mut self) -> Binmap {
        self.outstanding.clear()
    }

    /// The chunk count the peer's peaks claimed.
    pub fn claimed(&self) -> Option<u64> {
        self.claimed
    }

    /// The next pick may find something: the swarm's state changed in a
    /// way the pick pause does not see (a player starts, say).
    pub fn handle_pick_news(&mut self) {
        self.pick_idle_until = Instant::ZERO;
    }

    /// The swarm's fast-peer set ranked the peer (`None`: no set).
    pub fn handle_fast(&mut self, fast: Option<bool>) {
        self.fast = fast;
    }

    /// Updates the link estimate's stability from the request round trip,
    /// and returns the peer's expected bandwidth (seed paper 000 eq. 1).
    pub fn poll_expected_bandwidth(&mut self) -> Option<f64> {
        let rtt = self.req_rtt.srtt().zip(self.req_rtt.rttvar());
        self.link.update_stability(rtt);
        self.link.expected_bandwidth(self.req_rtt.srtt())
    }
}

#[cfg(test)]
mod tests;
