//! What the TCP model's sender puts on the wire: which bytes the next
//! segment carries (new data, going back N, a retransmission), within
//! which window (RFC 5681 cwnd, the receiver's RFC 9293 window and the
//! sender's silly-window avoidance), and the segment itself.

use ppspp_core::time::Instant;

use super::TcpSender;
use crate::packet::{Body, Packet, SackBlocks, TcpSegment, TCP_OVERHEAD};

impl TcpSender {
    /// The data segment at `seq`, counted; `again` if it was sent before.
    /// It stops short of the next SACKed byte.
    pub(super) fn segment(&mut self, now: Instant, seq: u64, again: bool) -> Packet {
        let len = self.segment_len(seq);
        self.segment_of(now, seq, len, again)
    }

    /// As [`TcpSender::segment`], of `len` payload bytes.
    pub(super) fn segment_of(&mut self, now: Instant, seq: u64, len: u64, again: bool) -> Packet {
        let len32 = u32::try_from(len).expect("at most one MSS");
        let fin = self.carries_fin(seq, len);
        self.last_data_sent = Some(now);
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        if again {
            self.stats.retransmits += 1;
        }
        // RFC 6298 §5.1: any data sent starts a stopped timer.
        self.rto_deadline.get_or_insert(now + self.rto.rto());
        Packet {
            src: self.config.host,
            dst: self.config.peer,
            flow: self.config.flow,
            size: len32 + TCP_OVERHEAD,
            body: Body::Tcp(TcpSegment {
                seq,
                len: len32,
                ack: 0,
                sack: SackBlocks::default(),
                syn: false,
                fin,
                wnd: 0,
                records: self.stream.records_in(seq, seq + len),
                conn: self.config.conn,
            }),
        }
    }

    /// Payload bytes of the segment at `seq`: one MSS, less at the end of
    /// what is written or before a SACKed byte (nothing the receiver holds
    /// is sent again). 0 for a bare FIN.
    pub(super) fn segment_len(&self, seq: u64) -> u64 {
        let len = self.mss().min(self.stream.written().saturating_sub(seq));
        match self.board.next_sacked(seq) {
            Some(s) if s < seq + len => s - seq,
            _ => len,
        }
    }

    /// `seq` sent again (a hole or a timed-out segment).
    pub(super) fn retransmit(&mut self, now: Instant, seq: u64) -> Packet {
        let p = self.segment(now, seq, true);
        if let Body::Tcp(seg) = &p.body {
            let span = u64::from(seg.len) + u64::from(seg.fin);
            self.high_rxt = self.high_rxt.max(seq + span);
        }
        p
    }

    /// The segment at `snd_nxt`: new data, or going back N after a
    /// timeout (skipping what the receiver SACKed since); within the
    /// window if `windowed`.
    pub(super) fn send_next(&mut self, now: Instant, windowed: bool) -> Option<Packet> {
        while self.snd_nxt < self.snd_max {
            match self.board.sacked_range(self.snd_nxt) {
                Some((_, e)) => self.snd_nxt = e.min(self.snd_max),
                None => break,
            }
        }
        let seq = self.snd_nxt;
        if seq >= self.seq_end() {
            return None;
        }
        let fresh = seq == self.snd_max;
        if fresh && self.snd_una == self.snd_max {
            self.restart_after_idle(now);
        }
        let mut len = self.segment_len(seq);
        let window = if windowed {
            self.cwnd.min(self.snd_wnd)
        } else {
            self.snd_wnd
        };
        if seq - self.snd_una + len > window {
            // RFC 9293 §3.8.6.2.1, sender silly-window avoidance: a short
            // segment only if it fills at least half the largest window
            // advertised, or when the persist timer says we have waited.
            let room = self.snd_wnd.saturating_sub(seq - self.snd_una);
            let fits = room > 0 && room < len && room <= window;
            if !(fits && (room >= self.max_snd_wnd / 2 || self.probe_due)) {
                return None;
            }
            self.probe_due = false;
            len = room;
        }
        let span = len + u64::from(self.carries_fin(seq, len));
        self.snd_nxt += span;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        if fresh && self.timed.is_none() && !self.in_recovery {
            self.timed = Some((seq + span, now));
        }
        Some(self.segment_of(now, seq, len, !fresh))
    }
}
