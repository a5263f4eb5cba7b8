//! The transport under one BitTorrent connection: a pair of the lab's
//! stream transports, one each way (this end's sender and receiver), on
//! one connection id, over TCP or uTP.

use std::time::Duration;

use ppspp_core::time::Instant;

use crate::agent::Agent;
use crate::packet::UtpType;
use crate::packet::{Body, FlowId, HostId, Packet, StreamRecord};
use crate::traffic::{
    TcpCc, TcpReceiver, TcpReceiverConfig, TcpSender, TcpSenderConfig, UtpReceiver,
    UtpReceiverConfig, UtpSender, UtpSenderConfig,
};

/// Which transport a connection runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Transport {
    /// The lab's TCP model.
    Tcp,
    /// The lab's uTP model (BEP 29, libutp's LEDBAT). Last: the preferred
    /// one when both connect.
    Utp,
}

/// How the TCP side of connections is set up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSetup {
    /// Congestion control (seed 001's hosts ran CUBIC, Linux's default).
    pub cc: TcpCc,
    /// SACK at both ends.
    pub sack: bool,
    /// Delayed ACKs at the receiver.
    pub ack_delay: Option<Duration>,
}

/// One end of a connection: what it sends and what it receives.
#[derive(Clone, Debug)]
pub enum Link {
    /// Over TCP.
    Tcp {
        /// Our bytes to the peer.
        tx: Box<TcpSender>,
        /// The peer's bytes to us.
        rx: Box<TcpReceiver>,
        /// We sent the SYN.
        initiator: bool,
    },
    /// Over uTP.
    Utp {
        /// Our bytes to the peer.
        tx: Box<UtpSender>,
        /// The peer's bytes to us.
        rx: Box<UtpReceiver>,
    },
}

impl Link {
    /// Our end of a new TCP connection from `host` to `peer`: the
    /// initiator's sends a SYN first; the acceptor's answers one (its
    /// receiver sends the SYN-ACK) and may send at once.
    pub fn tcp(
        host: HostId,
        peer: HostId,
        conn: u64,
        initiator: bool,
        now: Instant,
        setup: TcpSetup,
    ) -> Link {
        let flow = FlowId(host.0);
        let mut sc = TcpSenderConfig::new(host, peer, flow, now);
        sc.cc = setup.cc;
        sc.sack = setup.sack;
        sc.conn = conn;
        sc.handshake = initiator;
        let mut rc = TcpReceiverConfig::new(host, peer, flow);
        rc.sack = setup.sack;
        rc.conn = conn;
        rc.ack_delay = setup.ack_delay;
        Link::Tcp {
            tx: Box::new(TcpSender::stream(sc)),
            rx: Box::new(TcpReceiver::new(rc)),
            initiator,
        }
    }

    /// Our end of a new uTP connection: the initiator's sends an ST_SYN
    /// first (BEP 29); the acceptor's receiver answers it with an
    /// ST_STATE, and its sender may send at once. `target` is the
    /// queueing delay LEDBAT aims at.
    pub fn utp(
        host: HostId,
        peer: HostId,
        conn: u64,
        initiator: bool,
        now: Instant,
        target: Duration,
    ) -> Link {
        let flow = FlowId(host.0);
        let mut sc = UtpSenderConfig::new(host, peer, flow, now);
        sc.target = target;
        sc.conn = conn;
        sc.handshake = initiator;
        let mut rc = UtpReceiverConfig::new(host, peer, flow);
        rc.conn = conn;
        Link::Utp {
            tx: Box::new(UtpSender::stream(sc)),
            rx: Box::new(UtpReceiver::new(rc)),
        }
    }

    /// Its transport.
    pub fn transport(&self) -> Transport {
        match self {
            Link::Tcp { .. } => Transport::Tcp,
            Link::Utp { .. } => Transport::Utp,
        }
    }

    /// Whether our side may send: the handshake is done.
    pub fn is_open(&self) -> bool {
        match self {
            Link::Tcp { tx, .. } => tx.is_open(),
            Link::Utp { tx, .. } => tx.is_open(),
        }
    }

    /// Appends a record of `len` bytes on the stream to the peer.
    pub fn write(&mut self, len: u64, data: Vec<u8>) {
        match self {
            Link::Tcp { tx, .. } => {
                tx.write(len, data);
            }
            Link::Utp { tx, .. } => {
                tx.write(len, data);
            }
        }
    }

    /// Ends our stream (FIN, ST_FIN).
    pub fn close(&mut self) {
        match self {
            Link::Tcp { tx, .. } => tx.close(),
            Link::Utp { tx, .. } => tx.close(),
        }
    }

    /// Bytes written and not yet sent.
    pub fn unsent(&self) -> u64 {
        match self {
            Link::Tcp { tx, .. } => tx.unsent(),
            Link::Utp { tx, .. } => tx.unsent(),
        }
    }

    /// The next record from the peer, in order.
    pub fn take_record(&mut self) -> Option<StreamRecord> {
        match self {
            Link::Tcp { rx, .. } => rx.take_record(),
            Link::Utp { rx, .. } => rx.take_record(),
        }
    }

    /// Whether the peer's stream has ended (its FIN is in).
    pub fn peer_finished(&self) -> bool {
        match self {
            Link::Tcp { rx, .. } => rx.is_finished(),
            Link::Utp { rx, .. } => rx.is_finished(),
        }
    }

    /// Whether our stream is closed and acknowledged, and the peer's has
    /// ended too: nothing more will move.
    pub fn is_done(&self) -> bool {
        match self {
            Link::Tcp { tx, rx, .. } => tx.is_complete() && rx.is_finished(),
            Link::Utp { tx, rx } => tx.is_complete() && rx.is_finished(),
        }
    }

    /// A packet of this connection arrived.
    pub fn on_packet(&mut self, now: Instant, p: Packet) {
        match (self, &p.body) {
            (Link::Tcp { tx, rx, initiator }, Body::Tcp(seg)) => {
                // A SYN-ACK is for the sender that sent the SYN, a SYN for
                // the receiver; data and FINs for the receiver; pure ACKs
                // for the sender.
                let to_tx = if seg.syn {
                    *initiator
                } else {
                    seg.len == 0 && !seg.fin
                };
                if to_tx {
                    tx.on_packet(now, p);
                } else {
                    rx.on_packet(now, p);
                }
            }
            // BEP 29: an ST_STATE acknowledges our data (or our ST_SYN);
            // the rest is the peer's stream.
            (Link::Utp { tx, rx }, Body::Utp(u)) => {
                if u.kind == UtpType::State {
                    tx.on_packet(now, p);
                } else {
                    rx.on_packet(now, p);
                }
            }
            _ => {}
        }
    }

    /// Timers.
    pub fn on_timeout(&mut self, now: Instant) {
        match self {
            Link::Tcp { tx, rx, .. } => {
                tx.on_timeout(now);
                rx.on_timeout(now);
            }
            Link::Utp { tx, rx } => {
                tx.on_timeout(now);
                rx.on_timeout(now);
            }
        }
    }

    /// The next packet to send.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        match self {
            Link::Tcp { tx, rx, .. } => rx.poll_transmit(now).or_else(|| tx.poll_transmit(now)),
            Link::Utp { tx, rx } => rx.poll_transmit(now).or_else(|| tx.poll_transmit(now)),
        }
    }

    /// When it next wants [`Link::on_timeout`].
    pub fn poll_timeout(&self) -> Option<Instant> {
        match self {
            Link::Tcp { tx, rx, .. } => earliest(tx.poll_timeout(), rx.poll_timeout()),
            Link::Utp { tx, rx } => earliest(tx.poll_timeout(), rx.poll_timeout()),
        }
    }
}

/// The earlier of two optional instants.
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
