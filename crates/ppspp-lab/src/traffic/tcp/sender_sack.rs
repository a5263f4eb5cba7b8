//! SACK-based loss recovery for the TCP model's sender (RFC 6675 §5):
//! entering recovery, and NextSeg() under the pipe estimate. Slow start,
//! congestion avoidance and the timer stay in `sender.rs`.

use ppspp_core::time::Instant;

use super::TcpSender;
use crate::packet::Packet;

impl TcpSender {
    /// RFC 6675 §5: recovery begins at the third duplicate ACK, or as soon
    /// as IsLost(HighACK + 1) holds — whichever comes first.
    pub(super) fn sack_loss_detected(&self) -> bool {
        self.dupacks >= 3
            || self
                .board
                .lost_below(self.mss())
                .is_some_and(|l| self.snd_una < l)
    }

    /// RFC 6675 §5 steps 4.1-4.3: RecoveryPoint = HighData, one cut by the
    /// congestion policy with cwnd = ssthresh (no inflation: the pipe
    /// estimate does that job), and the first hole retransmitted at once.
    pub(super) fn enter_sack_recovery(&mut self, now: Instant) {
        let mss = self.mss();
        self.ssthresh = self.cc.congestion(now, self.cwnd, self.flight_size(), mss);
        self.cwnd = self.ssthresh;
        self.recover = Some(self.snd_max);
        self.in_recovery = true;
        self.partial_seen = false;
        self.high_rxt = self.snd_una;
        self.retx.push_back(self.snd_una);
        self.timed = None;
        self.stats.fast_retransmits += 1;
    }

    /// RFC 6675 §5 step (C) with NextSeg() (§4): while cwnd − pipe ≥ 1
    /// SMSS, (1) the first unSACKed byte above HighRxt that is lost, else
    /// (2) new data, else (3) the first unSACKed byte above HighRxt below
    /// the highest SACKed one. Rule (4), the rescue retransmission, is not
    /// modelled.
    pub(super) fn next_segment(&mut self, now: Instant) -> Option<Packet> {
        let mss = self.mss();
        let pipe = self
            .board
            .pipe(self.snd_una, self.snd_max, self.high_rxt, mss);
        if pipe + mss > self.cwnd {
            return None;
        }
        let hole = self.board.first_unsacked(self.high_rxt.max(self.snd_una));
        let below_sacked = self.board.highest().is_some_and(|h| hole < h) && hole < self.snd_max;
        let lost = self.board.lost_below(mss).is_some_and(|l| hole < l);
        if below_sacked && lost {
            return Some(self.retransmit(now, hole));
        }
        if let Some(p) = self.send_next(now, false) {
            return Some(p);
        }
        below_sacked.then(|| self.retransmit(now, hole))
    }
}
