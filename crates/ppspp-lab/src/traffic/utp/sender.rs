//! The sending half of a uTP connection: what is outstanding, what goes
//! out next, and the timer. Acknowledgements are in `sender_ack.rs`, the
//! window in `sender_cc.rs`, the application's side in `sender_stream.rs`.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use ppspp_core::time::Instant;

use super::super::stream::SendStream;
use super::delay::DelayHistory;
use super::rto::UtpRto;
use super::sender_config::{UtpSenderConfig, UtpSenderStats, MAX_OUTSTANDING_PACKETS};
use crate::agent::Agent;
use crate::packet::{Body, Packet, UtpPacket, UtpType};

/// A packet sent and not yet acknowledged (libutp's `OutgoingPacket`).
#[derive(Clone, Debug)]
pub(super) struct OutPacket {
    /// ST_DATA, ST_FIN or ST_SYN.
    pub kind: UtpType,
    /// Stream offset of its payload.
    pub offset: u64,
    /// Payload bytes.
    pub len: u32,
    /// Times sent.
    pub transmissions: u32,
    /// Taken as lost by a timeout: no longer counted in flight, to be sent
    /// again as the window allows.
    pub need_resend: bool,
    /// When last sent.
    pub sent_at: Instant,
}

/// A uTP sender: of a bulk transfer ([`UtpSender::new`]) or of what an
/// application writes ([`UtpSender::stream`]).
#[derive(Clone, Debug)]
pub struct UtpSender {
    pub(super) config: UtpSenderConfig,
    pub(super) started: bool,
    pub(super) stream: SendStream,
    /// A bulk transfer: complete when `total_bytes` are acknowledged, no
    /// ST_FIN. Else a stream, complete when its ST_FIN is acknowledged.
    pub(super) bulk: bool,
    /// Sent and not acknowledged, by sequence number.
    pub(super) outbuf: BTreeMap<u64, OutPacket>,
    /// The next sequence number to use.
    pub(super) seq_nr: u64,
    /// Stream offset of the first byte never sent.
    pub(super) next_offset: u64,
    pub(super) fin_sent: bool,
    /// The ST_SYN is acknowledged (always, without the handshake).
    pub(super) open: bool,
    /// Payload bytes in flight: sent, not acknowledged, not given up by a
    /// timeout (libutp `cur_window`).
    pub(super) cur_window: u64,
    /// The congestion window in bytes (libutp `max_window`).
    pub(super) max_window: u64,
    /// The receiver's last `wnd_size` (libutp `max_window_user`).
    pub(super) peer_window: u64,
    /// When a zero `peer_window` gives way to one packet.
    pub(super) zero_window_until: Option<Instant>,
    pub(super) slow_start: bool,
    pub(super) ssthresh: u64,
    /// When the window was last halved.
    pub(super) last_decay: Option<Instant>,
    /// When sending last stopped because the window was full.
    pub(super) last_maxed_out: Option<Instant>,
    /// Consecutive ST_STATEs repeating the last ack_nr (BEP 29's duplicate
    /// ACKs).
    pub(super) dup_acks: u32,
    /// Packets below this are not fast-resent again (libutp
    /// `fast_resend_seq_nr`).
    pub(super) fast_resend_seq_nr: u64,
    pub(super) delay: DelayHistory,
    pub(super) rto: UtpRto,
    pub(super) rto_deadline: Option<Instant>,
    /// Resends that go out at once, whatever the window (libutp calls
    /// `send_packet` directly for them).
    pub(super) resend_now: VecDeque<u64>,
    pub(super) stats: UtpSenderStats,
    pub(super) completed_at: Option<Instant>,
}

impl UtpSender {
    /// A bulk sender of `config.total_bytes` (endless if `None`) from
    /// `config.start`.
    pub fn new(config: UtpSenderConfig) -> UtpSender {
        let stream = SendStream::bulk(config.total_bytes);
        UtpSender::with_stream(config, stream, true)
    }

    /// The sender of an application's byte stream: it sends what
    /// [`UtpSender::write`] appends and an ST_FIN after
    /// [`UtpSender::close`]. `config.total_bytes` is not used.
    pub fn stream(config: UtpSenderConfig) -> UtpSender {
        UtpSender::with_stream(config, SendStream::default(), false)
    }

    fn with_stream(config: UtpSenderConfig, stream: SendStream, bulk: bool) -> UtpSender {
        assert!(config.packet_size > 0, "packets carry payload");
        assert!(!config.target.is_zero(), "a target delay above zero");
        // The ST_SYN is sequence number 0 and data starts at 1, so the
        // receiver's initial ack_nr (0) fits both cases.
        let seq_nr = if config.handshake { 0 } else { 1 };
        UtpSender {
            // libutp: "we need to fit one packet in the window when we
            // start the connection".
            max_window: u64::from(config.packet_size),
            peer_window: config.send_buffer,
            // libutp starts in slow start with ssthresh = opt_sndbuf.
            ssthresh: config.send_buffer,
            delay: DelayHistory::new(config.start),
            open: !config.handshake,
            config,
            started: false,
            stream,
            bulk,
            outbuf: BTreeMap::new(),
            seq_nr,
            next_offset: 0,
            fin_sent: false,
            cur_window: 0,
            zero_window_until: None,
            slow_start: true,
            last_decay: None,
            last_maxed_out: None,
            dup_acks: 0,
            fast_resend_seq_nr: seq_nr,
            rto: UtpRto::default(),
            rto_deadline: None,
            resend_now: VecDeque::new(),
            stats: UtpSenderStats::default(),
            completed_at: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &UtpSenderConfig {
        &self.config
    }

    /// The counters.
    pub fn stats(&self) -> &UtpSenderStats {
        &self.stats
    }

    /// The congestion window in bytes (libutp `max_window`).
    pub fn max_window(&self) -> u64 {
        self.max_window
    }

    /// Payload bytes in flight (libutp `cur_window`).
    pub fn cur_window(&self) -> u64 {
        self.cur_window
    }

    /// Whether still in libutp's slow start.
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    /// The queueing delay the controller sees (µs): the current-delay
    /// filter's minimum above the base.
    pub fn queuing_delay(&self) -> Duration {
        Duration::from_micros(self.delay.value())
    }

    /// The delay history.
    pub fn delay_history(&self) -> &DelayHistory {
        &self.delay
    }

    /// The timer in use (the RTO, backed off after expiries).
    pub fn timeout(&self) -> Duration {
        self.rto.timeout()
    }

    /// The smoothed RTT, once sampled.
    pub fn rtt(&self) -> Option<Duration> {
        self.rto.rtt()
    }

    /// Whether the ST_SYN is acknowledged (always, without the handshake).
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// When everything was acknowledged (a bulk transfer's bytes, or a
    /// closed stream's ST_FIN).
    pub fn completed_at(&self) -> Option<Instant> {
        self.completed_at
    }

    /// Whether everything is acknowledged.
    pub fn is_complete(&self) -> bool {
        self.completed_at.is_some()
    }

    pub(super) fn packet_size(&self) -> u64 {
        u64::from(self.config.packet_size)
    }

    /// The oldest unacknowledged sequence number (`seq_nr` if none).
    pub(super) fn oldest(&self) -> u64 {
        self.outbuf.keys().next().copied().unwrap_or(self.seq_nr)
    }

    /// libutp `is_full`: whether `bytes` more would exceed the window (the
    /// least of the congestion window, the send buffer and the receiver's
    /// window), or too many packets are outstanding. Notes when the window
    /// stopped sending: growth needs that (`sender_cc.rs`).
    pub(super) fn is_full(&mut self, now: Instant, bytes: u64) -> bool {
        let max_send = self
            .max_window
            .min(self.config.send_buffer)
            .min(self.peer_window);
        let full = self.seq_nr - self.oldest() >= MAX_OUTSTANDING_PACKETS
            || self.cur_window + bytes > max_send;
        if full {
            self.last_maxed_out = Some(now);
        }
        full
    }

    /// Sends the outstanding packet `seq` (again, if it went before).
    pub(super) fn send_packet(&mut self, now: Instant, seq: u64) -> Packet {
        let p = self.outbuf.get_mut(&seq).expect("an outstanding packet");
        // libutp: only a first transmission or a resend after a timeout
        // counts against the window again.
        if p.transmissions == 0 || p.need_resend {
            self.cur_window += u64::from(p.len);
        }
        p.need_resend = false;
        p.transmissions += 1;
        p.sent_at = now;
        let (kind, offset, len, again) = (p.kind, p.offset, p.len, p.transmissions > 1);
        if kind == UtpType::Syn {
            self.stats.syns_sent += 1;
        } else {
            self.stats.packets_sent += 1;
            self.stats.bytes_sent += u64::from(len);
            if again {
                self.stats.retransmits += 1;
            }
        }
        let end = offset + u64::from(len);
        let body = UtpPacket {
            kind,
            seq_nr: seq,
            // The sender half receives no data: nothing to ack.
            ack_nr: 0,
            timestamp: now.as_micros(),
            timestamp_difference: 0,
            wnd_size: 0,
            sack: None,
            offset,
            len,
            records: self.stream.records_in(offset, end),
            conn: self.config.conn,
        };
        Packet {
            src: self.config.host,
            dst: self.config.peer,
            flow: self.config.flow,
            size: body.wire_size(),
            body: Body::Utp(body),
        }
    }

    /// A new outstanding packet of `len` bytes at the stream's next offset.
    fn new_packet(&mut self, now: Instant, kind: UtpType, len: u64) -> u64 {
        // libutp `write_outgoing_packet`: with nothing outstanding, the
        // timer starts from this packet.
        if self.outbuf.is_empty() {
            self.rto_deadline = Some(now + self.rto.timeout());
        }
        let seq = self.seq_nr;
        self.seq_nr += 1;
        self.outbuf.insert(
            seq,
            OutPacket {
                kind,
                offset: self.next_offset,
                len: u32::try_from(len).expect("one packet"),
                transmissions: 0,
                need_resend: false,
                sent_at: now,
            },
        );
        self.next_offset += len;
        seq
    }

    /// The next packet the window allows (libutp `flush_packets`, then
    /// new data, then the ST_FIN).
    fn send_next(&mut self, now: Instant) -> Option<Packet> {
        // Packets a timeout gave up on go first, in order. libutp checks
        // these against a full packet (`is_full()`'s default).
        let pending = self
            .outbuf
            .iter()
            .find(|(_, p)| p.need_resend)
            .map(|(s, _)| *s);
        if let Some(seq) = pending {
            if self.is_full(now, self.packet_size()) {
                return None;
            }
            return Some(self.send_packet(now, seq));
        }
        let waiting = self.stream.written().saturating_sub(self.next_offset);
        if waiting > 0 {
            let len = waiting.min(self.packet_size());
            if self.is_full(now, len) {
                return None;
            }
            let seq = self.new_packet(now, UtpType::Data, len);
            return Some(self.send_packet(now, seq));
        }
        if self.stream.is_closed() && !self.fin_sent {
            if self.is_full(now, self.packet_size()) {
                return None;
            }
            self.fin_sent = true;
            let seq = self.new_packet(now, UtpType::Fin, 0);
            return Some(self.send_packet(now, seq));
        }
        None
    }
}

impl Agent for UtpSender {
    fn on_packet(&mut self, now: Instant, packet: Packet) {
        if let Body::Utp(p) = packet.body {
            // Only ST_STATE is the sender half's; data, FIN and SYN are
            // the receiver half's.
            if p.kind == UtpType::State && self.started && !self.is_complete() {
                self.on_state(now, &p);
            }
        }
    }

    fn on_timeout(&mut self, now: Instant) {
        if now >= self.config.start {
            self.started = true;
        }
        if self.is_complete() {
            return;
        }
        if self.zero_window_until.is_some_and(|t| t <= now) {
            // libutp: after 15 s of a zero window, try one packet.
            self.zero_window_until = None;
            self.peer_window = self.packet_size();
        }
        if self.rto_deadline.is_some_and(|d| d <= now) {
            self.on_rto(now);
        }
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        if now >= self.config.start {
            self.started = true;
        }
        if !self.started || self.is_complete() {
            return None;
        }
        while let Some(seq) = self.resend_now.pop_front() {
            if self.outbuf.get(&seq).is_some_and(|p| p.transmissions > 0) {
                return Some(self.send_packet(now, seq));
            }
        }
        if !self.open {
            if self.outbuf.is_empty() && self.seq_nr == 0 {
                // The ST_SYN, timed by libutp's initial 3 s.
                let seq = self.new_packet(now, UtpType::Syn, 0);
                return Some(self.send_packet(now, seq));
            }
            return None;
        }
        self.send_next(now)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        if !self.started {
            return Some(self.config.start);
        }
        if self.is_complete() {
            return None;
        }
        match (self.rto_deadline, self.zero_window_until) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

#[path = "sender_ack.rs"]
mod ack;

#[path = "sender_cc.rs"]
mod cc;

#[path = "sender_stream.rs"]
mod stream;
