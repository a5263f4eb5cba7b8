//! FIFO turns: each due channel writes one datagram, then the next due
//! channel after it (by channel id, wrapping) goes.

use super::UploadTurns;
use crate::wire::ChannelId;

/// One datagram per turn.
pub(crate) struct FifoTurns;

impl UploadTurns for FifoTurns {
    fn keeps_turn(&self) -> bool {
        false
    }

    fn on_sent(&mut self, _id: ChannelId, _previous: ChannelId, _queued: &dyn Fn() -> u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_is_one_datagram() {
        let mut t = FifoTurns;
        t.on_sent(ChannelId(1), ChannelId(1), &|| 10);
        assert!(!t.keeps_turn());
    }
}
