//! What an ST_STATE does at the sender, in the order libutp's
//! `utp_process_incoming` does it: count what it acknowledges
//! (cumulatively and selectively) and the round trip of the youngest, take
//! the delay sample, run the controller, take the receiver's window, free
//! what is acked (RTT samples, timer), then the selective ACK's fast
//! resends (`selective_ack`) and BEP 29's duplicate-ACK rule.

use ppspp_core::time::{duration_micros, Instant};

use super::super::sender_config::{
    DUPLICATE_ACKS_BEFORE_RESEND, MAX_RESENDS_PER_ACK, ZERO_WINDOW_PROBE,
};
use super::UtpSender;
use crate::packet::{SelectiveAck, UtpPacket, UtpType};

impl UtpSender {
    pub(in super::super) fn on_state(&mut self, now: Instant, p: &UtpPacket) {
        let oldest = self.oldest();
        // Sent packets are `oldest..seq_nr`; libutp's `acks` is how many of
        // them ack_nr covers (0 for an old ack_nr).
        let acks = (p.ack_nr + 1)
            .checked_sub(oldest)
            .filter(|n| *n <= self.seq_nr - oldest)
            .unwrap_or(0);
        // BEP 29 / libutp: an ST_STATE repeating the ack_nr below the
        // oldest outstanding packet is a duplicate.
        if self.seq_nr > oldest {
            if p.ack_nr + 1 == oldest {
                self.dup_acks += 1;
            } else {
                self.dup_acks = 0;
            }
        }
        // What it acknowledges, and the youngest round trip among those
        // packets: the delay cannot exceed it (libutp `min_rtt`).
        let mut acked_bytes = 0;
        let mut min_rtt = u64::MAX;
        let mut count = |q: &super::OutPacket| {
            if q.transmissions > 0 {
                acked_bytes += u64::from(q.len);
                min_rtt = min_rtt.min(duration_micros(now.saturating_since(q.sent_at)));
            }
        };
        for q in self.outbuf.range(oldest..oldest + acks) {
            count(q.1);
        }
        if let Some(mask) = p.sack {
            for i in 0..SelectiveAck::BITS {
                let v = p.ack_nr + 2 + i;
                if mask.has(i) && v > oldest && v < self.seq_nr {
                    if let Some(q) = self.outbuf.get(&v) {
                        count(q);
                    }
                }
            }
        }
        // A difference of 0 means the receiver has no sample yet (libutp).
        if p.timestamp_difference != 0 {
            self.delay.add_sample(p.timestamp_difference, now);
            if acked_bytes > 0 {
                self.apply_ccontrol(now, acked_bytes, min_rtt);
            }
        }
        self.take_window(now, p.wnd_size);
        self.fast_resend_seq_nr = self.fast_resend_seq_nr.max(p.ack_nr + 1);
        for seq in oldest..oldest + acks {
            self.ack_packet(now, seq);
        }
        if let Some(mask) = p.sack {
            self.selective_ack(now, p.ack_nr + 2, mask);
        }
        self.duplicate_ack_rule(now, p.ack_nr);
        self.after_ack(now);
    }

    /// libutp `ack_packet`: frees `seq`; a packet sent once gives an RTT
    /// sample (Karn's rule); the timer restarts with the RTO.
    fn ack_packet(&mut self, now: Instant, seq: u64) {
        let Some(q) = self.outbuf.remove(&seq) else {
            return;
        };
        if q.transmissions == 1 {
            self.rto.sample(now.saturating_since(q.sent_at));
        }
        self.rto.on_ack();
        self.rto_deadline = Some(now + self.rto.timeout());
        if !q.need_resend {
            self.cur_window -= u64::from(q.len);
        }
        self.stats.bytes_acked += u64::from(q.len);
        if q.kind == UtpType::Syn {
            self.open = true;
        }
    }

    /// libutp `selective_ack`: bits for packets after the oldest that were
    /// sent free them; a sent packet not marked is lost once at least
    /// [`DUPLICATE_ACKS_BEFORE_RESEND`] marked packets lie above it (and it
    /// was not fast-resent before); so is `ack_nr + 1`. At most
    /// [`MAX_RESENDS_PER_ACK`] go, lowest first; any loss halves the window
    /// (at most every 100 ms).
    fn selective_ack(&mut self, now: Instant, base: u64, mask: SelectiveAck) {
        if self.outbuf.is_empty() {
            return;
        }
        let oldest = self.oldest();
        let mut count = 0;
        // Lost packets, highest first (libutp walks the mask downwards).
        let mut lost = Vec::new();
        for i in (0..SelectiveAck::BITS).rev() {
            let v = base + i;
            if v <= oldest || v >= self.seq_nr {
                continue;
            }
            let marked = mask.has(i);
            if marked {
                count += 1;
            }
            if self.outbuf.get(&v).is_none_or(|q| q.transmissions == 0) {
                continue;
            }
            if marked {
                self.ack_packet(now, v);
            } else if v >= self.fast_resend_seq_nr && count >= DUPLICATE_ACKS_BEFORE_RESEND {
                lost.push(v);
            }
        }
        if base > self.fast_resend_seq_nr && count >= DUPLICATE_ACKS_BEFORE_RESEND {
            lost.push(base - 1);
        }
        let mut resent = 0;
        while let Some(v) = lost.pop() {
            if !self.outbuf.contains_key(&v) {
                continue;
            }
            self.fast_resend(v);
            resent += 1;
            if resent >= MAX_RESENDS_PER_ACK {
                break;
            }
        }
        if resent > 0 {
            self.maybe_decay_win(now);
        }
    }

    /// BEP 29: "if 3 duplicate acks are received, the packet is assumed
    /// lost" — `ack_nr + 1`, unless the selective ACK resent it already.
    /// (libutp leaves this as a TODO and relies on the selective ACK; it
    /// matters here only when the held packets lie beyond the mask.)
    fn duplicate_ack_rule(&mut self, now: Instant, ack_nr: u64) {
        let v = ack_nr + 1;
        if self.dup_acks >= DUPLICATE_ACKS_BEFORE_RESEND
            && v >= self.fast_resend_seq_nr
            && self.outbuf.get(&v).is_some_and(|q| q.transmissions > 0)
        {
            self.fast_resend(v);
            self.maybe_decay_win(now);
        }
    }

    /// `v` goes again at once, whatever the window; it is not fast-resent
    /// again.
    fn fast_resend(&mut self, v: u64) {
        self.resend_now.push_back(v);
        self.fast_resend_seq_nr = v + 1;
        self.stats.fast_resends += 1;
    }

    /// libutp: the receiver's `wnd_size` bounds what is sent; a zero window
    /// gives way to one packet after 15 s.
    pub(in super::super) fn take_window(&mut self, now: Instant, wnd: u64) {
        self.peer_window = wnd;
        self.zero_window_until = (wnd == 0).then(|| now + ZERO_WINDOW_PROBE);
    }

    /// Bookkeeping once an ACK is through: the stream forgets acked
    /// records; a finished transfer stops the timer.
    fn after_ack(&mut self, now: Instant) {
        let acked_to = self
            .outbuf
            .values()
            .next()
            .map_or(self.next_offset, |q| q.offset);
        self.stream.acked(acked_to);
        let done = if self.bulk {
            self.config.total_bytes.is_some() && acked_to >= self.stream.written()
        } else {
            self.fin_sent && self.outbuf.is_empty()
        };
        if done {
            self.completed_at = Some(now);
            self.rto_deadline = None;
            self.resend_now.clear();
        }
    }
}
