//! What a channel keeps to tell its peer what we have and what we no
//! longer want: the first sweep of HAVEs and the cursor into the swarm's
//! have-log (RFC 7574 §3.2), and PEX (§3.10).

use std::collections::VecDeque;
use std::time::Duration;

use crate::chunk::ChunkRange;
use crate::time::Instant;

mod haves;
mod spread;

pub(crate) use spread::Spread;

/// Most held-back ranges a channel keeps (a live source's, see
/// `spread.rs`): a few per segment made within the hold. Past it fresh
/// chunks are announced at once.
const MAX_HELD: usize = 64;

/// One channel's announcements: inputs `handle_pex_request`,
/// `handle_resweep`, `handle_haves_sent`; outputs `poll_haves` and
/// `poll_pex` (`haves.rs`).
#[derive(Debug)]
pub(crate) struct Announce {
    /// Where the first sweep of HAVEs over what we had when the channel
    /// opened stands (`None` when done).
    have_sweep: Option<u64>,
    /// How far into the swarm's `have_log` we have sent HAVEs…
    have_cursor: usize,
    /// When HAVEs last went out.
    last_have: Instant,
    /// How long new HAVEs wait for a datagram to ride on
    /// (`EndpointConfig::have_interval_for`).
    interval: Duration,
    pex_requested: bool,
    pex_reply_due: bool,
    /// Where the peer stands among a live source's unchoked peers, when
    /// the source announces its fresh chunks in turns (`spread.rs`).
    spread: Option<Spread>,
    /// Fresh chunks held back from the peer, and when they are due.
    held: VecDeque<(Instant, ChunkRange)>,
}

impl Announce {
    /// Everything we have is news to the peer; the logs are read from
    /// where they stand.
    pub fn new(now: Instant, have_log_len: usize, interval: Duration) -> Announce {
        Announce {
            have_sweep: Some(0),
            have_cursor: have_log_len,
            last_have: now,
            interval,
            pex_requested: false,
            pex_reply_due: false,
            spread: None,
            held: VecDeque::new(),
        }
    }

    /// Sets where the peer stands among a live source's unchoked peers
    /// (`None`: it hears of every chunk at once).
    pub fn set_spread(&mut self, spread: Option<Spread>) {
        self.spread = spread;
    }

    /// When the first held-back chunks are due to be announced.
    pub fn held_due(&self) -> Option<Instant> {
        self.held.front().map(|&(t, _)| t)
    }

    /// Holds `range` back until `due`; false when too much is held
    /// already (then it is announced at once).
    fn hold(&mut self, due: Instant, range: ChunkRange) -> bool {
        if self.held.len() >= MAX_HELD {
            return false;
        }
        self.held.push_back((due, range));
        true
    }

    /// Whether HAVEs wait to be sent (to a peer that lacks chunks), with
    /// the swarm's have-log at `have_log_len`.
    pub fn haves_pending(&self, have_log_len: usize) -> bool {
        self.have_sweep.is_some() || self.have_cursor < have_log_len
    }

    /// When HAVEs last went out.
    pub fn last_have(&self) -> Instant {
        self.last_have
    }

    /// How long new HAVEs wait for a datagram to ride on.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// HAVEs went out at `now`.
    pub fn handle_haves_sent(&mut self, now: Instant) {
        self.last_have = now;
    }

    /// Our answer to the peer's HANDSHAKE was lost, and the HAVEs that
    /// rode on it: sweep again, or the initiator never learns what we have
    /// (a complete seeder announces nothing else).
    pub fn handle_resweep(&mut self) {
        self.have_sweep = Some(0);
    }

    /// The peer asked for addresses (PEX_REQ).
    pub fn handle_pex_request(&mut self) {
        self.pex_reply_due = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binmap::Binmap;
    use crate::proto::channel::fixture::{self, peer, scope, seeder, written};
    use crate::proto::channel::Outcome;

    #[test]
    fn haves_are_pending_until_swept_and_caught_up() {
        let mut a = Announce::new(Instant::ZERO, 3, Duration::ZERO);
        assert!(a.haves_pending(3), "the first sweep");
        a.have_sweep = None;
        assert!(!a.haves_pending(3));
        assert!(a.haves_pending(4), "a chunk verified since");
        a.handle_resweep();
        assert!(a.haves_pending(3));
        a.handle_pex_request();
        assert!(a.pex_reply_due);
    }

    #[test]
    fn the_first_sweep_announces_what_we_have_once_and_never_to_a_complete_peer() {
        let swarm = seeder();
        let (mut p, mut out) = (peer(), Outcome::default());
        let sc = &scope(&mut p, &mut out);
        let nothing = Binmap::new();
        let mut a = Announce::new(Instant::ZERO, swarm.have_log.len(), Duration::ZERO);
        let sent = written(|w| a.poll_haves(Instant::ZERO, &swarm, sc, (&nothing, false), w));
        assert_eq!(sent, ["HAVE(chunks 0..=7)"]);
        assert!(!a.haves_pending(swarm.have_log.len()));
        assert!(
            written(|w| a.poll_haves(Instant::ZERO, &swarm, sc, (&nothing, false), w)).is_empty()
        );
        let mut all = Binmap::new();
        all.set(crate::chunk::ChunkRange::new(0, fixture::CHUNKS - 1).unwrap());
        let mut b = Announce::new(Instant::ZERO, swarm.have_log.len(), Duration::ZERO);
        assert!(written(|w| b.poll_haves(Instant::ZERO, &swarm, sc, (&all, true), w)).is_empty());
        assert!(!b.haves_pending(swarm.have_log.len()));
    }

    /// The fixture's 8 chunks are the first part of a segment split in 4
    /// (8 chunks a part): rank 0 of 4 hears of them first, rank 1 only
    /// after the hold.
    #[test]
    fn a_spread_holds_back_the_parts_a_peer_hears_of_later() {
        let mut swarm = seeder();
        // Logged as a live source logs a signed munro: all news.
        for c in 0..fixture::CHUNKS {
            swarm.have_log.push(crate::chunk::ChunkIndex(c));
        }
        let (mut p, mut out) = (peer(), Outcome::default());
        let sc = &scope(&mut p, &mut out);
        let nothing = Binmap::new();
        let fresh = |rank| {
            // Every logged chunk is news: no sweep, the cursor at 0.
            let mut a = Announce::new(Instant::ZERO, 0, Duration::ZERO);
            a.have_sweep = None;
            a.set_spread(Spread::new(rank, 4, 0.5));
            a
        };
        let at = |ms| Instant::ZERO + Duration::from_millis(ms);
        let mut first = fresh(0);
        let sent = written(|w| first.poll_haves(at(0), &swarm, sc, (&nothing, false), w));
        assert_eq!(sent, ["HAVE(chunks 0..=7)"]);
        assert_eq!(first.held_due(), None);

        let mut later = fresh(1);
        assert!(written(|w| later.poll_haves(at(0), &swarm, sc, (&nothing, false), w)).is_empty());
        assert_eq!(later.held_due(), Some(at(0) + super::spread::HOLD));
        assert!(
            !later.haves_pending(swarm.have_log.len()),
            "held, not pending"
        );
        let early = at(super::spread::HOLD.as_millis() as u64 - 1);
        assert!(written(|w| later.poll_haves(early, &swarm, sc, (&nothing, false), w)).is_empty());
        let due = later.held_due().unwrap();
        let sent = written(|w| later.poll_haves(due, &swarm, sc, (&nothing, false), w));
        assert_eq!(sent, ["HAVE(chunks 0..=7)"]);
        assert_eq!(later.held_due(), None);

        // A peer that got the chunks meanwhile hears nothing of them.
        let mut had = fresh(1);
        let _ = written(|w| had.poll_haves(at(0), &swarm, sc, (&nothing, false), w));
        let mut all = Binmap::new();
        all.set(crate::chunk::ChunkRange::new(0, fixture::CHUNKS - 1).unwrap());
        let due = had.held_due().unwrap();
        assert!(written(|w| had.poll_haves(due, &swarm, sc, (&all, false), w)).is_empty());
        assert_eq!(had.held_due(), None);
    }
}
