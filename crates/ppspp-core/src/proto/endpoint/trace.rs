//! What the endpoint tells `tracing` (issue 22): a `channel` span around
//! the work of each channel (a datagram it handles or writes, its timer),
//! a `swarm` span around a swarm's own work, and events for what a
//! developer diagnosing a node wants to see: channels opened and closed
//! and why, handshakes refused, datagrams dropped, deadlines gone stale.
//!
//! Off by default: with no subscriber, a span or event is one comparison
//! with tracing's global level (the core never installs a subscriber, and
//! never reads a clock for it; drivers stamp lines with their own time —
//! the lab with virtual time, `ppspp-lab/src/log.rs`).

use std::net::SocketAddr;

use tracing::Span;

use crate::proto::event::CloseReason;
use crate::proto::SwarmHandle;
use crate::wire::ChannelId;

/// The span of one channel's work.
#[inline]
pub(super) fn channel_span(swarm: SwarmHandle, id: ChannelId, peer: SocketAddr) -> Span {
    tracing::debug_span!("channel", swarm = swarm.0, id = ?id, %peer)
}

/// The span of one swarm's own work (choking, checkpoints, progress).
#[inline]
pub(super) fn swarm_span(swarm: SwarmHandle) -> Span {
    tracing::debug_span!("swarm", swarm = swarm.0)
}

pub(super) fn opened(swarm: SwarmHandle, id: ChannelId, peer: SocketAddr, by_us: bool) {
    tracing::debug!(swarm = swarm.0, id = ?id, %peer, by_us, "channel opened");
}

pub(super) fn closed(swarm: SwarmHandle, id: ChannelId, peer: SocketAddr, reason: &CloseReason) {
    tracing::debug!(swarm = swarm.0, id = ?id, %peer, ?reason, "channel closed");
}

pub(super) fn refused(peer: SocketAddr) {
    tracing::debug!(%peer, "handshake refused");
}

pub(super) fn stale(id: ChannelId) {
    tracing::warn!(id = ?id, "a channel deadline stayed at now after its timer ran; looked at later");
}
