//! Upload slots: which peers we serve (CHOKE / UNCHOKE, RFC 7574 §3.9).
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

use std::collections::BTreeMap;
use std::time::Duration;

use super::channel::{Channel, State};
use crate::time::Instant;
use crate::wire::ChannelId;

/// How often a slot changes hands when peers are waiting.
pub(crate) const ROTATION: Duration = Duration::from_secs(30);

/// How long an unchoked peer may go without a request and keep its slot.
/// Chosen: well over a round trip with full queues (a downloader asks again
/// at least every round trip), well under the rotation.
pub(crate) const IDLE: Duration = Duration::from_secs(5);

/// Chooses who is choked among the channels of one swarm. Channels whose
/// state changes get `choke_dirty`, so their next datagram says so.
pub(crate) fn rechoke<'a>(
    now: Instant,
    slots: usize,
    channels: impl Iterator<Item = (&'a ChannelId, &'a mut Channel)>,
) {
    let mut interested: Vec<&mut Channel> = Vec::new();
    for (_, ch) in channels {
        if ch.state != State::Established || ch.close.is_some() {
            continue;
        }
        // Idle since its last request or its unchoke, whichever is later.
        let idle = ch.requested_at.is_some_and(|at| {
            !ch.choking_remote && now.saturating_since(at.max(ch.choke_changed)) >= IDLE
        });
        if ch.requested_at.is_some() && !ch.remote_complete && !idle {
            interested.push(ch);
        } else if ch.choking_remote {
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
    interested.sort_by_key(|ch| (ch.choking_remote, ch.choke_changed, ch.local));
    let unchoked = interested.iter().filter(|ch| !ch.choking_remote).count();
    let waiting = interested.len() - unchoked;
    let mut plan: BTreeMap<ChannelId, bool> = BTreeMap::new();
    // Too many unchoked (the limit fell, or peers turned interested): the
    // newest ones give their slots back.
    for ch in interested
        .iter()
        .filter(|ch| !ch.choking_remote)
        .skip(slots)
    {
        plan.insert(ch.local, true);
    }
    let mut free = slots.saturating_sub(unchoked);
    // Rotation: the longest-unchoked yields to the longest-choked.
    if free == 0 && waiting > 0 {
        if let Some(oldest) = interested.iter().find(|ch| !ch.choking_remote) {
            if now.saturating_since(oldest.choke_changed) >= ROTATION {
                plan.insert(oldest.local, true);
                free = 1;
            }
        }
    }
    for ch in interested.iter().filter(|ch| ch.choking_remote).take(free) {
        plan.insert(ch.local, false);
    }
    for ch in interested {
        if let Some(&choke) = plan.get(&ch.local) {
            set_choke(ch, choke, now);
        }
    }
}

fn set_choke(ch: &mut Channel, choke: bool, now: Instant) {
    if ch.choking_remote == choke {
        return;
    }
    ch.choking_remote = choke;
    ch.choke_dirty = true;
    ch.choke_changed = now;
    if choke {
        // A choked peer's requests are dropped (RFC 7574 §3.9); it asks
        // again once unchoked.
        ch.uploads.clear();
    }
}
