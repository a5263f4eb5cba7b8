//! The sans-IO shape every traffic end in the simulator has: the engine
//! hands packets and time in, and drains what the agent wants to send.

use ppspp_core::time::Instant;

use crate::packet::Packet;

/// A traffic end living on a host: a cross-traffic source or sink, a TCP
/// sender or receiver. (PPSPP endpoints are driven through the core's own
/// `Endpoint` API.) After any input, the engine drains
/// [`Agent::poll_transmit`] and asks [`Agent::poll_timeout`] again.
pub trait Agent {
    /// A packet of this agent's flow arrived at its host.
    fn on_packet(&mut self, now: Instant, packet: Packet);
    /// The time [`Agent::poll_timeout`] asked for has come.
    fn on_timeout(&mut self, now: Instant);
    /// The next packet to send now, if any.
    fn poll_transmit(&mut self, now: Instant) -> Option<Packet>;
    /// When the agent next wants [`Agent::on_timeout`], if ever.
    fn poll_timeout(&self) -> Option<Instant>;
}
