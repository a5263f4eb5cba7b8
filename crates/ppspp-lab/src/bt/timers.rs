//! Which of a peer's connections to look at after an event, so that no
//! event costs a scan of all 50.
//!
//! Why. A BitTorrent peer keeps up to 50 connections, each a TCP or uTP
//! sender and receiver with timers of their own. Asking every one for its
//! next timer after each packet took a fifth of an E3 run's time (perf on
//! `scenarios/e3-utp.toml` at 5 Mbit/s). But a connection's timers move only
//! when something is done to it, and everything done to a connection also
//! marks it as maybe having something to send. So the one set of marks
//! serves both: [`Touched::insert`] marks a connection for sending and for
//! re-timing, [`TimerIndex::refresh`] re-reads the timers of the marked
//! ones only, and the index answers the earliest deadline and the
//! connections due.

use std::collections::{BTreeMap, BTreeSet};

use ppspp_core::time::Instant;

use super::peer::ConnKey;

/// Connections something was done to: to poll for packets (`send`, until
/// they have nothing) and to re-time (until the next refresh).
#[derive(Debug, Default)]
pub struct Touched {
    send: BTreeSet<ConnKey>,
    retime: BTreeSet<ConnKey>,
}

impl Touched {
    /// Marks `k`: it may have something to send and its timers may have
    /// moved.
    pub fn insert(&mut self, k: ConnKey) {
        self.send.insert(k);
        self.retime.insert(k);
    }

    /// The first connection that may have something to send.
    pub fn first(&self) -> Option<&ConnKey> {
        self.send.first()
    }

    /// `k` has nothing more to send; its timers are still re-read at the
    /// next refresh (a connection that just sent has armed timers, and one
    /// forgotten leaves the index there).
    pub fn remove(&mut self, k: &ConnKey) {
        self.send.remove(k);
        self.retime.insert(*k);
    }

    /// The connections that may have something to send, in key order.
    pub fn to_send(&self) -> impl Iterator<Item = &ConnKey> {
        self.send.iter()
    }
}

/// Every connection's next deadline, ordered.
#[derive(Debug, Default)]
pub struct TimerIndex {
    at: BTreeMap<ConnKey, Instant>,
    order: BTreeSet<(Instant, ConnKey)>,
}

impl TimerIndex {
    /// Re-reads the deadline of each connection `touched` marked for
    /// re-timing (`deadline` gives `None` for one with no timer or no
    /// longer there), and clears those marks.
    pub fn refresh(
        &mut self,
        touched: &mut Touched,
        mut deadline: impl FnMut(&ConnKey) -> Option<Instant>,
    ) {
        for k in std::mem::take(&mut touched.retime) {
            if let Some(old) = self.at.remove(&k) {
                self.order.remove(&(old, k));
            }
            if let Some(t) = deadline(&k) {
                self.at.insert(k, t);
                self.order.insert((t, k));
            }
        }
    }

    /// The earliest deadline.
    pub fn earliest(&self) -> Option<Instant> {
        self.order.first().map(|(t, _)| *t)
    }

    /// The connections whose deadline is `now` or earlier, in key order.
    pub fn due(&self, now: Instant) -> BTreeSet<ConnKey> {
        self.order
            .iter()
            .take_while(|(t, _)| *t <= now)
            .map(|(_, k)| *k)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bt::transport::Transport;
    use std::time::Duration;

    fn key(n: u64) -> ConnKey {
        (n, Transport::Tcp)
    }

    #[test]
    fn only_touched_connections_are_re_read() {
        let t0 = Instant::from_micros(0);
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut deadlines: BTreeMap<ConnKey, Instant> =
            [(key(1), at(5)), (key(2), at(3)), (key(3), at(9))].into();
        let mut touched = Touched::default();
        let mut index = TimerIndex::default();
        for k in deadlines.keys() {
            touched.insert(*k);
        }
        index.refresh(&mut touched, |k| deadlines.get(k).copied());
        assert_eq!(index.earliest(), Some(at(3)));
        assert_eq!(index.due(at(5)), [key(1), key(2)].into());

        // A deadline that moves without a mark is not seen...
        deadlines.insert(key(2), at(7));
        index.refresh(&mut touched, |k| deadlines.get(k).copied());
        assert_eq!(index.earliest(), Some(at(3)));
        // ... and is once marked, by a send or a removal alike.
        touched.remove(&key(2));
        index.refresh(&mut touched, |k| deadlines.get(k).copied());
        assert_eq!(index.earliest(), Some(at(5)));

        // A connection gone leaves the index.
        deadlines.remove(&key(1));
        touched.insert(key(1));
        index.refresh(&mut touched, |k| deadlines.get(k).copied());
        assert_eq!(index.due(at(8)), [key(2)].into());
        assert_eq!(touched.first(), Some(&key(1)));
    }
}
