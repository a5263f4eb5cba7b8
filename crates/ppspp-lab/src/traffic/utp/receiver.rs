//! The receiving half of a uTP connection, as libutp's
//! `utp_process_incoming` treats ST_DATA, ST_FIN and ST_SYN: packets in
//! order are delivered, later ones held (at most 1023 ahead, libutp's
//! `REORDER_BUFFER_MAX_SIZE`), and every packet is answered by an ST_STATE
//! carrying the cumulative ack_nr, the one-way delay of the last packet
//! (`timestamp_difference`, the sender's LEDBAT signal), the receive
//! window, and a selective ACK while packets are held. libutp defers its
//! ACKs only to the end of the current batch of UDP reads
//! (`utp_issue_deferred_acks`); packets reach the lab's hosts one at a
//! time, so that is one ST_STATE per packet.

use std::collections::BTreeMap;

use ppspp_core::time::Instant;

use super::super::stream::RecvStream;
use crate::agent::Agent;
use crate::packet::{Body, FlowId, HostId, Packet, SelectiveAck, StreamRecord, UtpPacket, UtpType};

/// How a [`UtpReceiver`] behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UtpReceiverConfig {
    /// The receiver's host: its ST_STATEs come from here.
    pub host: HostId,
    /// The sender's host.
    pub peer: HostId,
    /// The flow, shared by data and ACKs.
    pub flow: FlowId,
    /// The receive buffer in bytes (libutp `opt_rcvbuf`, 1 MiB): the
    /// window advertised is what of it the application has not read.
    pub buffer: u64,
    /// The application reads every byte as it is delivered, so the window
    /// never closes (bulk sinks). Off, it reads with
    /// [`UtpReceiver::read`].
    pub read_on_delivery: bool,
    /// Packets held beyond ack_nr + 1 at most this far ahead; later ones
    /// are dropped (libutp: 1023, `seqnr > 0x3ff`).
    pub max_reorder: u64,
    /// The connection id its ST_STATEs carry (`packet::conn_id`; 0 for
    /// cross traffic).
    pub conn: u64,
}

impl UtpReceiverConfig {
    /// libutp's defaults: a 1 MiB buffer read on delivery, 1023 packets of
    /// reordering.
    pub fn new(host: HostId, peer: HostId, flow: FlowId) -> UtpReceiverConfig {
        UtpReceiverConfig {
            host,
            peer,
            flow,
            buffer: 1 << 20,
            read_on_delivery: true,
            max_reorder: 1023,
            conn: 0,
        }
    }
}

/// Counters of a [`UtpReceiver`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UtpReceiverStats {
    /// ST_DATA and ST_FIN packets received.
    pub packets: u64,
    /// Packets already delivered or held (resends).
    pub duplicates: u64,
    /// Packets held above a gap.
    pub out_of_order: u64,
    /// Packets too far ahead, or past the ST_FIN, dropped.
    pub dropped: u64,
    /// ST_STATEs sent.
    pub acks_sent: u64,
    /// ST_SYNs answered.
    pub syns: u64,
}

/// A packet held above a gap.
#[derive(Clone, Debug)]
struct Held {
    end: u64,
}

/// A uTP receiver: the bytes delivered in order are the goodput.
#[derive(Clone, Debug)]
pub struct UtpReceiver {
    config: UtpReceiverConfig,
    /// The last sequence number received in order (the ST_SYN's 0 to
    /// begin with).
    ack_nr: u64,
    /// Packets above `ack_nr + 1`, by sequence number.
    held: BTreeMap<u64, Held>,
    /// Stream bytes delivered in order.
    delivered: u64,
    /// The application has read up to here.
    read: u64,
    /// The window last advertised.
    advertised: u64,
    /// The ST_FIN's sequence number, once seen (libutp `eof_pkt`).
    fin_seq: Option<u64>,
    /// One-way delay of the last packet (µs), echoed in every ST_STATE
    /// (libutp `reply_micro`).
    reply_micro: u64,
    /// ST_STATEs to send, each built from the state when it goes.
    acks_due: u32,
    stream: RecvStream,
    stats: UtpReceiverStats,
}

impl UtpReceiver {
    /// A receiver expecting data packet 1 first.
    pub fn new(config: UtpReceiverConfig) -> UtpReceiver {
        UtpReceiver {
            advertised: config.buffer,
            config,
            ack_nr: 0,
            held: BTreeMap::new(),
            delivered: 0,
            read: 0,
            fin_seq: None,
            reply_micro: 0,
            acks_due: 0,
            stream: RecvStream::default(),
            stats: UtpReceiverStats::default(),
        }
    }

    /// Payload bytes received in order so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// The counters.
    pub fn stats(&self) -> &UtpReceiverStats {
        &self.stats
    }

    /// The last sequence number received in order.
    pub fn ack_nr(&self) -> u64 {
        self.ack_nr
    }

    /// Sequence numbers held above a gap, in order.
    pub fn held(&self) -> impl Iterator<Item = u64> + '_ {
        self.held.keys().copied()
    }

    /// Whether the ST_FIN and everything before it are in.
    pub fn is_finished(&self) -> bool {
        self.fin_seq.is_some_and(|f| self.ack_nr >= f)
    }

    /// The next application record the stream is in order for.
    pub fn take_record(&mut self) -> Option<StreamRecord> {
        self.stream.take()
    }

    /// Bytes delivered and not yet read by the application.
    pub fn unread(&self) -> u64 {
        self.delivered - self.read
    }

    /// The window to advertise: the buffer less what is unread (libutp
    /// `get_rcv_window`).
    pub fn window(&self) -> u64 {
        self.config.buffer.saturating_sub(self.unread())
    }

    /// The application reads up to `n` delivered bytes; if the window grew
    /// past what was last advertised, an ST_STATE says so (libutp
    /// `utp_read_drained`).
    pub fn read(&mut self, n: u64) {
        self.read = (self.read + n).min(self.delivered);
        if self.window() > self.advertised {
            self.acks_due += 1;
        }
    }

    /// The selective ACK: bit `i` for packet `ack_nr + 2 + i` held. None
    /// when nothing is held or the stream is complete (libutp sends no
    /// EACK then).
    pub fn selective_ack(&self) -> Option<SelectiveAck> {
        if self.held.is_empty() || self.is_finished() {
            return None;
        }
        let first = self.ack_nr + 2;
        let mut mask = 0u32;
        for seq in self
            .held
            .range(first..first + SelectiveAck::BITS)
            .map(|h| *h.0)
        {
            mask |= 1 << (seq - first);
        }
        Some(SelectiveAck(mask))
    }

    fn on_data(&mut self, now: Instant, p: UtpPacket) {
        self.stats.packets += 1;
        if p.seq_nr <= self.ack_nr {
            // Old (a resend of what is in): ack so the sender learns where
            // we are.
            self.stats.duplicates += 1;
            self.acks_due += 1;
            return;
        }
        let ahead = p.seq_nr - self.ack_nr - 1;
        if ahead >= self.config.max_reorder || self.fin_seq.is_some_and(|f| p.seq_nr > f) {
            self.stats.dropped += 1;
            return;
        }
        // libutp measures the delay of every packet it takes.
        self.reply_micro = now.as_micros().saturating_sub(p.timestamp);
        if p.kind == UtpType::Fin && self.fin_seq.is_none() {
            self.fin_seq = Some(p.seq_nr);
        }
        let end = p.offset + u64::from(p.len);
        if ahead == 0 {
            self.stream.offer(p.records);
            self.ack_nr = p.seq_nr;
            self.delivered = self.delivered.max(end);
            while let Some(h) = self.held.remove(&(self.ack_nr + 1)) {
                self.ack_nr += 1;
                self.delivered = self.delivered.max(h.end);
            }
            self.on_delivered();
        } else if self.held.contains_key(&p.seq_nr) {
            // libutp drops a duplicate of a held packet without an ACK.
            self.stats.duplicates += 1;
            return;
        } else {
            self.stats.out_of_order += 1;
            self.stream.offer(p.records);
            self.held.insert(p.seq_nr, Held { end });
        }
        self.acks_due += 1;
    }

    /// The in-order point moved: records become readable; an application
    /// that reads on delivery has read.
    fn on_delivered(&mut self) {
        self.stream.advance(self.delivered);
        if self.config.read_on_delivery {
            self.read = self.delivered;
        }
    }
}

impl Agent for UtpReceiver {
    fn on_packet(&mut self, now: Instant, packet: Packet) {
        let Body::Utp(p) = packet.body else {
            return;
        };
        match p.kind {
            UtpType::Data | UtpType::Fin => self.on_data(now, p),
            UtpType::Syn => {
                // Every ST_SYN is answered (a repeated one means our
                // ST_STATE was lost); its delay is the first sample.
                self.stats.syns += 1;
                self.reply_micro = now.as_micros().saturating_sub(p.timestamp);
                self.acks_due += 1;
            }
            // ST_STATE is the sender half's.
            UtpType::State | UtpType::Reset => {}
        }
    }

    fn on_timeout(&mut self, _now: Instant) {}

    fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        if self.acks_due == 0 {
            return None;
        }
        self.acks_due -= 1;
        self.stats.acks_sent += 1;
        let wnd = self.window();
        self.advertised = wnd;
        let body = UtpPacket {
            kind: UtpType::State,
            seq_nr: 0,
            ack_nr: self.ack_nr,
            timestamp: now.as_micros(),
            timestamp_difference: self.reply_micro,
            wnd_size: wnd,
            sack: self.selective_ack(),
            offset: 0,
            len: 0,
            records: Vec::new(),
            conn: self.config.conn,
        };
        Some(Packet {
            src: self.config.host,
            dst: self.config.peer,
            flow: self.config.flow,
            size: body.wire_size(),
            body: Body::Utp(body),
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

#[cfg(test)]
#[path = "receiver_tests.rs"]
mod tests;
