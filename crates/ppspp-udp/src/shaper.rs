//! A hook between a node's socket and its endpoint, for an emulation that
//! runs real nodes over modelled links (issue 27: the lab's real-time
//! emulator). Not used by a node on a real network.
//!
//! A shaped node hands every datagram its endpoint writes to its shaper
//! before it reaches the kernel. The shaper gives each one back when its
//! model of the path says it is due (then the node sends it), or never
//! (the model dropped it). What the node's socket reads goes to its
//! endpoint at once: the model carried it along the whole path, the
//! receiver's downlink included, before it was sent. So the node's code
//! path is the real one, socket and kernel included, and only the timing
//! of its datagrams is the model's. (A first version handed the received
//! datagrams to the shaper too, which gave them straight back: two
//! channel hops and a copy per datagram for nothing.) The shaper lives in
//! the emulator, which owns the model; this crate only moves datagrams to
//! and from it.

use std::net::SocketAddr;

use tokio::sync::mpsc;

/// One datagram in a shaper's hands: written by a node's endpoint, sent
/// by the node when given back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// The node's own address (the socket's bound address).
    pub node: SocketAddr,
    /// Its destination.
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
    pub(crate) fn hold(&self, node: SocketAddr, peer: SocketAddr, d: &[u8]) {
        let _ = self.hold.send(Held {
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
