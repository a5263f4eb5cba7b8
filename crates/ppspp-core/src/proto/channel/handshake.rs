//! A channel's handshake (RFC 7574 §3.1, §8.4): where it stands, the
//! parameters the peer announced, our retransmissions, the answer and the
//! third datagram that are due, and the bytes counted against
//! amplification while the peer's address is unproven (§13.2.1).

use crate::proto::{Compat, EndpointConfig};
use crate::time::Instant;
use crate::wire::{HandshakeOptions, SwarmParams};

use super::options::Offer;

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

/// One channel's handshake.
#[derive(Debug)]
pub(crate) struct Handshake {
    state: State,
    /// How messages on this channel are sized: the peer's announced options.
    params: SwarmParams,
    /// Whether our handshakes carry options 8 and 9.
    extended_options: bool,
    attempts: u32,
    next: Instant,
    /// (Responder) our HANDSHAKE answer is due.
    reply_due: bool,
    /// (Initiator) the third datagram is due even if empty.
    third_due: bool,
    bytes_in: u64,
    bytes_out: u64,
    created: Instant,
}

impl Handshake {
    /// A handshake in `state`, begun at `now`.
    pub fn new(now: Instant, state: State, params: SwarmParams, extended: bool) -> Handshake {
        Handshake {
            state,
            params,
            extended_options: extended,
            attempts: 0,
            next: now,
            reply_due: false,
            third_due: false,
            bytes_in: 0,
            bytes_out: 0,
            created: now,
        }
    }

    /// Where the handshake stands.
    pub fn state(&self) -> State {
        self.state
    }

    /// How messages on the channel are written and read.
    pub fn params(&self) -> SwarmParams {
        self.params
    }

    /// Whether our handshakes carry options 8 and 9.
    pub fn extended(&self) -> bool {
        self.extended_options
    }

    /// When the channel was opened.
    pub fn created(&self) -> Instant {
        self.created
    }

    /// Whether the initiator's third datagram is still due.
    pub fn third_due(&self) -> bool {
        self.third_due
    }

    /// A datagram of `len` bytes came from the peer.
    pub fn handle_received(&mut self, len: usize) {
        self.bytes_in += len as u64;
    }

    /// A datagram of `len` bytes went to the peer.
    pub fn handle_sent(&mut self, len: usize) {
        self.bytes_out += len as u64;
    }

    /// (Responder) a HANDSHAKE opening the channel came with `offer`: our
    /// answer is due, with options 8 and 9 if the peer sent them (and we
    /// may, `compat`).
    pub fn handle_opening(&mut self, offer: &Offer, compat: Compat) {
        self.reply_due = true;
        self.extended_options = offer.extended && !matches!(compat, Compat::Libswift);
    }

    /// (Responder) the opening HANDSHAKE came again, adding `len` bytes to
    /// the budget. Returns whether our answer is due again (it was lost).
    pub fn handle_retransmission(&mut self, len: usize) -> bool {
        self.bytes_in += len as u64;
        if self.state == State::Responding {
            self.reply_due = true;
        }
        self.state == State::Responding
    }

    /// (Initiator) the peer accepted with `options` and `offer`: the third
    /// datagram is due.
    pub fn handle_answer(&mut self, options: &HandshakeOptions<'_>, offer: &Offer) {
        self.params.apply(options);
        self.params.addressing = offer.addressing;
        self.third_due = true;
    }

    /// Both sides know each other's channel.
    pub fn handle_established(&mut self) {
        self.state = State::Established;
    }

    /// (Initiator) whether a HANDSHAKE goes out now, and with options 8
    /// and 9 or not: after two unanswered tries the peer may be libswift,
    /// which cannot handle them (with `Compat::Auto`).
    pub fn poll_initiate(&mut self, now: Instant, cfg: &EndpointConfig) -> Option<bool> {
        if now < self.next || self.attempts >= cfg.handshake_attempts {
            return None;
        }
        if self.attempts >= 2 && matches!(cfg.compat, Compat::Auto) {
            self.extended_options = false;
        }
        Some(self.extended_options)
    }

    /// (Initiator) a HANDSHAKE went out at `now`: the next try backs off
    /// exponentially.
    pub fn handle_initiated(&mut self, now: Instant, cfg: &EndpointConfig) {
        self.attempts += 1;
        self.next = now + cfg.handshake_retry * 2u32.pow(self.attempts.min(10) - 1);
    }

    /// (Responder) the bytes our answer may take, if it is due. The answer
    /// is due once, whether or not it fits: a HANDSHAKE larger than the
    /// initiator's datagram waits for its retransmission, which adds to
    /// the budget and makes it due again. Left due, the channel would ask
    /// to be polled again at once, forever (issue 22).
    pub fn poll_answer(&mut self) -> Option<usize> {
        if !self.reply_due {
            return None;
        }
        let budget =
            usize::try_from(self.bytes_in.saturating_sub(self.bytes_out)).unwrap_or(usize::MAX);
        self.reply_due = false;
        Some(budget)
    }

    /// Whether a datagram goes out for the third step, even if empty;
    /// `sending` says one goes anyway. Either way the step is done.
    pub fn poll_third(&mut self, sending: bool) -> bool {
        let send = sending || self.third_due;
        if send {
            self.third_due = false;
        }
        send
    }

    /// The handshake's own deadline while not established: `now` when an
    /// answer is due, else the next retry or the half-open timeout.
    pub fn next_deadline(&self, cfg: &EndpointConfig, now: Instant) -> Option<Instant> {
        match self.state {
            State::Initiating => Some(self.next),
            State::Responding if self.reply_due => Some(now),
            State::Responding => Some(self.created + cfg.half_open_timeout),
            State::Established => None,
        }
    }

    /// Whether the handshake has failed by `now`: every try went
    /// unanswered, or the initiator never proved its address.
    pub fn timed_out(&self, now: Instant, cfg: &EndpointConfig) -> bool {
        match self.state {
            State::Initiating => now >= self.next && self.attempts >= cfg.handshake_attempts,
            State::Responding => now.saturating_since(self.created) >= cfg.half_open_timeout,
            State::Established => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ChunkAddressing;
    use std::time::Duration;

    fn cfg() -> EndpointConfig {
        EndpointConfig::default()
    }

    #[test]
    fn the_initiator_retries_with_backoff_then_gives_up() {
        let cfg = EndpointConfig {
            compat: Compat::Auto,
            ..cfg()
        };
        let t0 = Instant::ZERO;
        let mut h = Handshake::new(t0, State::Initiating, SwarmParams::default(), true);
        let mut t = t0;
        let mut sent = Vec::new();
        while !h.timed_out(t, &cfg) {
            if let Some(ext) = h.poll_initiate(t, &cfg) {
                sent.push((t, ext));
                h.handle_initiated(t, &cfg);
            }
            t = h.next_deadline(&cfg, t).unwrap();
        }
        let s = |n| Instant::ZERO + Duration::from_secs(n);
        let r = cfg.handshake_retry.as_secs();
        assert_eq!(sent.len() as u32, cfg.handshake_attempts);
        assert_eq!(sent[..3], [(s(0), true), (s(r), true), (s(3 * r), false)]);
    }

    #[test]
    fn the_answer_stays_within_what_the_initiator_sent() {
        let t0 = Instant::ZERO;
        let mut h = Handshake::new(t0, State::Responding, SwarmParams::default(), true);
        let offer = Offer {
            addressing: ChunkAddressing::ChunkRanges32,
            extended: false,
            window: None,
        };
        h.handle_received(100);
        h.handle_opening(&offer, Compat::Auto);
        assert!(!h.extended());
        assert_eq!(h.next_deadline(&cfg(), t0), Some(t0));
        assert_eq!(h.poll_answer(), Some(100));
        h.handle_sent(80);
        // Due once: the next deadline is the half-open timeout.
        assert_eq!(h.poll_answer(), None);
        assert_eq!(
            h.next_deadline(&cfg(), t0),
            Some(t0 + cfg().half_open_timeout)
        );
        assert!(h.handle_retransmission(30));
        assert_eq!(h.poll_answer(), Some(50));
        assert!(h.timed_out(t0 + cfg().half_open_timeout, &cfg()));
        h.handle_established();
        assert!(!h.handle_retransmission(30));
        assert_eq!(h.next_deadline(&cfg(), t0), None);
    }

    #[test]
    fn an_accepted_answer_makes_the_third_datagram_due() {
        let t0 = Instant::ZERO;
        let mut h = Handshake::new(t0, State::Initiating, SwarmParams::default(), true);
        let opts = HandshakeOptions::default();
        let offer = Offer {
            addressing: ChunkAddressing::Bins32,
            extended: true,
            window: None,
        };
        h.handle_answer(&opts, &offer);
        h.handle_established();
        assert_eq!(h.params().addressing, ChunkAddressing::Bins32);
        assert!(h.third_due());
        assert!(h.poll_third(false));
        assert!(!h.poll_third(false));
        assert!(h.poll_third(true));
    }
}
