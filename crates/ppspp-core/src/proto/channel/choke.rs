//! A channel's choking state, both ways (CHOKE / UNCHOKE, RFC 7574 §3.9):
//! whether we choke the peer and must say so, whether its requests were
//! voided, whether it chokes us. The policy that decides who is choked is
//! the endpoint's (`proto/choke`); this is what one channel remembers.

use std::time::Duration;

use crate::time::Instant;
use crate::wire::{DatagramWriter, Message};

/// Who chokes whom on one channel.
#[derive(Debug)]
pub(crate) struct ChokeState {
    /// We choke the peer: its requests are void.
    choking_remote: bool,
    /// `choking_remote` changed and the peer has not been told yet.
    dirty: bool,
    /// The peer's requests overflowed our upload queue: we void them with
    /// CHOKE and UNCHOKE in the next datagram (RFC 7574 §3.9), and ignore
    /// its requests until then.
    requests_voided: bool,
    /// When we last choked or unchoked the peer (slot rotation).
    changed: Instant,
    /// Whether the peer has held one of our upload slots since it became
    /// interested (`choke`'s newcomers go first).
    had_slot: bool,
    /// When the peer last requested something from us.
    requested_at: Option<Instant>,
    /// The peer chokes us: we ask it for nothing.
    choked_by_remote: bool,
}

impl ChokeState {
    /// Nobody choked, as a channel starts (RFC 7574 §3.9: unchoked is the
    /// default).
    pub fn new(now: Instant) -> ChokeState {
        ChokeState {
            choking_remote: false,
            dirty: false,
            requests_voided: false,
            changed: now,
            had_slot: false,
            requested_at: None,
            choked_by_remote: false,
        }
    }

    /// Whether we choke the peer.
    pub fn choking_remote(&self) -> bool {
        self.choking_remote
    }

    /// Whether the peer chokes us.
    pub fn choked_by_remote(&self) -> bool {
        self.choked_by_remote
    }

    /// Whether a choke change waits to be sent.
    pub fn dirty(&self) -> bool {
        self.dirty
    }

    /// When we last choked or unchoked the peer.
    pub fn changed(&self) -> Instant {
        self.changed
    }

    /// Whether the peer held a slot since it became interested.
    pub fn had_slot(&self) -> bool {
        self.had_slot
    }

    /// When the peer last requested something from us.
    pub fn requested_at(&self) -> Option<Instant> {
        self.requested_at
    }

    /// Whether CHOKE and UNCHOKE are due now (a change, or voided
    /// requests): the channel asks to be polled at once.
    pub fn poll_due(&self) -> bool {
        self.dirty || self.requests_voided
    }

    /// Chokes or unchokes the peer; returns whether that changed anything
    /// (a change is sent in the next datagram).
    pub fn handle_set(&mut self, choke: bool, now: Instant) -> bool {
        if self.choking_remote == choke {
            return false;
        }
        self.choking_remote = choke;
        self.dirty = true;
        self.changed = now;
        true
    }

    /// The peer no longer counts as having held a slot (it let its slot go
    /// idle: when it asks again it is a newcomer).
    pub fn handle_slot_forgotten(&mut self) {
        self.had_slot = false;
    }

    /// Notes that the peer holds a slot if it is unchoked.
    pub fn handle_slot_held(&mut self) {
        self.had_slot |= !self.choking_remote;
    }

    /// The peer requested something at `now`. Returns whether the choking
    /// policy should look again (interest begins, or comes back after the
    /// slot went idle for `idle`) and whether the request is void (a
    /// choked peer's are, and so are those that reach us before it hears
    /// the CHOKE that voids them).
    pub fn handle_request(&mut self, now: Instant, idle: Duration) -> (bool, bool) {
        let rechoke = self
            .requested_at
            .is_none_or(|at| now.saturating_since(at) >= idle);
        self.requested_at = Some(now);
        (rechoke, self.choking_remote || self.requests_voided)
    }

    /// Our upload queue overflowed: the peer's requests are voided.
    pub fn handle_overflow(&mut self) {
        self.requests_voided = true;
    }

    /// The peer sent CHOKE (`true`) or UNCHOKE (`false`).
    pub fn handle_remote(&mut self, choked: bool) {
        self.choked_by_remote = choked;
    }

    /// Writes what the peer must hear first in a datagram: CHOKE and
    /// UNCHOKE to void its requests, then our choke state if it changed.
    /// What does not fit stays due.
    pub fn poll_transmit(&mut self, w: &mut DatagramWriter<'_>) {
        if self.requests_voided
            && w.push(&Message::Choke).is_ok()
            && w.push(&Message::Unchoke).is_ok()
        {
            self.requests_voided = false;
        }
        if self.dirty {
            let m = if self.choking_remote {
                Message::Choke
            } else {
                Message::Unchoke
            };
            if w.push(&m).is_ok() {
                self.dirty = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{decode_datagram, ChannelId, SwarmParams};

    const IDLE: Duration = Duration::from_secs(5);

    fn written(c: &mut ChokeState) -> Vec<String> {
        let mut buf = [0u8; 64];
        let mut w = DatagramWriter::new(&mut buf, ChannelId(1), SwarmParams::default()).unwrap();
        c.poll_transmit(&mut w);
        let len = w.finish();
        let (_, msgs) = decode_datagram(&buf[..len], SwarmParams::default()).unwrap();
        msgs.map(|m| format!("{:?}", m.unwrap())).collect()
    }

    #[test]
    fn a_change_is_sent_once() {
        let t0 = Instant::ZERO;
        let mut c = ChokeState::new(t0);
        assert!(!c.poll_due());
        assert!(!c.handle_set(false, t0), "unchoked already");
        let t1 = t0 + Duration::from_secs(1);
        assert!(c.handle_set(true, t1));
        assert!(c.poll_due() && c.choking_remote());
        assert_eq!(c.changed(), t1);
        assert_eq!(written(&mut c), vec!["CHOKE"]);
        assert!(!c.poll_due());
        assert!(written(&mut c).is_empty());
    }

    #[test]
    fn voided_requests_get_choke_and_unchoke() {
        let t0 = Instant::ZERO;
        let mut c = ChokeState::new(t0);
        assert_eq!(c.handle_request(t0, IDLE), (true, false));
        c.handle_overflow();
        // Void until the peer hears CHOKE + UNCHOKE.
        assert_eq!(c.handle_request(t0, IDLE), (false, true));
        assert_eq!(written(&mut c), vec!["CHOKE", "UNCHOKE"]);
        assert_eq!(c.handle_request(t0, IDLE), (false, false));
    }

    #[test]
    fn interest_returning_after_idle_asks_for_a_rechoke() {
        let t0 = Instant::ZERO;
        let mut c = ChokeState::new(t0);
        assert!(c.handle_request(t0, IDLE).0);
        assert!(!c.handle_request(t0 + IDLE / 2, IDLE).0);
        assert!(c.handle_request(t0 + IDLE * 2, IDLE).0);
        assert_eq!(c.requested_at(), Some(t0 + IDLE * 2));
    }

    #[test]
    fn slots_are_remembered_while_unchoked() {
        let t0 = Instant::ZERO;
        let mut c = ChokeState::new(t0);
        c.handle_slot_held();
        assert!(c.had_slot());
        c.handle_slot_forgotten();
        c.handle_set(true, t0);
        c.handle_slot_held();
        assert!(!c.had_slot(), "a choked peer holds no slot");
        c.handle_remote(true);
        assert!(c.choked_by_remote());
    }
}
