//! The TCP model's sender as an application's byte stream: writes and the
//! FIN (RFC 9293 §3.6), the receiver's window with the persist timer (RFC
//! 9293 §3.8.6.1), and the restart window after idle (RFC 5681 §4.1).
//! BitTorrent's messages travel this way (issue 25).

use ppspp_core::time::Instant;

use super::TcpSender;
use crate::packet::{Body, Packet, SackBlocks, TcpSegment, TCP_OVERHEAD};

impl TcpSender {
    /// Appends `len` bytes standing for the application record `data` (a
    /// record ending at the new end of the stream; none if `data` is
    /// empty). Returns that end. Only for a [`TcpSender::stream`], before
    /// [`TcpSender::close`].
    pub fn write(&mut self, len: u64, data: Vec<u8>) -> u64 {
        assert!(!self.bulk, "a bulk sender has nothing to write");
        self.stream.write(len, data)
    }

    /// Ends the stream: a FIN follows the last byte written.
    pub fn close(&mut self) {
        assert!(!self.bulk, "a bulk sender is not closed");
        self.stream.close();
    }

    /// Bytes written and not yet sent: what waits in the send buffer.
    pub fn unsent(&self) -> u64 {
        self.stream.written().saturating_sub(self.snd_nxt)
    }

    /// Bytes written and not yet acknowledged.
    pub fn unacked(&self) -> u64 {
        self.stream.written().saturating_sub(self.snd_una)
    }

    /// The receiver's advertised window.
    pub fn send_window(&self) -> u64 {
        self.snd_wnd
    }

    /// Takes the window an ACK advertised; returns whether it changed (an
    /// ACK that changes the window is not a duplicate, RFC 5681 §2). An
    /// open window stops the persist timer.
    pub(super) fn on_window(&mut self, wnd: u64) -> bool {
        let changed = wnd != self.snd_wnd;
        self.snd_wnd = wnd;
        self.max_snd_wnd = self.max_snd_wnd.max(wnd);
        if wnd > 0 {
            self.persist = None;
            self.persist_backoff = 0;
        }
        changed
    }

    /// Whether the segment of `len` bytes at `seq` carries the FIN: the
    /// stream is closed and it reaches the last byte written.
    pub(super) fn carries_fin(&self, seq: u64, len: u64) -> bool {
        self.stream.is_closed() && seq + len == self.stream.written()
    }

    /// RFC 5681 §4.1: after more than one RTO without sending, cwnd is
    /// cut to the restart window, RW = min(IW, cwnd), so that an idle
    /// connection does not burst a stale window into the network.
    pub(super) fn restart_after_idle(&mut self, now: Instant) {
        let Some(last) = self.last_data_sent else {
            return;
        };
        let rw = u64::from(self.config.initial_window) * self.mss();
        if now.saturating_since(last) > self.rto.rto() && self.cwnd > rw {
            self.cwnd = rw;
            self.stats.idle_restarts += 1;
        }
    }

    /// RFC 9293 §3.8.6.1: with data waiting, nothing in flight and a
    /// window too small for the next segment, probe the window when the
    /// persist timer fires (RTO, doubling), or a lost window update would
    /// stall the connection for good.
    pub(super) fn arm_persist(&mut self, now: Instant) {
        let waiting = self.snd_nxt < self.seq_end();
        let blocked = self.snd_wnd < self.segment_len(self.snd_nxt).max(1);
        if waiting && blocked && self.snd_una == self.snd_max && self.persist.is_none() {
            let backoff = 1u32 << self.persist_backoff.min(6);
            self.persist = Some(now + self.rto.rto() * backoff);
        }
    }

    /// The persist timer fired: a probe is due (a zero window), or a
    /// segment that fills a small one.
    pub(super) fn on_persist_timeout(&mut self, now: Instant) {
        if self.persist.is_some_and(|d| d <= now) {
            self.persist = None;
            self.persist_backoff += 1;
            self.probe_due = true;
        }
    }

    /// A window probe as Linux sends it: one byte the receiver already
    /// has (below `snd_una`), which it answers with an ACK carrying its
    /// window, and which adds nothing to the stream.
    pub(super) fn window_probe(&mut self) -> Option<Packet> {
        let seq = self.snd_una.checked_sub(1)?;
        self.stats.window_probes += 1;
        Some(Packet {
            src: self.config.host,
            dst: self.config.peer,
            flow: self.config.flow,
            size: 1 + TCP_OVERHEAD,
            body: Body::Tcp(TcpSegment {
                seq,
                len: 1,
                ack: 0,
                sack: SackBlocks::default(),
                syn: false,
                fin: false,
                wnd: 0,
                records: Vec::new(),
                conn: self.config.conn,
            }),
        })
    }
}
