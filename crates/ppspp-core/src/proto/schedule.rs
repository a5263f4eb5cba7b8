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
    /// `id` may have something to send: poll it. `filed` is the channel's
    /// record of where it is filed, cleared here.
    pub fn mark_due(&mut self, id: ChannelId, filed: &mut Option<Instant>) {
        if let Some(at) = filed.take() {
            self.filed.remove(&(at, id));
        }
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
    /// (the caller marks it due once its timers ran).
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
        for (i, filed) in f.iter_mut().enumerate() {
            s.mark_due(ChannelId(10 * (i as u32 + 1)), filed);
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
        // Marked due: out of the file.
        s.mark_due(ChannelId(2), &mut b);
        assert_eq!((s.next_timer(), b), (None, None));
        assert!(s.any_due());
        s.forget(ChannelId(2), b);
        assert!(!s.any_due());
    }

    #[test]
    fn settling_without_a_deadline_files_nothing() {
        let mut s = Schedule::default();
        let mut a = None;
        s.mark_due(ChannelId(7), &mut a);
        s.settle(ChannelId(7), &mut a, None);
        assert!(!s.any_due());
        assert_eq!(s.next_timer(), None);
    }
}
