//! What the driver tells `tracing`: datagrams in and out (trace, with the
//! peer's address), channels opening and closing and swarms being added
//! (debug), a swarm completing (info), failures (warn).
//!
//! Nothing is printed unless the program installs a subscriber (the
//! `ppspp` binary does, from `RUST_LOG`); with none, each call site costs
//! one comparison with the global maximum level.

use std::net::SocketAddr;

use ppspp_core::proto::{Event, SwarmHandle};
use tracing::{debug, info, trace, warn};

/// The span of one node's task: every line it prints names its socket.
pub(crate) fn node_span(local: SocketAddr) -> tracing::Span {
    tracing::info_span!("node", addr = %local)
}

/// The span of a command about one swarm.
pub(crate) fn swarm_span(swarm: SwarmHandle) -> tracing::Span {
    tracing::debug_span!("swarm", swarm = ?swarm)
}

/// A datagram read from the socket, before the endpoint sees it.
#[inline]
pub(crate) fn received(from: SocketAddr, len: usize) {
    trace!(peer = %from, len, "datagram received");
}

/// A datagram the endpoint wrote, queued for sending.
#[inline]
pub(crate) fn sent(to: SocketAddr, len: usize) {
    trace!(peer = %to, len, "datagram sent");
}

/// An event the endpoint reported, before it goes to the node's owner.
pub(crate) fn event(e: &Event) {
    match e {
        Event::Connected { swarm, peer } => debug!(?swarm, %peer, "channel connected"),
        Event::Closed {
            swarm,
            peer,
            reason,
        } => debug!(?swarm, %peer, ?reason, "channel closed"),
        Event::ContentLength { swarm, len } => debug!(?swarm, len, "content length known"),
        Event::Complete { swarm } => info!(?swarm, "swarm complete"),
        Event::PeerAddress { swarm, addr } => trace!(?swarm, peer = %addr, "peer address learned"),
        Event::StorageError { swarm, error } => warn!(?swarm, %error, "storage failed"),
        // Events added to the core later still show, at the most verbose
        // level, until they get a line of their own here.
        #[allow(unreachable_patterns)]
        other => trace!(event = ?other, "endpoint event"),
    }
}
