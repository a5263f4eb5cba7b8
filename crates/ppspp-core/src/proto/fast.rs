//! Keeping a swarm's fast-peer set (seed paper 000 §III-A) for a picker
//! that wants one: once per [`UPDATE_PERIOD`], every established channel's
//! expected bandwidth (eq. 1) is ranked and the first peers whose sum
//! reaches x times the bitrate are marked fast (eq. 2). The policy's
//! numbers and choices are in [`crate::pick::fast_peers`].
//!
//! [`UPDATE_PERIOD`]: crate::pick::fast_peers::UPDATE_PERIOD

use super::channel::{Channel, State};
use super::swarm::Swarm;
use crate::pick::fast_peers::select;
use crate::time::Instant;
use crate::wire::ChannelId;

/// Updates `swarm`'s fast set over its `channels` if it is due at `now`.
pub(crate) fn update<'a>(
    now: Instant,
    swarm: &mut Swarm,
    channels: impl Iterator<Item = (&'a ChannelId, &'a mut Channel)>,
) {
    let Some(rate) = swarm.picker.fast_peer_rate() else {
        return;
    };
    if !swarm.fast.due(now) {
        return;
    }
    let need = swarm.fast.x() * rate.bitrate.bps() as f64 / 8.0;
    let mut members: Vec<&'a mut Channel> = Vec::new();
    let mut ranked: Vec<(usize, f64)> = Vec::new();
    for (_, ch) in channels {
        if ch.state() != State::Established || ch.is_closing() {
            continue;
        }
        if let Some(r) = ch.poll_expected_bandwidth() {
            ranked.push((members.len(), r));
        }
        members.push(ch);
    }
    if ranked.is_empty() {
        // Nobody measured yet: no set, every peer may serve urgent data.
        for ch in members {
            ch.set_fast(None);
        }
        swarm.fast_count = 0;
        return;
    }
    let n = select(&mut ranked, need);
    for ch in members.iter_mut() {
        ch.set_fast(Some(false));
    }
    for &(i, _) in &ranked[..n] {
        members[i].set_fast(Some(true));
    }
    swarm.fast_count = n as u64;
}
