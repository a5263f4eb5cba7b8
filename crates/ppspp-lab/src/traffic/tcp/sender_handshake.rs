//! Opening a connection (RFC 9293 §3.5): the sender's SYN, the receiver's
//! SYN-ACK, then data. It costs a round trip and two packets before the
//! first byte, which a BitTorrent peer pays for every connection it opens
//! (issue 25). The ACK of the SYN-ACK rides on the first data segment.
//! Teardown is the FIN after a closed stream (`sender_stream.rs`).

use ppspp_core::time::Instant;

use super::TcpSender;
use crate::packet::{Body, Packet, SackBlocks, TcpSegment, TCP_SYN_SIZE};

/// Where the handshake is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Handshake {
    /// Open: data may flow (always, without a handshake).
    Open,
    /// A SYN is to be sent (at the start, or after its timer expired).
    Due,
    /// A SYN is out since `at`; `again` if it is a retransmission.
    Sent { at: Instant, again: bool },
}

impl TcpSender {
    /// Whether data may flow.
    pub fn is_open(&self) -> bool {
        self.handshake == Handshake::Open
    }

    /// The SYN, when one is due.
    pub(super) fn poll_syn(&mut self, now: Instant) -> Option<Packet> {
        if self.handshake != Handshake::Due {
            return None;
        }
        let again = self.stats.syns_sent > 0;
        self.stats.syns_sent += 1;
        self.handshake = Handshake::Sent { at: now, again };
        // RFC 6298 §2.1: the SYN is timed by the initial RTO (1 s),
        // doubled on each expiry.
        self.rto_deadline = Some(now + self.rto.rto());
        Some(Packet {
            src: self.config.host,
            dst: self.config.peer,
            flow: self.config.flow,
            size: TCP_SYN_SIZE,
            body: Body::Tcp(TcpSegment {
                seq: 0,
                len: 0,
                ack: 0,
                sack: SackBlocks::default(),
                syn: true,
                fin: false,
                wnd: 0,
                records: Vec::new(),
                conn: self.config.conn,
            }),
        })
    }

    /// The SYN's timer expired: send it again with the timer backed off.
    pub(super) fn on_syn_timeout(&mut self, _now: Instant) {
        if matches!(self.handshake, Handshake::Sent { .. }) {
            self.rto.back_off();
            self.rto_deadline = None;
            self.handshake = Handshake::Due;
        }
    }

    /// The SYN-ACK: the connection is open. Its round trip is the first
    /// RTT sample unless the SYN was sent again (Karn's rule). After a lost
    /// SYN the first window is one segment (RFC 5681 §3.1, RFC 6928 §2).
    pub(super) fn on_syn_ack(&mut self, now: Instant) {
        let Handshake::Sent { at, again } = self.handshake else {
            return;
        };
        if again {
            self.cwnd = self.mss();
        } else {
            self.rto.sample(now.saturating_since(at));
        }
        self.handshake = Handshake::Open;
        self.rto_deadline = None;
    }
}
