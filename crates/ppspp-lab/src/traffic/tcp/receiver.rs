//! The receiving end of the TCP model: cumulative ACKs (RFC 9293),
//! out-of-order data kept as byte ranges, the ACK generation rules of RFC
//! 5681 §4.2, and the receive window; the application's side (records,
//! reads, the FIN) is in `receiver_stream.rs`.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use ppspp_core::time::Instant;

use super::super::stream::RecvStream;
use crate::agent::Agent;
use crate::packet::{
    Body, FlowId, HostId, Packet, SackBlocks, TcpSegment, TCP_OVERHEAD, TCP_SYN_SIZE,
};

/// The delayed-ACK timer of Linux (`TCP_DELACK_MIN`, 40 ms), well inside the
/// 500 ms RFC 5681 §4.2 allows.
pub const DEFAULT_ACK_DELAY: Duration = Duration::from_millis(40);

/// How a [`TcpReceiver`] behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TcpReceiverConfig {
    /// The receiver's host: its ACKs come from here.
    pub host: HostId,
    /// The sender's host: ACKs go there.
    pub peer: HostId,
    /// The flow, shared by data and ACKs.
    pub flow: FlowId,
    /// `None` (the default): ACK every segment at once. `Some(d)`: delayed
    /// ACKs (RFC 5681 §4.2, RFC 1122 §4.2.3.2), one ACK per two in-order
    /// segments or `d` after an unacknowledged one. Off by default because
    /// the sender grows cwnd by one MSS per ACK (RFC 5681 §3.1): with an
    /// ACK per segment slow start doubles per RTT, as Linux's does with
    /// delayed ACKs since it counts acknowledged segments, not ACKs.
    pub ack_delay: Option<Duration>,
    /// At most this many disjoint out-of-order ranges are kept; a segment
    /// that would open one more is dropped (and still answered by a
    /// duplicate ACK), like a full reassembly queue.
    pub max_ranges: usize,
    /// Report the out-of-order ranges held in SACK blocks (RFC 2018) on
    /// every ACK while there are any.
    pub sack: bool,
    /// The receive buffer in bytes: the window is what of it the
    /// application has not read (RFC 9293 §3.8.6); data beyond its right
    /// edge is dropped.
    pub buffer: u64,
    /// The connection id its ACKs carry (`packet::conn_id`; 0 for cross
    /// traffic).
    pub conn: u64,
    /// The application reads every byte as it is delivered, so the window
    /// never closes (bulk sinks, BitTorrent). Off, it reads with
    /// [`TcpReceiver::read`].
    pub read_on_delivery: bool,
}

impl TcpReceiverConfig {
    /// ACK every segment, keep up to 1024 out-of-order ranges.
    pub fn new(host: HostId, peer: HostId, flow: FlowId) -> TcpReceiverConfig {
        TcpReceiverConfig {
            host,
            peer,
            flow,
            ack_delay: None,
            max_ranges: 1024,
            sack: false,
            buffer: 1 << 30,
            conn: 0,
            read_on_delivery: true,
        }
    }
}

/// Counters of a [`TcpReceiver`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpReceiverStats {
    /// Data segments received.
    pub segments: u64,
    /// Segments that carried nothing new (all below the cumulative ACK).
    pub duplicates: u64,
    /// Segments that arrived above a gap.
    pub out_of_order: u64,
    /// Out-of-order segments dropped because `max_ranges` was reached.
    pub dropped: u64,
    /// ACKs sent, duplicates included.
    pub acks_sent: u64,
    /// Segments (or their tails) dropped beyond the window's right edge.
    pub beyond_window: u64,
}

/// An ACK waiting to be sent.
#[derive(Clone, Copy, Debug)]
struct PendingAck {
    /// The cumulative ACK.
    ack: u64,
    sack: SackBlocks,
    /// A SYN-ACK.
    syn: bool,
    /// The window advertised.
    wnd: u64,
}

/// A TCP receiver: the bytes delivered in order are the flow's goodput.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    config: TcpReceiverConfig,
    /// Next byte expected: the cumulative ACK.
    rcv_nxt: u64,
    /// Out-of-order data above `rcv_nxt`: start → end, disjoint, not
    /// adjacent.
    ooo: BTreeMap<u64, u64>,
    /// In-order segments not yet acknowledged (delayed ACKs).
    unacked: u32,
    /// When the delayed ACK is due.
    ack_deadline: Option<Instant>,
    /// Starts of out-of-order ranges, the most recently grown first (RFC
    /// 2018 §4's block order); stale starts are skipped when read.
    recent: VecDeque<u64>,
    /// ACKs to send, oldest first.
    out: VecDeque<PendingAck>,
    /// The application has read up to here.
    read: u64,
    /// The window last advertised.
    advertised: u64,
    /// Where the sender's FIN is (one past its last data byte), once seen.
    fin_at: Option<u64>,
    /// The application's records.
    stream: RecvStream,
    stats: TcpReceiverStats,
}

impl TcpReceiver {
    /// A receiver expecting byte 0 first.
    pub fn new(config: TcpReceiverConfig) -> TcpReceiver {
        TcpReceiver {
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            unacked: 0,
            ack_deadline: None,
            recent: VecDeque::new(),
            out: VecDeque::new(),
            read: 0,
            advertised: config.buffer,
            fin_at: None,
            stream: RecvStream::default(),
            config,
            stats: TcpReceiverStats::default(),
        }
    }

    /// Payload bytes received in order so far (the cumulative ACK, less
    /// the FIN's sequence number once it is in).
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt.min(self.fin_at.unwrap_or(u64::MAX))
    }

    /// The counters.
    pub fn stats(&self) -> &TcpReceiverStats {
        &self.stats
    }

    /// Out-of-order ranges held, as `[start, end)`, in order.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.ooo.iter().map(|(s, e)| (*s, *e))
    }

    /// Queues a cumulative ACK now; it covers any delayed one.
    fn ack_now(&mut self) {
        let sack = if self.config.sack {
            let ooo = &self.ooo;
            self.recent.retain(|s| ooo.contains_key(s));
            SackBlocks::new(self.recent.iter().map(|s| (*s, ooo[s])))
        } else {
            SackBlocks::default()
        };
        let wnd = self.window();
        self.advertised = wnd;
        self.out.push_back(PendingAck {
            ack: self.rcv_nxt,
            sack,
            syn: false,
            wnd,
        });
        self.unacked = 0;
        self.ack_deadline = None;
    }

    /// Keeps `[s, e)` above a gap, merged with the ranges it touches.
    /// Returns false if it was dropped for want of room.
    fn insert(&mut self, mut s: u64, mut e: u64) -> bool {
        let pred = self.ooo.range(..=s).next_back().map(|(a, b)| (*a, *b));
        let pred = pred.filter(|&(_, pe)| pe >= s);
        let touches_succ = self.ooo.range(s..).next().is_some_and(|(ns, _)| *ns <= e);
        if pred.is_none() && !touches_succ && self.ooo.len() >= self.config.max_ranges {
            return false;
        }
        if let Some((ps, pe)) = pred {
            self.ooo.remove(&ps);
            s = ps;
            e = e.max(pe);
        }
        while let Some((ns, ne)) = self.ooo.range(s..).next().map(|(a, b)| (*a, *b)) {
            if ns > e {
                break;
            }
            self.ooo.remove(&ns);
            e = e.max(ne);
        }
        self.ooo.insert(s, e);
        true
    }

    fn on_data(&mut self, now: Instant, seg: TcpSegment) {
        self.stats.segments += 1;
        let seq = seg.seq;
        let mut end = seq + u64::from(seg.len) + u64::from(seg.fin);
        if end <= self.rcv_nxt {
            // Old data (a spurious or go-back-N retransmission, a window
            // probe): ACK at once so the sender learns where we are.
            self.stats.duplicates += 1;
            self.ack_now();
            return;
        }
        // RFC 9293 §3.10.7.4: only what fits in the window is kept.
        let right = self.read + self.config.buffer;
        if seq >= right {
            self.stats.beyond_window += 1;
            self.ack_now();
            return;
        }
        let mut records = seg.records;
        if end > right {
            self.stats.beyond_window += 1;
            end = right;
            records.retain(|r| r.end <= right);
        } else if seg.fin {
            self.fin_at = Some(end - 1);
        }
        self.stream.offer(records);
        if seq <= self.rcv_nxt {
            let filled_gap = !self.ooo.is_empty();
            self.rcv_nxt = end;
            while let Some((s, e)) = self.ooo.first_key_value().map(|(a, b)| (*a, *b)) {
                if s > self.rcv_nxt {
                    break;
                }
                self.ooo.remove(&s);
                self.rcv_nxt = self.rcv_nxt.max(e);
            }
            self.on_delivered();
            match self.config.ack_delay {
                // RFC 5681 §4.2: a segment filling (part of) a gap is
                // acknowledged immediately; so is the FIN.
                _ if filled_gap || self.is_finished() => self.ack_now(),
                None => self.ack_now(),
                Some(delay) => {
                    self.unacked += 1;
                    if self.unacked >= 2 {
                        self.ack_now();
                    } else {
                        self.ack_deadline = Some(now + delay);
                    }
                }
            }
        } else {
            // Above a gap: an immediate duplicate ACK (RFC 5681 §4.2) feeds
            // the sender's fast retransmit.
            self.stats.out_of_order += 1;
            if !self.insert(seq, end) {
                self.stats.dropped += 1;
            } else if self.config.sack {
                // RFC 2018 §4: the first block holds the segment that
                // triggered this ACK.
                let start = self.ooo.range(..=seq).next_back().map(|(s, _)| *s);
                if let Some(start) = start {
                    self.recent.retain(|s| *s != start);
                    self.recent.push_front(start);
                    // Bounded like the ranges themselves.
                    self.recent.truncate(self.config.max_ranges);
                }
            }
            self.ack_now();
        }
    }
}

impl Agent for TcpReceiver {
    fn on_packet(&mut self, now: Instant, packet: Packet) {
        if let Body::Tcp(seg) = packet.body {
            if seg.syn {
                // RFC 9293 §3.5: every SYN is answered (a repeated one
                // means our SYN-ACK was lost). Bounded: one queued at most.
                if !self.out.iter().any(|a| a.syn) {
                    self.out.push_back(PendingAck {
                        ack: 0,
                        sack: SackBlocks::default(),
                        syn: true,
                        wnd: self.window(),
                    });
                }
            } else if seg.len > 0 || seg.fin {
                self.on_data(now, seg);
            }
        }
    }

    fn on_timeout(&mut self, now: Instant) {
        if self.ack_deadline.is_some_and(|d| d <= now) {
            self.ack_now();
        }
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Packet> {
        let PendingAck {
            ack,
            sack,
            syn,
            wnd,
        } = self.out.pop_front()?;
        self.stats.acks_sent += 1;
        Some(Packet {
            src: self.config.host,
            dst: self.config.peer,
            flow: self.config.flow,
            size: if syn {
                TCP_SYN_SIZE
            } else {
                TCP_OVERHEAD + sack.option_bytes()
            },
            body: Body::Tcp(TcpSegment {
                seq: 0,
                len: 0,
                ack,
                sack,
                syn,
                fin: false,
                wnd,
                records: Vec::new(),
                conn: self.config.conn,
            }),
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.ack_deadline
    }
}

#[path = "receiver_stream.rs"]
mod stream;

#[cfg(test)]
#[path = "receiver_tests.rs"]
mod tests;
