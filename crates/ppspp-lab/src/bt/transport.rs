//! The transport under one BitTorrent connection: a pair of the lab's
//! stream transports, one each way (this end's sender and receiver), on
//! one connection id, over TCP or uTP.

use std::time::Duration;

use ppspp_core::time::Instant;

use crate::packet::{Body, FlowId, HostId, Packet, StreamRecord, UtpType};
use crate::traffic::stream::{StreamReceiver, StreamSender};
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
    /// The receive window (the receiver's buffer, read as it arrives),
    /// if bounded.
    pub window: Option<u64>,
}

/// One end of a connection: what it sends and what it receives.
#[derive(Debug)]
pub struct Link {
    transport: Transport,
    /// Our bytes to the peer.
    tx: Box<dyn StreamSender>,
    /// The peer's bytes to us.
    rx: Box<dyn StreamReceiver>,
    /// We opened it (a TCP SYN-ACK is then for our sender).
    initiator: bool,
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
        if let Some(w) = setup.window {
            rc.buffer = w;
        }
        Link {
            transport: Transport::Tcp,
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
        Link {
            transport: Transport::Utp,
            tx: Box::new(UtpSender::stream(sc)),
            rx: Box::new(UtpReceiver::new(rc)),
            initiator,
        }
    }

    /// Its transport.
    pub fn transport(&self) -> Transport {
        self.transport
    }

    /// Whether our side may send: the handshake is done.
    pub fn is_open(&self) -> bool {
        self.tx.is_open()
    }

    /// Appends a record of `len` bytes on the stream to the peer.
    pub fn write(&mut self, len: u64, data: Vec<u8>) {
        self.tx.write(len, data);
    }

    /// Ends our stream (FIN, ST_FIN).
    pub fn close(&mut self) {
        self.tx.close();
    }

    /// Bytes written and not yet sent.
    pub fn unsent(&self) -> u64 {
        self.tx.unsent()
    }

    /// The next record from the peer, in order.
    pub fn take_record(&mut self) -> Option<StreamRecord> {
        self.rx.take_record()
    }

    /// Whether the peer's stream has ended (its FIN is in).
    pub fn peer_finished(&self) -> bool {
        self.rx.is_finished()
    }

    /// Whether our stream is closed and acknowledged, and the peer's has
    /// ended too: nothing more will move.
    pub fn is_done(&self) -> bool {
        self.tx.is_complete() && self.rx.is_finished()
    }

    /// A packet of this connection arrived: to our sender if it
    /// acknowledges our stream, else to our receiver.
    pub fn on_packet(&mut self, now: Instant, p: Packet) {
        let to_tx = match &p.body {
            // A SYN-ACK is for the sender that sent the SYN, a SYN for the
            // receiver; data and FINs for the receiver; pure ACKs for the
            // sender.
            Body::Tcp(seg) if seg.syn => self.initiator,
            Body::Tcp(seg) => seg.len == 0 && !seg.fin,
            // BEP 29: an ST_STATE acknowledges our data (or our ST_SYN);
            // the rest is the peer's stream.
            Body::Utp(u) => u.kind == UtpType::State,
            _ => return,
        };
        if to_tx {
            self.tx.on_packet(now, p);
        } else {
            self.rx.on_packet(now, p);
        }
    }

    /// Timers.
    pub fn on_timeout(&mut self, now: Instant) {
        self.tx.on_timeout(now);
        self.rx.on_timeout(now);
    }

    /// The next packet to send: acknowledgements first.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Packet> {
        self.rx
            .poll_transmit(now)
            .or_else(|| self.tx.poll_transmit(now))
    }

    /// When it next wants [`Link::on_timeout`].
    pub fn poll_timeout(&self) -> Option<Instant> {
        earliest(self.tx.poll_timeout(), self.rx.poll_timeout())
    }
}

/// The earlier of two optional instants.
pub fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
