//! Upload scheduling: which channel writes the next datagram when several
//! have something to send (architecture note: "Upload scheduling: FIFO,
//! weighted fair queuing"). The endpoint visits due channels in channel id
//! order from a cursor, round-robin; a policy says whether the channel that
//! just wrote keeps its turn for another datagram.

mod fifo;
mod wfq;

use super::policy::policy_names;
use crate::wire::ChannelId;

pub(crate) use fifo::FifoTurns;
pub(crate) use wfq::WeightedTurns;

/// The longest turn of one peer at our upload under weighted fair queuing,
/// in datagrams: it bounds how long the others wait for theirs.
pub const MAX_UPLOAD_TURN: u64 = 16;

/// A policy sharing our upload among the channels that want to send.
pub(crate) trait UploadTurns: Send {
    /// Whether the channel that wrote the last datagram writes the next
    /// one too, if it is still due.
    fn keeps_turn(&self) -> bool;

    /// Channel `id` wrote a datagram; `previous` wrote the one before.
    /// `queued` tells how many chunks `id` has queued for upload (asked
    /// only by policies that weigh by it).
    fn on_sent(&mut self, id: ChannelId, previous: ChannelId, queued: &dyn Fn() -> u64);
}

/// The upload scheduling policies, by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UploadScheduling {
    /// Every due channel writes one datagram in turn.
    #[default]
    Fifo,
    /// Weighted fair queuing (seed paper 000 §III-B): a channel's turn lasts
    /// as many datagrams as it has requested chunks queued with us, up to
    /// [`MAX_UPLOAD_TURN`].
    Wfq,
}

impl UploadScheduling {
    pub(crate) fn build(self) -> Box<dyn UploadTurns> {
        match self {
            UploadScheduling::Fifo => Box::new(FifoTurns),
            UploadScheduling::Wfq => Box::new(WeightedTurns::default()),
        }
    }
}

policy_names!(UploadScheduling, "upload scheduling", {
    Fifo => "fifo",
    Wfq => "wfq",
});
