//! What became of every peer a downloading node tried, from the node's
//! events, so that a download that gets nothing says why and names the
//! peers: nobody answered the handshake (a wrong address, a closed port, an
//! unreachable host), peers answered but refused the swarm (a wrong swarm
//! id), or peers took us on but sent nothing (the idle timeout).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use ppspp_core::proto::{CloseReason, Event};

use super::progress::human_duration;

/// Peers named in one part of a message; the rest are counted.
const NAMED: usize = 4;

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
    Incompatible(String),
    /// The address is this node's own (our handshake came back to us).
    Own,
    /// The channel was open, then ended.
    Left(CloseReason),
}

/// The peers a node tried or heard from, and what became of them.
#[derive(Debug)]
pub struct Contacts {
    peers: BTreeMap<SocketAddr, Fate>,
    /// Whether any handshake ever completed (ours or a peer's).
    answered: bool,
    /// How long a handshake is retried, for the message.
    connect_timeout: Duration,
}

impl Contacts {
    /// Contacts for a node that sends a handshake to each of `peers` and
    /// gives up on one after `connect_timeout`.
    pub fn new(peers: &[SocketAddr], connect_timeout: Duration) -> Contacts {
        Contacts {
            peers: peers.iter().map(|p| (*p, Fate::Trying)).collect(),
            answered: false,
            connect_timeout,
        }
    }

    /// Follows one of the node's events.
    pub fn on_event(&mut self, event: &Event) {
        match event {
            Event::Connected { peer, .. } => self.connected(*peer),
            Event::PeerAddress { addr, .. } => self.learned(*addr),
            Event::Closed { peer, reason, .. } => self.closed(*peer, reason),
            _ => {}
        }
    }

    /// A handshake with `peer` completed (ours or its own).
    fn connected(&mut self, peer: SocketAddr) {
        self.answered = true;
        self.peers.insert(peer, Fate::Connected);
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
            (_, r) => Fate::Left(r.clone()),
        };
    }

    /// Whether every peer tried has failed its handshake and none ever
    /// answered: nothing can arrive now (short of a peer finding us), so
    /// there is no point waiting for the idle timeout.
    pub fn all_failed(&self) -> bool {
        !self.answered
            && !self.peers.is_empty()
            && self.peers.values().all(|f| {
                matches!(
                    f,
                    Fate::NoAnswer | Fate::Refused | Fate::Incompatible(_) | Fate::Own
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
            if let Fate::Incompatible(why) = fate {
                parts.push(format!("{peer} answered with options we cannot use: {why}"));
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
        let mut c = Contacts::new(&[addr(1), addr(2)], Duration::from_secs(15));
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
        let mut c = Contacts::new(&[addr(1)], Duration::from_secs(15));
        c.connected(addr(1));
        c.closed(addr(1), &CloseReason::ClosedByPeer);
        assert!(!c.all_failed());
        let msg = c.idle(Duration::from_secs(60), None, "abcd");
        assert_eq!(msg, "no data in 60 s: 127.0.0.1:1 closed the connection");
    }

    #[test]
    fn a_peer_learned_through_pex_is_waited_for() {
        let mut c = Contacts::new(&[addr(1)], Duration::from_secs(15));
        c.learned(addr(2));
        c.closed(addr(1), &CloseReason::HandshakeTimeout);
        assert!(!c.all_failed());
        // Closings of channels peers opened to us are nobody we tried.
        c.closed(addr(3), &CloseReason::HandshakeTimeout);
        c.closed(addr(2), &CloseReason::HandshakeTimeout);
        assert!(c.all_failed());
        assert!(!c.failure("abcd").contains("127.0.0.1:3"));
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
