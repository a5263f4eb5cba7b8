//! Weighted fair queuing of uploads (seed paper 000 §III-B): a peer's turn
//! lasts as many datagrams as it has requested chunks queued with us (up to
//! [`MAX_UPLOAD_TURN`]), so under an upload limit each peer's requests wait
//! in proportion to how many it has outstanding, and a peer that asks for
//! less is served sooner.

use super::{UploadTurns, MAX_UPLOAD_TURN};
use crate::wire::ChannelId;

/// Datagrams left in the current turn.
#[derive(Default)]
pub(crate) struct WeightedTurns {
    left: u64,
}

impl UploadTurns for WeightedTurns {
    fn keeps_turn(&self) -> bool {
        self.left > 0
    }

    fn on_sent(&mut self, id: ChannelId, previous: ChannelId, queued: &dyn Fn() -> u64) {
        self.left = if id == previous && self.left > 0 {
            self.left - 1
        } else {
            // A new turn: this datagram is its first.
            queued().clamp(1, MAX_UPLOAD_TURN) - 1
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_lasts_as_many_datagrams_as_chunks_queued_up_to_the_cap() {
        let (a, b) = (ChannelId(1), ChannelId(2));
        let mut t = WeightedTurns::default();
        // `a` has 3 chunks queued: its turn is 3 datagrams.
        t.on_sent(a, b, &|| 3);
        assert!(t.keeps_turn());
        t.on_sent(a, a, &|| 2);
        assert!(t.keeps_turn());
        t.on_sent(a, a, &|| 1);
        assert!(!t.keeps_turn());
        // A channel with nothing queued still sends one datagram.
        t.on_sent(b, a, &|| 0);
        assert!(!t.keeps_turn());
        // The cap.
        t.on_sent(a, b, &|| 1000);
        let mut n = 1;
        while t.keeps_turn() {
            t.on_sent(a, a, &|| 1000);
            n += 1;
        }
        assert_eq!(n, MAX_UPLOAD_TURN);
    }
}
