//! Choking: which interested peers we serve (CHOKE / UNCHOKE, RFC 7574
//! §3.9). A policy looks at the channels of one swarm and chokes or
//! unchokes them; a channel whose state changes says so in its next
//! datagram.

mod delay_slots;
mod rotation;
mod unchoke_all;

use std::time::Duration;

use super::channel::Channel;
use super::policy::policy_names;
use crate::time::Instant;

pub(crate) use delay_slots::DelaySlots;
pub(crate) use rotation::{Rotation, IDLE, ROTATION};
pub(crate) use unchoke_all::UnchokeAll;

/// A choking policy.
pub(crate) trait Choke: Send {
    /// Reconsiders who of one swarm's `channels` is choked, with `slots`
    /// upload slots per swarm (0: no limit).
    fn rechoke(
        &mut self,
        now: Instant,
        slots: usize,
        channels: &mut dyn Iterator<Item = &mut Channel>,
    );

    /// Whether the policy wants to be asked again every so often (a slot
    /// rotation), not only when a peer's interest changes.
    fn periodic(&self, slots: usize) -> bool;

    /// How long after a rechoke a periodic policy is asked again.
    fn period(&self) -> Duration {
        ROTATION / 3
    }
}

/// The choking policies, by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Choking {
    /// At most `upload_slots` interested peers unchoked; newcomers first,
    /// and every [`ROTATION`] the longest-served yields to the
    /// longest-waiting (`choke/rotation.rs`). With 0 slots nobody is
    /// choked.
    #[default]
    Rotation,
    /// Nobody is ever choked, whatever the slots.
    UnchokeAll,
    /// Rotation with at most `upload_slots` slots, fewer while our
    /// upload's queuing delay says the uplink cannot carry that many at
    /// LEDBAT's floor
    /// (`choke/delay_slots.rs`).
    DelaySlots,
}

impl Choking {
    pub(crate) fn build(self) -> Box<dyn Choke> {
        match self {
            Choking::Rotation => Box::new(Rotation),
            Choking::UnchokeAll => Box::new(UnchokeAll),
            Choking::DelaySlots => Box::new(DelaySlots::default()),
        }
    }
}

policy_names!(Choking, "choking", {
    Rotation => "rotation",
    UnchokeAll => "unchoke-all",
    DelaySlots => "delay-slots",
});

/// Chokes or unchokes the peer of `ch`, marking the change to be sent.
fn set_choke(ch: &mut Channel, choke: bool, now: Instant) {
    // A choked peer's requests are dropped (RFC 7574 §3.9); it asks again
    // once unchoked (`Channel::set_choke`).
    ch.set_choke(choke, now);
}
