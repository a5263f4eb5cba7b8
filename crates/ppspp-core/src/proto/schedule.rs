//! Which channels need the endpoint's attention, so that the work an input
//! costs grows with the channels it concerns, not with all channels.
//!
//! Every channel is either *due* — something may have changed, so the next
//! `poll_transmit` asks it for a datagram — or *filed* under the instant of
//! its next timer, computed when it last settled (had nothing more to send).
//! Whatever changes a channel's state marks it due; a due channel that has
//! nothing to send settles and is filed again. `poll_timeout` is then the
//! earliest filed instant (or now, while anything is due), and
//! `handle_timeout` visits only the channels whose instant has come.
//!
//! Marking a channel due leaves its filing in place: most channels settle
//! again under the same instant, and then nothing moves in the file. While
//! any channel is due the file's earliest instant is not asked for, and a
//! due channel's entry popped from the file is dropped by the caller, so
//! the leftover entries change no answer.

use std::collections::BTreeSet;
use std::ops::Bound;

use crate::time::Instant;
use crate::wire::ChannelId;

/// The due set and the timer file of one endpoint.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    due: BTreeSet<ChannelId>,
    filed: BTreeSet<(Instant, ChannelId)>,
}

impl Schedule {
    /// `id` may have something to send: poll it. Its filing stays until
    /// it settles (see the module documentation).
    pub fn mark_due(&mut self, id: ChannelId) {
        self.due.insert(id);
    }

    /// `id` has nothing to send until `deadline` (if ever): file it there.
    pub fn settle(
        &mut self,
        id: ChannelId,
        filed: &mut Option<Instant>,
        deadline: Option<Instant>,
    ) {
        self.due.remove(&id);
        if *filed == deadline {
            return;
        }
        if let Some(at) = filed.take() {
            self.filed.remove(&(at, id));
        }
        if let Some(at) = deadline {
            self.filed.insert((at, id));
            *filed = Some(at);
        }
    }

    /// `id` is gone.
    pub fn forget(&mut self, id: ChannelId, filed: Option<Instant>) {
        self.due.remove(&id);
        if let Some(at) = filed {
            self.filed.remove(&(at, id));
        }
    }

    /// Whether `id` is due.
    pub fn is_due(&self, id: ChannelId) -> bool {
        self.due.contains(&id)
    }

    /// Whether any channel is due.
    pub fn any_due(&self) -> bool {
        !self.due.is_empty()
    }

    /// The first due channel after `cursor`, wrapping around: channels take
    /// turns at sending.
    pub fn next_due(&self, cursor: ChannelId) -> Option<ChannelId> {
        self.due
            .range((Bound::Excluded(cursor), Bound::Unbounded))
            .next()
            .or_else(|| self.due.range(..=cursor).next())
            .copied()
    }

    /// The earliest filed instant.
    pub fn next_timer(&self) -> Option<Instant> {
        self.filed.first().map(|e| e.0)
    }

    /// Takes the first channel filed at or before `now` out of the file
    /// (the caller marks it due once its timers ran, or, if it is due
    /// already, only clears its record of the filing).
    pub fn pop_expired(&mut self, now: Instant) -> Option<(ChannelId, Instant)> {
        let &(at, id) = self.filed.first()?;
        if at > now {
            return None;
        }
        self.filed.pop_first();
        Some((id, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_micros(ms * 1000)
    }

    #[test]
    fn due_channels_take_turns_after_the_cursor() {
        let mut s = Schedule::default();
        let mut f = [None; 4];
        for i in 0..4 {
            s.mark_due(ChannelId(10 * (i + 1)));
        }
        assert_eq!(s.next_due(ChannelId(20)), Some(ChannelId(30)));
        assert_eq!(s.next_due(ChannelId(40)), Some(ChannelId(10)));
        assert_eq!(s.next_due(ChannelId(0)), Some(ChannelId(10)));
        s.settle(ChannelId(30), &mut f[2], Some(t(5)));
        assert_eq!(s.next_due(ChannelId(20)), Some(ChannelId(40)));
        assert!(!s.is_due(ChannelId(30)));
    }

    #[test]
    fn filed_channels_expire_in_time_order_and_refiling_moves_them() {
        let mut s = Schedule::default();
        let (mut a, mut b) = (None, None);
        s.settle(ChannelId(1), &mut a, Some(t(30)));
        s.settle(ChannelId(2), &mut b, Some(t(20)));
        assert_eq!(s.next_timer(), Some(t(20)));
        // Refiled earlier: the old entry is gone.
        s.settle(ChannelId(1), &mut a, Some(t(10)));
        assert_eq!(s.next_timer(), Some(t(10)));
        assert_eq!(s.pop_expired(t(15)), Some((ChannelId(1), t(10))));
        assert_eq!(s.pop_expired(t(15)), None);
        // Marked due: still filed, and settling again at the same instant
        // keeps the one entry.
        s.mark_due(ChannelId(2));
        assert_eq!((s.next_timer(), b), (Some(t(20)), Some(t(20))));
        assert!(s.any_due());
        s.settle(ChannelId(2), &mut b, Some(t(20)));
        assert!(!s.any_due());
        assert_eq!(s.filed.len(), 1);
        // Settling elsewhere moves the entry.
        s.mark_due(ChannelId(2));
        s.settle(ChannelId(2), &mut b, Some(t(40)));
        assert_eq!(s.filed.len(), 1);
        assert_eq!((s.next_timer(), b), (Some(t(40)), Some(t(40))));
        s.mark_due(ChannelId(2));
        s.forget(ChannelId(2), b);
        assert!(!s.any_due());
        assert_eq!(s.next_timer(), None);
    }

    #[test]
    fn settling_without_a_deadline_files_nothing() {
        let mut s = Schedule::default();
        let mut a = None;
        s.settle(ChannelId(7), &mut a, Some(t(3)));
        s.mark_due(ChannelId(7));
        s.settle(ChannelId(7), &mut a, None);
        assert_eq!(a, None);
        assert!(!s.any_due());
        assert_eq!(s.next_timer(), None);
    }
}
