//! Tracing in virtual time: the simulator enters a `peer{name=…}` span
//! around every call into a peer's core (a datagram delivered, a timer, a
//! join, an announce, a departure), and [`VirtualTime`] stamps each line
//! with the simulated instant of the thread that printed it, so a run's
//! log reads like a real node's, in the simulation's time.
//!
//! With no subscriber (or one whose filter is off), a span costs one
//! comparison with tracing's global maximum level and the clock is not
//! touched: a run is as fast as without tracing, and its results are the
//! same with or without it, since nothing here feeds back into the
//! simulation.
//!
//! The peer span is at the info level of target `ppspp_lab`: a filter
//! that shows other crates' lines (`RUST_LOG=ppspp_core=debug`) names the
//! peer on them only when it lets the span through too
//! (`RUST_LOG=ppspp_lab=info,ppspp_core=debug`).

use std::cell::Cell;
use std::fmt;

use ppspp_core::proto::Event;
use ppspp_core::time::Instant;
use tracing::level_filters::LevelFilter;
use tracing::{debug, info, trace, warn, Span};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::time::FormatTime;

thread_local! {
    /// The virtual time of the simulation running on this thread, set
    /// when a peer's span is entered and tracing is on. Partitions run on
    /// threads of their own, each with its own clock.
    static NOW: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Whether any tracing output may be enabled at all (a global hint that
/// every subscriber keeps up to date: off when there is none).
#[inline]
fn tracing_on() -> bool {
    LevelFilter::current() != LevelFilter::OFF
}

/// The span of one peer's core call at virtual time `now`; `name` is only
/// formatted when the span is enabled.
#[inline]
pub(crate) fn peer_span(now: Instant, name: impl fmt::Display) -> Span {
    if !tracing_on() {
        return Span::none();
    }
    NOW.with(|c| c.set(Some(now)));
    tracing::info_span!(target: "ppspp_lab", "peer", name = %name)
}

/// The virtual time last set on this thread, if a simulation traced here.
pub fn virtual_now() -> Option<Instant> {
    NOW.with(Cell::get)
}

/// A [`FormatTime`] that prints the simulated time, in seconds with
/// microseconds, instead of the wall clock (`-` outside a simulation):
/// `tracing_subscriber::fmt().with_timer(VirtualTime)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct VirtualTime;

impl FormatTime for VirtualTime {
    fn format_time(&self, w: &mut Writer<'_>) -> fmt::Result {
        match virtual_now() {
            Some(t) => {
                let us = t.as_micros();
                write!(w, "{:>5}.{:06}s", us / 1_000_000, us % 1_000_000)
            }
            None => write!(w, "{:>12}", "-"),
        }
    }
}

/// A datagram handed to a peer's core.
#[inline]
pub(crate) fn delivered(from: std::net::SocketAddr, len: usize) {
    trace!(target: "ppspp_lab", peer = %from, len, "datagram delivered");
}

/// An event a peer's core reported.
pub(crate) fn event(e: &Event) {
    match e {
        Event::Connected { peer, .. } => debug!(target: "ppspp_lab", %peer, "channel connected"),
        Event::Closed { peer, reason, .. } => {
            debug!(target: "ppspp_lab", %peer, ?reason, "channel closed")
        }
        Event::Complete { .. } => info!(target: "ppspp_lab", "swarm complete"),
        Event::StorageError { error, .. } => {
            warn!(target: "ppspp_lab", %error, "storage failed")
        }
        // The rest (content length, PEX addresses, events added later) at
        // the most verbose level.
        #[allow(unreachable_patterns)]
        other => trace!(target: "ppspp_lab", event = ?other, "endpoint event"),
    }
}

/// A peer joining, leaving or asking the tracker again.
#[inline]
pub(crate) fn control(what: &'static str) {
    debug!(target: "ppspp_lab", "{what}");
}

/// The name a scenario gives host `host`, formatted only when a span is
/// recorded: its group's name for the only peer of a group, `GROUP[i]`
/// for the `i`-th of several (as results and link names spell it).
pub(crate) struct PeerName<'a> {
    pub(crate) shared: &'a crate::sim::partition::Shared,
    pub(crate) host: u32,
}

impl fmt::Display for PeerName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plans = &self.shared.plans;
        let Some(plan) = plans.get(self.host as usize) else {
            return write!(f, "host{}", self.host);
        };
        let group = self.shared.scenario.peers[plan.group].get_ref();
        if group.count == 1 {
            return f.write_str(&group.name);
        }
        // A group's hosts are consecutive, from its first.
        let first = plans.iter().position(|p| p.group == plan.group);
        write!(
            f,
            "{}[{}]",
            group.name,
            self.host as usize - first.unwrap_or(0)
        )
    }
}
