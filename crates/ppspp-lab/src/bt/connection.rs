//! One BitTorrent connection as a peer keeps it: the transport link, the
//! four BEP 3 flags, the peer's pieces, the requests each way, and the
//! recent rates the choker ranks by.

use std::collections::VecDeque;

use ppspp_core::time::Instant;

use super::transport::Link;
use super::wire::{BlockRef, Message};
use crate::packet::HostId;

/// Bytes moved in this choking round and the one before: mainline ranks
/// by a rate over about 20 s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateWindow {
    cur: u64,
    prev: u64,
}

impl RateWindow {
    /// `n` bytes moved.
    pub fn add(&mut self, n: u64) {
        self.cur += n;
    }

    /// A round ended.
    pub fn roll(&mut self) {
        self.prev = self.cur;
        self.cur = 0;
    }

    /// Bytes over the last two rounds.
    pub fn recent(&self) -> u64 {
        self.cur + self.prev
    }
}

/// A connection and what is known about the peer on it.
#[derive(Debug)]
pub struct Connection {
    /// The peer's host.
    pub remote: HostId,
    /// The transport.
    pub link: Link,
    /// We opened it.
    pub initiator: bool,
    /// When it was started (for the connect timeout).
    pub started: Instant,
    /// Our handshake is written.
    pub sent_handshake: bool,
    /// The peer's handshake arrived.
    pub got_handshake: bool,
    /// The peer's pieces, from its bitfield and haves.
    pub pieces: Vec<bool>,
    /// We choke it (BEP 3: connections start choked and not interested).
    pub am_choking: bool,
    /// We are interested in it.
    pub am_interested: bool,
    /// It chokes us.
    pub peer_choking: bool,
    /// It is interested in us.
    pub peer_interested: bool,
    /// Our requests to it, not yet answered.
    pub asked: Vec<BlockRef>,
    /// Its requests to us, not yet written.
    pub requests: VecDeque<BlockRef>,
    /// Piece bytes it sent us.
    pub down: RateWindow,
    /// Piece bytes we wrote to it.
    pub up: RateWindow,
    /// We closed it (a duplicate, or the peer closed).
    pub closing: bool,
}

impl Connection {
    /// A connection to `remote` over `link`, for content of `pieces`
    /// pieces.
    pub fn new(remote: HostId, link: Link, initiator: bool, now: Instant, pieces: u32) -> Self {
        Connection {
            remote,
            link,
            initiator,
            started: now,
            sent_handshake: false,
            got_handshake: false,
            pieces: vec![false; pieces as usize],
            am_choking: true,
            am_interested: false,
            peer_choking: true,
            peer_interested: false,
            asked: Vec::new(),
            requests: VecDeque::new(),
            down: RateWindow::default(),
            up: RateWindow::default(),
            closing: false,
        }
    }

    /// Writes `m` to the peer.
    pub fn send(&mut self, m: &Message) {
        let (data, len) = m.encode();
        self.link.write(len, data);
    }

    /// Both handshakes are through and it is not closing: messages may
    /// flow.
    pub fn is_ready(&self) -> bool {
        self.sent_handshake && self.got_handshake && !self.closing
    }

    /// Ends it: our stream is closed; what we asked for is returned to
    /// `unask`, and the peer's pieces stop counting (`gone`).
    pub fn close(&mut self, unask: &mut dyn FnMut(&BlockRef), gone: &mut dyn FnMut(&[bool])) {
        if self.closing {
            return;
        }
        self.closing = true;
        for b in self.asked.drain(..) {
            unask(&b);
        }
        self.requests.clear();
        if self.got_handshake {
            gone(&self.pieces);
        }
        if self.sent_handshake || self.link.is_open() {
            self.link.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_cover_two_rounds() {
        let mut r = RateWindow::default();
        r.add(10);
        r.roll();
        r.add(5);
        assert_eq!(r.recent(), 15);
        r.roll();
        assert_eq!(r.recent(), 5);
        r.roll();
        assert_eq!(r.recent(), 0);
    }
}
