//! What became of every peer a downloading node tried, from the node's
//! events, so that a download that gets nothing says why and names the
//! peers: nobody answered the handshake (a wrong address, a closed port, an
//! unreachable host), peers answered but refused the swarm (a wrong swarm
//! id), or peers took us on but sent nothing (the idle timeout). A peer
//! given to the node that refused, went silent or left is tried again with
//! backoff: a refusal may only mean the peer was full for a moment (a flood
//! of handshakes), and a seeder may come back.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ppspp_core::proto::address::AddressRefusal;
use ppspp_core::proto::{CloseReason, Event, ProtocolViolation};

use super::progress::human_duration;

/// Peers named in one part of a message; the rest are counted.
const NAMED: usize = 4;

/// The first wait before trying a failed peer again; it doubles per try.
const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest wait between tries.
const MAX_RETRY: Duration = Duration::from_secs(30);

/// Where we stand with one peer.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Fate {
    /// Our handshake is out, unanswered so far.
    Trying,
    /// The handshake completed; the channel is open.
    Connected,
    /// Our handshake went unanswered through every retry.
    NoAnswer,
    /// The peer refused our handshake: it does not have the swarm, or has
    /// no room, or cannot use our options.
    Refused,
    /// The peer answered with options we cannot accept.
    Incompatible(ProtocolViolation),
    /// The address is this node's own (our handshake came back to us).
    Own,
    /// The address cannot be a peer (broadcast, multicast, …).
    Unusable(AddressRefusal),
    /// The channel was open, then ended.
    Left(CloseReason),
}

/// When a failed peer given to the node is tried next.
#[derive(Clone, Copy, Debug)]
struct Retry {
    /// Tries so far since the peer last answered.
    tries: u32,
    /// When the next one is due (`None`: not scheduled).
    due: Option<Instant>,
}

/// The peers a node tried or heard from, and what became of them.
#[derive(Debug)]
pub struct Contacts {
    peers: BTreeMap<SocketAddr, Fate>,
    /// The peers given to the node, tried again when they fail.
    given: BTreeMap<SocketAddr, Retry>,
    /// Whether any handshake ever completed (ours or a peer's).
    answered: bool,
    /// How long a handshake is retried, for the message; until then (and
    /// while no peer ever answered) failed peers are tried again.
    connect_timeout: Duration,
    started: Instant,
}

impl Contacts {
    /// Contacts for a node that sends a handshake to each of `peers` at
    /// `started` and gives up on one after `connect_timeout`.
    pub fn new(peers: &[SocketAddr], connect_timeout: Duration, started: Instant) -> Contacts {
        let fresh = Retry {
            tries: 0,
            due: None,
        };
        Contacts {
            peers: peers.iter().map(|p| (*p, Fate::Trying)).collect(),
            given: peers.iter().map(|p| (*p, fresh)).collect(),
            answered: false,
            connect_timeout,
            started,
        }
    }

    /// The given peers whose next try is due at `now`: the caller connects
    /// to them again. Each becomes "trying" until its handshake ends.
    pub fn due(&mut self, now: Instant) -> Vec<SocketAddr> {
        let mut due = Vec::new();
        for (peer, retry) in &mut self.given {
            if retry.due.is_some_and(|t| t <= now) {
                retry.due = None;
                retry.tries += 1;
                due.push(*peer);
            }
        }
        for peer in &due {
            self.peers.insert(*peer, Fate::Trying);
        }
        due
    }

    /// Whether some failed peer will be tried again.
    pub fn retrying(&self) -> bool {
        self.given.values().any(|r| r.due.is_some())
    }

    /// Schedules the next try of a given peer that just failed: after a
    /// backoff that doubles per try. Before any peer answered, only tries
    /// that start within the handshake budget, so that a wrong address or
    /// swarm id still fails the download within `connect_timeout`.
    fn schedule(&mut self, peer: SocketAddr, now: Instant) {
        let Some(retry) = self.given.get_mut(&peer) else {
            return;
        };
        let wait = FIRST_RETRY
            .saturating_mul(1 << retry.tries.min(5))
            .min(MAX_RETRY);
        let in_budget = self.answered || now + wait < self.started + self.connect_timeout;
        // A peer dropped for bad data or a protocol breach is not asked
        // back; nor is one we closed ourselves.
        let retryable = match self.peers.get(&peer) {
            Some(Fate::NoAnswer | Fate::Refused) => true,
            Some(Fate::Left(r)) => !matches!(
                r,
                CloseReason::BadData | CloseReason::Protocol(_) | CloseReason::Local
            ),
            _ => false,
        };
        if retryable && in_budget {
            retry.due = Some(now + wait);
        }
    }

    /// Follows one of the node's events, seen at `now`.
    pub fn on_event(&mut self, event: &Event, now: Instant) {
        match event {
            Event::Connected { peer, .. } => self.connected(*peer),
            Event::PeerAddress { addr, .. } => self.learned(*addr),
            Event::Closed { peer, reason, .. } => {
                self.closed(*peer, reason);
                self.schedule(*peer, now);
            }
            _ => {}
        }
    }

    /// A handshake with `peer` completed (ours or its own).
    fn connected(&mut self, peer: SocketAddr) {
        self.answered = true;
        self.peers.insert(peer, Fate::Connected);
        if let Some(retry) = self.given.get_mut(&peer) {
            retry.tries = 0;
        }
    }

    /// `peer` was learned through PEX: the endpoint opens a channel to it.
    fn learned(&mut self, peer: SocketAddr) {
        let fate = self.peers.entry(peer).or_insert(Fate::Trying);
        if *fate != Fate::Connected {
            *fate = Fate::Trying;
        }
    }

    /// The channel with `peer` ended.
    fn closed(&mut self, peer: SocketAddr, reason: &CloseReason) {
        // Channels peers opened to us that never completed are nobody we
        // tried: not worth a word.
        let Some(fate) = self.peers.get_mut(&peer) else {
            return;
        };
        *fate = match (&*fate, reason) {
            (Fate::Connected, r) => Fate::Left(r.clone()),
            (_, CloseReason::HandshakeTimeout) => Fate::NoAnswer,
            (_, CloseReason::Refused) => Fate::Refused,
            (_, CloseReason::Protocol(why)) => Fate::Incompatible(why.clone()),
            (_, CloseReason::OwnAddress) => Fate::Own,
            (_, CloseReason::Unusable(why)) => Fate::Unusable(*why),
            (_, r) => Fate::Left(r.clone()),
        };
    }

    /// Whether every peer tried has failed its handshake and none ever
    /// answered. With no try left ([`Contacts::retrying`]), nothing can
    /// arrive now (short of a peer finding us), so there is no point
    /// waiting for the idle timeout.
    pub fn all_failed(&self) -> bool {
        !self.answered
            && !self.peers.is_empty()
            && self.peers.values().all(|f| {
                matches!(
                    f,
                    Fate::NoAnswer
                        | Fate::Refused
                        | Fate::Incompatible(_)
                        | Fate::Own
                        | Fate::Unusable(_)
                )
            })
    }

    /// Why nothing could be downloaded when [`Contacts::all_failed`]: one
    /// clause per kind of failure, naming the peers.
    pub fn failure(&self, swarm_id: &str) -> String {
        let no_answer = self.with(|f| *f == Fate::NoAnswer);
        let refused = self.with(|f| *f == Fate::Refused);
        let headline = match (no_answer.is_empty(), refused.is_empty()) {
            (false, true) => "no peer answered",
            (true, false) => "no peer has this swarm",
            _ => "no peer could serve this swarm",
        };
        format!("{headline}: {}", self.clauses(swarm_id))
    }

    /// Why a download made no progress for `idle` while it had peers:
    /// `stalled_at` says how far it got in this run (`None`: nothing
    /// arrived).
    pub fn idle(&self, idle: Duration, stalled_at: Option<String>, swarm_id: &str) -> String {
        let headline = match stalled_at {
            None => format!("no data in {}", human_duration(idle)),
            Some(at) => format!(
                "download stalled at {at}: no data for {}",
                human_duration(idle)
            ),
        };
        let clauses = self.clauses(swarm_id);
        if clauses.is_empty() {
            format!("{headline} and no peer connected")
        } else {
            format!("{headline}: {clauses}")
        }
    }

    /// One clause per group of peers with the same fate.
    fn clauses(&self, swarm_id: &str) -> String {
        let mut parts = Vec::new();
        let connected = self.with(|f| *f == Fate::Connected);
        if !connected.is_empty() {
            parts.push(format!(
                "{} answered but sent no chunk (it may have none yet, or be serving others)",
                names(&connected)
            ));
        }
        let left = self.with(|f| matches!(f, Fate::Left(_)));
        if !left.is_empty() {
            parts.push(format!("{} closed the connection", names(&left)));
        }
        let trying = self.with(|f| *f == Fate::Trying);
        if !trying.is_empty() {
            parts.push(format!("{} did not answer yet", names(&trying)));
        }
        let no_answer = self.with(|f| *f == Fate::NoAnswer);
        if !no_answer.is_empty() {
            parts.push(format!(
                "no answer from {} to the handshake within {} (is a ppspp node serving \
                 the swarm there, and does UDP reach it?)",
                names(&no_answer),
                human_duration(self.connect_timeout)
            ));
        }
        let refused = self.with(|f| *f == Fate::Refused);
        if !refused.is_empty() {
            parts.push(format!(
                "{} refused swarm {swarm_id} (it does not have it: check the swarm id, chunk \
                 size and hash function in the URL; or it has no room for more peers)",
                names(&refused)
            ));
        }
        let own = self.with(|f| *f == Fate::Own);
        if !own.is_empty() {
            parts.push(format!("{} is this node's own address", names(&own)));
        }
        for (peer, fate) in &self.peers {
            match fate {
                Fate::Incompatible(why) => {
                    parts.push(format!("{peer} answered with options we cannot use: {why}"))
                }
                Fate::Unusable(why) => parts.push(format!("{peer} cannot be a peer ({why})")),
                _ => {}
            }
        }
        parts.join("; ")
    }

    fn with(&self, pick: impl Fn(&Fate) -> bool) -> Vec<SocketAddr> {
        self.peers
            .iter()
            .filter(|(_, f)| pick(f))
            .map(|(p, _)| *p)
            .collect()
    }
}

/// "A", "A and B", "A, B, C and D", "A, B, C, D and 3 others".
fn names(peers: &[SocketAddr]) -> String {
    let shown: Vec<String> = peers.iter().take(NAMED).map(|p| p.to_string()).collect();
    let rest = peers.len().saturating_sub(NAMED);
    match (shown.as_slice(), rest) {
        ([], _) => String::new(),
        ([one], 0) => one.clone(),
        (all, 0) => format!(
            "{} and {}",
            all[..all.len() - 1].join(", "),
            all[all.len() - 1]
        ),
        (all, n) => format!(
            "{} and {}",
            all.join(", "),
            super::progress::count(n, "other", "others")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    #[test]
    fn no_answer_and_refusal_are_told_apart() {
        let mut c = Contacts::new(&[addr(1), addr(2)], Duration::from_secs(15), Instant::now());
        assert!(!c.all_failed());
        c.closed(addr(1), &CloseReason::HandshakeTimeout);
        assert!(!c.all_failed(), "one peer still trying");
        c.closed(addr(2), &CloseReason::Refused);
        assert!(c.all_failed());
        let msg = c.failure("abcd");
        assert!(msg.starts_with("no peer could serve this swarm: "), "{msg}");
        assert!(msg.contains("no answer from 127.0.0.1:1 "), "{msg}");
        assert!(msg.contains("127.0.0.1:2 refused swarm abcd"), "{msg}");
    }

    #[test]
    fn an_answer_means_waiting_for_data() {
        let mut c = Contacts::new(&[addr(1)], Duration::from_secs(15), Instant::now());
        c.connected(addr(1));
        c.closed(addr(1), &CloseReason::ClosedByPeer);
        assert!(!c.all_failed());
        let msg = c.idle(Duration::from_secs(60), None, "abcd");
        assert_eq!(msg, "no data in 60 s: 127.0.0.1:1 closed the connection");
    }

    #[test]
    fn a_peer_learned_through_pex_is_waited_for() {
        let mut c = Contacts::new(&[addr(1)], Duration::from_secs(15), Instant::now());
        c.learned(addr(2));
        c.closed(addr(1), &CloseReason::HandshakeTimeout);
        assert!(!c.all_failed());
        // Closings of channels peers opened to us are nobody we tried.
        c.closed(addr(3), &CloseReason::HandshakeTimeout);
        c.closed(addr(2), &CloseReason::HandshakeTimeout);
        assert!(c.all_failed());
        assert!(!c.failure("abcd").contains("127.0.0.1:3"));
    }

    /// The peer fails at `now` for `reason`, as the node's event says.
    fn fail(c: &mut Contacts, peer: SocketAddr, reason: CloseReason, now: Instant) {
        c.closed(peer, &reason);
        c.schedule(peer, now);
    }

    #[test]
    fn a_refusing_peer_is_tried_again_with_backoff_within_the_budget() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut c = Contacts::new(&[addr(1)], s(15), t0);
        fail(&mut c, addr(1), CloseReason::Refused, t0);
        assert!(c.all_failed() && c.retrying());
        assert!(c.due(t0 + Duration::from_millis(999)).is_empty());
        assert_eq!(c.due(t0 + s(1)), [addr(1)]);
        assert!(!c.all_failed(), "trying again");
        // 1, 2, 4 s apart; the next (8 s) would start at 15 s: none.
        fail(&mut c, addr(1), CloseReason::Refused, t0 + s(1));
        assert!(c.due(t0 + s(2)).is_empty());
        assert_eq!(c.due(t0 + s(3)), [addr(1)]);
        fail(&mut c, addr(1), CloseReason::HandshakeTimeout, t0 + s(3));
        assert_eq!(c.due(t0 + s(7)), [addr(1)]);
        fail(&mut c, addr(1), CloseReason::Refused, t0 + s(7));
        assert!(!c.retrying());
        assert!(c.all_failed());
    }

    #[test]
    fn a_peer_that_answered_once_is_tried_again_for_as_long_as_it_takes() {
        let t0 = Instant::now();
        let s = Duration::from_secs;
        let mut c = Contacts::new(&[addr(1), addr(2)], s(15), t0);
        c.connected(addr(1));
        let mut now = t0 + s(100);
        fail(&mut c, addr(1), CloseReason::ClosedByPeer, now);
        let mut waits = Vec::new();
        for _ in 0..8 {
            let next = (1..=60).map(|k| now + s(k)).find(|t| !c.due(*t).is_empty());
            let next = next.expect("tried again");
            waits.push((next - now).as_secs());
            now = next;
            fail(&mut c, addr(1), CloseReason::Refused, now);
        }
        assert_eq!(waits, [1, 2, 4, 8, 16, 30, 30, 30]);
        // A peer that sent bad data is not asked back.
        c.connected(addr(2));
        fail(&mut c, addr(2), CloseReason::BadData, now);
        assert!(!c.due(now + s(3600)).contains(&addr(2)));
    }

    #[test]
    fn long_lists_are_cut() {
        let peers: Vec<SocketAddr> = (1..=6).map(addr).collect();
        assert_eq!(
            names(&peers),
            "127.0.0.1:1, 127.0.0.1:2, 127.0.0.1:3, 127.0.0.1:4 and 2 others"
        );
        assert_eq!(names(&peers[..2]), "127.0.0.1:1 and 127.0.0.1:2");
        assert_eq!(names(&peers[..1]), "127.0.0.1:1");
    }
}
