//! The sending end of the TCP model: a bulk sender with slow start (RFC
//! 5681), NewReno fast recovery (RFC 6582), the RFC 6298 retransmission
//! timer, and congestion avoidance by a [`TcpCongestion`] policy (NewReno
//! or CUBIC, `cc/`).

use std::collections::VecDeque;
use std::time::Duration;

use ppspp_core::time::Instant;

use super::super::stream::SendStream;
use super::cc::TcpCongestion;
use super::rto::RtoEstimator;
use super::scoreboard::Scoreboard;
use crate::agent::Agent;
use crate::packet::{Body, Packet, SackBlocks};

pub use super::sender_config::{TcpSenderConfig, TcpSenderStats, MSS};

/// A TCP sender: of a bulk transfer ([`TcpSender::new`]) or of the bytes
/// an application writes ([`TcpSender::stream`]). Sequence numbers count
/// payload bytes from 0; a FIN takes one more.
#[derive(Clone, Debug)]
pub struct TcpSender {
    config: TcpSenderConfig,
    started: bool,
    /// What there is to send.
    stream: SendStream,
    /// A bulk transfer: complete when `total_bytes` are acknowledged, no
    /// FIN. Else a stream, complete when its FIN is acknowledged.
    bulk: bool,
    /// The receiver's last advertised window (RFC 9293 SND.WND), from
    /// `snd_una`.
    snd_wnd: u64,
    /// When the last data segment went out (RFC 5681 §4.1's idle test).
    last_data_sent: Option<Instant>,
    /// When the persist timer fires (zero window, nothing in flight).
    persist: Option<Instant>,
    /// Expiries of the persist timer since the window last opened.
    persist_backoff: u32,
    /// The persist timer fired: probe a zero window, or send what fits in
    /// a small one (RFC 9293 §3.8.6.2.1's override).
    probe_due: bool,
    /// The largest window the receiver advertised (RFC 9293
    /// §3.8.6.2.1's Max(SND.WND)).
    max_snd_wnd: u64,
    /// Oldest unacknowledged byte.
    snd_una: u64,
    /// Next byte to send; below `snd_max` while going back after a timeout.
    snd_nxt: u64,
    /// One past the highest byte ever sent.
    snd_max: u64,
    cwnd: u64,
    ssthresh: u64,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582's `recover`, kept as one past the highest byte sent when
    /// the last congestion episode (fast retransmit or timeout) began;
    /// `None` before the first. The episode lasts until it is acked.
    recover: Option<u64>,
    /// A partial ACK has been seen in this recovery: only the first one
    /// restarts the timer (RFC 6582 §3.2 and §4, the "Impatient" variant).
    partial_seen: bool,
    rto: RtoEstimator,
    rto_deadline: Option<Instant>,
    /// The segment being timed: its end and when it was sent. Only one at a
    /// time, never a retransmitted one (Karn's rule).
    timed: Option<(u64, Instant)>,
    /// Segments to retransmit ahead of anything else, ignoring cwnd.
    retx: VecDeque<u64>,
    cc: Box<dyn TcpCongestion>,
    /// What the receiver SACKed (empty without SACK).
    board: Scoreboard,
    /// RFC 6675's HighRxt: one past the highest byte retransmitted in this
    /// SACK recovery.
    high_rxt: u64,
    handshake: Handshake,
    stats: TcpSenderStats,
    completed_at: Option<Instant>,
}

impl TcpSender {
    /// A bulk sender of `config.total_bytes` (endless if `None`) that
    /// starts at `config.start`.
    pub fn new(config: TcpSenderConfig) -> TcpSender {
        let stream = SendStream::bulk(config.total_bytes);
        TcpSender::with_stream(config, stream, true)
    }

    /// The sender of an application's byte stream: it sends what
    /// [`TcpSender::write`] appends, from `config.start`, and a FIN after
    /// [`TcpSender::close`]. `config.total_bytes` is not used.
    pub fn stream(config: TcpSenderConfig) -> TcpSender {
        TcpSender::with_stream(config, SendStream::default(), false)
    }

    fn with_stream(config: TcpSenderConfig, stream: SendStream, bulk: bool) -> TcpSender {
        assert!(
            config.mss > 0 && config.initial_window > 0,
            "MSS and IW must be positive"
        );
        TcpSender {
            cwnd: u64::from(config.initial_window) * u64::from(config.mss),
            ssthresh: config.initial_ssthresh,
            rto: RtoEstimator::new(config.rto),
            cc: config.cc.build(),
            board: Scoreboard::default(),
            high_rxt: 0,
            stream,
            bulk,
            snd_wnd: config.rwnd,
            last_data_sent: None,
            persist: None,
            persist_backoff: 0,
            probe_due: false,
            max_snd_wnd: 0,
            handshake: if config.handshake {
                Handshake::Due
            } else {
                Handshake::Open
            },
            config,
            started: false,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            partial_seen: false,
            rto_deadline: None,
            timed: None,
            retx: VecDeque::new(),
            stats: TcpSenderStats::default(),
            completed_at: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &TcpSenderConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &TcpSenderStats {
        &self.stats
    }

    /// Congestion window in bytes (inflated during fast recovery).
    pub fn cwnd(&self) -> u64 {
        self.cwnd
    }

    /// Slow-start threshold in bytes.
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// Smoothed RTT, once measured.
    pub fn srtt(&self) -> Option<Duration> {
        self.rto.srtt()
    }

    /// Current retransmission timeout (backed off after expiries).
    pub fn rto(&self) -> Duration {
        self.rto.rto()
    }

    /// Whether in NewReno fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// Bytes sent and not yet acknowledged (FlightSize).
    pub fn flight_size(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// When the last byte was acknowledged, for a finite transfer.
    pub fn completed_at(&self) -> Option<Instant> {
        self.completed_at
    }

    /// Whether a finite transfer is fully acknowledged.
    pub fn is_complete(&self) -> bool {
        self.completed_at.is_some()
    }

    /// One past the last sequence number: the data written, and the FIN
    /// once the stream is closed.
    fn seq_end(&self) -> u64 {
        self.stream.written() + u64::from(self.stream.is_closed())
    }

    /// Whether everything is acknowledged: the whole bulk transfer, or a
    /// closed stream's FIN.
    fn all_acked(&self) -> bool {
        (self.bulk && self.config.total_bytes.is_some() || self.stream.is_closed())
            && self.snd_una >= self.seq_end()
    }

    fn mss(&self) -> u64 {
        u64::from(self.config.mss)
    }

    /// RFC 6298 §5.2/5.3: off when all is acknowledged, else restarted.
    fn restart_timer(&mut self, now: Instant) {
        self.rto_deadline = (self.snd_una < self.snd_max).then(|| now + self.rto.rto());
    }

    fn on_ack(&mut self, now: Instant, ack: u64, sack: SackBlocks, wnd: u64) {
        if ack > self.snd_max || ack < self.snd_una || self.is_complete() {
            return;
        }
        let window_update = self.on_window(wnd);
        if self.config.sack {
            for block in sack.iter() {
                self.board.add(ack, self.snd_max, block);
            }
            self.board.advance(ack);
        }
        if ack == self.snd_una {
            // RFC 5681 §2: a duplicate ACK acks nothing new while data is
            // outstanding, and does not change the window.
            if self.snd_una < self.snd_max && !window_update {
                self.on_dup_ack(now);
            }
            return;
        }
        let acked = ack - self.snd_una;
        self.snd_una = ack;
        self.stream.acked(ack);
        self.snd_nxt = self.snd_nxt.max(ack);
        self.stats.bytes_acked += acked;
        if let Some((end, sent)) = self.timed {
            if ack >= end {
                self.rto.sample(now.saturating_since(sent));
                self.timed = None;
            }
        }
        let mss = self.mss();
        if self.in_recovery && self.config.sack && self.recover.is_some_and(|r| ack < r) {
            // RFC 6675 §5: a partial ACK changes nothing but the scoreboard
            // (NextSeg() picks what to send); it restarts the timer (RFC
            // 6298 §5.3).
            self.restart_timer(now);
        } else if self.in_recovery && self.recover.is_some_and(|r| ack < r) {
            // RFC 6582 §3.2, partial acknowledgment: the next hole is lost
            // too. Retransmit it, deflate by what was acked (add back one
            // MSS if that was at least one), stay in recovery: no new cut.
            self.retx.push_back(self.snd_una);
            self.cwnd = self.cwnd.saturating_sub(acked);
            if acked >= mss {
                self.cwnd += mss;
            }
            self.cwnd = self.cwnd.max(mss);
            if !self.partial_seen {
                self.partial_seen = true;
                self.restart_timer(now);
            }
        } else {
            if self.in_recovery {
                // RFC 6582 §3.2, full acknowledgment: leave recovery with
                // cwnd = min(ssthresh, max(FlightSize, SMSS) + SMSS), which
                // avoids a burst when little is in flight.
                self.in_recovery = false;
                self.cwnd = self.ssthresh.min(self.flight_size().max(mss) + mss);
            } else if self.cwnd < self.ssthresh {
                // RFC 5681 §3.1 slow start, eq. (2).
                self.cwnd += acked.min(mss);
            } else {
                // Congestion avoidance: the policy's (RFC 5681 eq. 3 for
                // NewReno, RFC 9438 §4.2-4.3 for CUBIC).
                let srtt = self.rto.srtt();
                self.cwnd = self.cc.avoidance(now, self.cwnd, acked, mss, srtt);
            }
            // Growth past the receiver's window would be meaningless.
            self.cwnd = self.cwnd.min(self.config.rwnd.max(mss));
            self.dupacks = 0;
            self.restart_timer(now);
        }
        if self.all_acked() {
            self.completed_at = Some(now);
            self.rto_deadline = None;
        }
    }

    fn on_dup_ack(&mut self, now: Instant) {
        self.stats.dup_acks += 1;
        let mss = self.mss();
        if self.in_recovery {
            // RFC 5681 §3.2 step 4: each duplicate means a segment left the
            // network; inflate cwnd so a new one may go. With SACK the pipe
            // estimate counts what left instead (RFC 6675 §5).
            if !self.config.sack {
                self.cwnd += mss;
            }
            return;
        }
        self.dupacks += 1;
        // RFC 6582 §3.2 step 1: only if the ACK covers more than `recover`
        // (strictly: duplicates of exactly `recover` are typically the
        // receiver's answers to the go-back-N resends after a timeout).
        let covers_more = self.recover.is_none_or(|r| self.snd_una > r);
        if self.config.sack {
            if covers_more && self.sack_loss_detected() {
                self.enter_sack_recovery(now);
            }
        } else if self.dupacks == 3 && covers_more {
            // RFC 5681 §3.2 steps 2-3: one cut (eq. 4, or the policy's),
            // then inflate by the three segments the duplicates say have
            // left.
            self.ssthresh = self.cc.congestion(now, self.cwnd, self.flight_size(), mss);
            self.cwnd = self.ssthresh + 3 * mss;
            self.recover = Some(self.snd_max);
            self.in_recovery = true;
            self.partial_seen = false;
            self.retx.push_back(self.snd_una);
            self.timed = None;
            self.stats.fast_retransmits += 1;
        }
    }

    /// The retransmission timer expired (RFC 6298 §5.4-5.6, RFC 5681 §3.1,
    /// RFC 6582 §3.2 on retransmit timeouts).
    fn on_rto(&mut self, now: Instant) {
        self.stats.timeouts += 1;
        let mss = self.mss();
        // RFC 5681 eq. (4), but once per congestion episode: an expiry
        // during fast recovery, or again before the data outstanding at
        // the last timeout is acked, keeps ssthresh (as Linux's
        // tcp_enter_loss does). RFC 5681 §3.1 already holds it for repeated
        // timeouts; in recovery FlightSize has grown by every segment the
        // inflated window let out and would not reflect the path.
        if self.recover.is_none_or(|r| self.snd_una >= r) {
            self.ssthresh = self.cc.congestion(now, self.cwnd, self.flight_size(), mss);
        }
        self.cc.timeout();
        self.cwnd = mss;
        // RFC 2018 §8: a receiver may renege on what it SACKed, so a
        // timeout forgets it; ACKs to the resends report it again.
        self.board.clear();
        self.recover = Some(self.snd_max);
        self.in_recovery = false;
        self.dupacks = 0;
        self.retx.clear();
        self.timed = None;
        // Go back N: resend everything from the oldest unacknowledged byte,
        // in slow start; the receiver's cumulative ACKs skip what it holds.
        self.snd_nxt = self.snd_una;
        self.rto.back_off();
        self.rto_deadline = Some(now + self.rto.rto());
    }
}

impl Agent for TcpSender {
    fn on_packet(&mut self, now: Instant, packet: Packet) {
        if let Body::Tcp(seg) = packet.body {
            if seg.syn {
                self.on_syn_ack(now);
            } else if seg.len == 0 && !seg.fin && self.started && self.is_open() {
                self.on_ack(now, seg.ack, seg.sack, seg.wnd);
            }
        }
    }

    fn on_timeout(&mut self, now: Instant) {
        if now >= self.config.start {
            self.started = true;
        }
        self.on_persist_timeout(now);
        if self.rto_deadline.is_some_and(|d| d <= now) && !self.is_complete() {
            if self.is_open() {
                self.on_rto(now);
            } else {
                self.on_syn_timeout(now);
            }
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        if now >= self.config.start {
            self.started = true;
        }
        if !self.started || self.is_complete() {
            return None;
        }
        if !self.is_open() {
            return self.poll_syn(now);
        }
        // Fast retransmits and partial-ACK retransmits go regardless of
        // cwnd (RFC 5681 §3.2 step 3, RFC 6582 §3.2 partial ACKs).
        while let Some(seq) = self.retx.pop_front() {
            if seq >= self.snd_una && seq < self.snd_max {
                return Some(self.retransmit(now, seq));
            }
        }
        if self.probe_due && self.snd_wnd == 0 {
            self.probe_due = false;
            if let Some(p) = self.window_probe() {
                return Some(p);
            }
        }
        if self.in_recovery && self.config.sack {
            return self.next_segment(now);
        }
        let next = self.send_next(now, true);
        if next.is_none() {
            self.arm_persist(now);
        }
        next
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if !self.started {
            Some(self.config.start)
        } else if self.is_complete() {
            None
        } else {
            match (self.rto_deadline, self.persist) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        }
    }
}

#[path = "sender_sack.rs"]
mod sack;

#[path = "sender_handshake.rs"]
mod handshake;

#[path = "sender_stream.rs"]
mod stream;

#[path = "sender_segments.rs"]
mod segments;
use handshake::Handshake;
