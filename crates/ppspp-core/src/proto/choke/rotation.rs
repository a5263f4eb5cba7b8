//! The rotation choking policy: upload slots taken in turns, newcomers
//! first (CHOKE / UNCHOKE, RFC 7574 §3.9).
//!
//! With a limit of K slots per swarm, at most K interested peers are
//! unchoked; the others get CHOKE and their requests are dropped until a
//! slot is theirs. Every rotation period the peer unchoked longest yields
//! its slot to the peer choked longest, so a waiting peer is never starved
//! (BitTorrent's round-robin idea without tit-for-tat). A peer is
//! interested once it has requested something and until it has every chunk,
//! or until, holding a slot, it has not asked for anything for [`IDLE`]:
//! PPSPP has no NOT-INTERESTED message, so a peer that got what it wanted
//! from us (elsewhere complete, or just wanting nothing we have) would keep
//! its slot until the rotation. Without a limit nobody is choked.
//!
//! Newcomers first: a peer that has not held a slot since it became
//! interested does not queue behind the others; it takes the slot of the
//! peer unchoked longest, as soon as that one has held it for
//! [`NEWCOMER_HOLD`] (BitTorrent's optimistic unchoke favours new peers
//! for the same reason: they have nothing yet, and nothing to offer). A
//! streaming newcomer is waiting for its prebuffer, while the peers it
//! displaces are playing from theirs. Without it, the first viewers of a
//! flash crowd took every slot within seconds and, asking on for the rest
//! of the video, kept them for the whole rotation, so later arrivals
//! waited up to 30 s to start (E1, swift-vod, seed 1, startup mean / p95
//! before and after: 176 viewers 7.28 / 9.58 s and 6.79 / 8.62 s; 208
//! viewers 7.24 / 8.80 s and 6.95 / 8.88 s; 96 viewers, seed 5: 6.7 / 13.5
//! s and 5.6 / 9.0 s).

use std::collections::BTreeMap;
use std::time::Duration;

use super::{set_choke, Choke};
use crate::proto::channel::{Channel, State};
use crate::time::Instant;
use crate::wire::ChannelId;

/// How often a slot changes hands when peers are waiting.
pub(crate) const ROTATION: Duration = Duration::from_secs(30);

/// How long an unchoked peer may go without a request and keep its slot.
/// Chosen: well over a round trip with full queues (a downloader asks again
/// at least every round trip), well under the rotation.
pub(crate) const IDLE: Duration = Duration::from_secs(5);

/// How long a peer keeps its slot before a newcomer may take it. Chosen:
/// a few round trips of requests at the least, so that slots do not change
/// hands faster than a peer gets anything through them.
pub(crate) const NEWCOMER_HOLD: Duration = Duration::from_secs(5);

/// Slots in turns, newcomers first.
pub(crate) struct Rotation;

impl Choke for Rotation {
    fn rechoke(
        &mut self,
        now: Instant,
        slots: usize,
        channels: &mut dyn Iterator<Item = &mut Channel>,
    ) {
        rechoke(now, slots, channels);
    }

    fn periodic(&self, slots: usize) -> bool {
        slots > 0
    }
}

/// Chooses who is choked among the channels of one swarm. Channels whose
/// state changes get `choke_dirty`, so their next datagram says so.
pub(super) fn rechoke(
    now: Instant,
    slots: usize,
    channels: &mut dyn Iterator<Item = &mut Channel>,
) {
    let mut interested: Vec<&mut Channel> = Vec::new();
    for ch in channels {
        if ch.state() != State::Established || ch.is_closing() {
            continue;
        }
        // Idle since its last request or its unchoke, whichever is later.
        let idle = ch.requested_at().is_some_and(|at| {
            !ch.choking_remote() && now.saturating_since(at.max(ch.choke_changed())) >= IDLE
        });
        if idle {
            // It gave its slot up unasked: when it asks again it is a
            // newcomer again (below), not the last in the queue.
            ch.forget_slot();
        }
        if ch.requested_at().is_some() && !ch.remote_complete() && !idle {
            interested.push(ch);
        } else if ch.choking_remote() {
            // Nothing to serve it: back to the unchoked default.
            set_choke(ch, false, now);
        }
    }
    if slots == 0 {
        for ch in interested {
            set_choke(ch, false, now);
        }
        return;
    }
    // Unchoked longest first, then choked longest first.
    interested.sort_by_key(|ch| (ch.choking_remote(), ch.choke_changed(), ch.local()));
    let unchoked = interested.iter().filter(|ch| !ch.choking_remote()).count();
    let waiting = interested.len() - unchoked;
    let mut plan: BTreeMap<ChannelId, bool> = BTreeMap::new();
    // Too many unchoked (the limit fell, or peers turned interested): the
    // newest ones give their slots back.
    for ch in interested
        .iter()
        .filter(|ch| !ch.choking_remote())
        .skip(slots)
    {
        plan.insert(ch.local(), true);
    }
    let mut free = slots.saturating_sub(unchoked);
    // Rotation: the longest-unchoked yields to the longest-choked.
    if free == 0 && waiting > 0 {
        if let Some(oldest) = interested.iter().find(|ch| !ch.choking_remote()) {
            if now.saturating_since(oldest.choke_changed()) >= ROTATION {
                plan.insert(oldest.local(), true);
                free = 1;
            }
        }
    }
    for ch in interested
        .iter()
        .filter(|ch| ch.choking_remote())
        .take(free)
    {
        plan.insert(ch.local(), false);
    }
    newcomers_first(now, &interested, &mut plan);
    for ch in interested {
        if let Some(&choke) = plan.get(&ch.local()) {
            set_choke(ch, choke, now);
        }
        ch.note_slot();
    }
}

/// Newcomers first: every interested peer that has not held a slot since
/// it became interested, and that `plan` leaves choked, takes the slot of
/// the peer unchoked longest, once that one has held it [`NEWCOMER_HOLD`].
fn newcomers_first(
    now: Instant,
    interested: &[&mut Channel],
    plan: &mut BTreeMap<ChannelId, bool>,
) {
    let choked = |ch: &Channel, plan: &BTreeMap<ChannelId, bool>| {
        plan.get(&ch.local())
            .copied()
            .unwrap_or(ch.choking_remote())
    };
    let mut holders: Vec<&Channel> = interested
        .iter()
        .map(|ch| &**ch)
        .filter(|ch| {
            !choked(ch, plan)
                && !ch.choking_remote()
                && ch.had_slot()
                && now.saturating_since(ch.choke_changed()) >= NEWCOMER_HOLD
        })
        .collect();
    // Unchoked longest last, to pop first.
    holders.sort_by_key(|ch| std::cmp::Reverse((ch.choke_changed(), ch.local())));
    let newcomers: Vec<ChannelId> = interested
        .iter()
        .filter(|ch| !ch.had_slot() && choked(ch, plan))
        .map(|ch| ch.local())
        .collect();
    for newcomer in newcomers {
        let Some(holder) = holders.pop() else {
            break;
        };
        plan.insert(holder.local(), true);
        plan.insert(newcomer, false);
    }
}
