//! A hook between a node's socket and its endpoint, for an emulation that
//! runs real nodes over modelled links (issue 27: the lab's real-time
//! emulator). Not used by a node on a real network.
//!
//! A shaped node hands every datagram to its shaper instead of acting on
//! it: what its endpoint writes ([`Direction::Out`]) before it reaches the
//! kernel, and what its socket reads ([`Direction::In`]) before the endpoint
//! sees it. The shaper gives each one back when its model of the links
//! says it is due (then the node sends it, or hands it to the endpoint), or
//! never (the model dropped it). So the node's code path is the real one,
//! socket and kernel included, and only the timing of its datagrams is
//! the model's. The shaper lives in the emulator, which owns the model;
//! this crate only moves datagrams to and from it.

use std::net::SocketAddr;

use tokio::sync::mpsc;

/// Which way a held datagram travels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Written by the node's endpoint; the node sends it when given back.
    Out,
    /// Read from the node's socket; the endpoint gets it when given back.
    In,
}

/// One datagram in a shaper's hands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// Which way it travels.
    pub direction: Direction,
    /// The node's own address (the socket's bound address).
    pub node: SocketAddr,
    /// The other end: the destination of an outgoing datagram, the source
    /// of an incoming one.
    pub peer: SocketAddr,
    /// The datagram.
    pub bytes: Vec<u8>,
}

/// A node's side of a shaper: where it hands its datagrams, and where it
/// gets them back. A node whose shaper has gone (the `release` channel
/// closed) stops: its emulation has ended.
#[derive(Debug)]
pub struct ShaperPort {
    /// Every datagram of the node goes here.
    pub hold: mpsc::UnboundedSender<Held>,
    /// Datagrams come back here when due, in the order to act on them.
    pub release: mpsc::UnboundedReceiver<Held>,
}

impl ShaperPort {
    /// Hands a datagram to the shaper. A shaper that has gone drops it;
    /// the node notices when it next waits for a release.
    pub(crate) fn hold(&self, direction: Direction, node: SocketAddr, peer: SocketAddr, d: &[u8]) {
        let _ = self.hold.send(Held {
            direction,
            node,
            peer,
            bytes: d.to_vec(),
        });
    }
}

/// The next datagram the shaper gives back; never, for a node without one.
/// `None`: the shaper has gone.
pub(crate) async fn next_release(port: &mut Option<ShaperPort>) -> Option<Held> {
    match port {
        Some(p) => p.release.recv().await,
        None => std::future::pending().await,
    }
}
