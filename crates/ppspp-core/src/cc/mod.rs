//! Congestion control behind a trait (RFC 7574 §8.16: PPSPP over UDP uses
//! LEDBAT, RFC 6817).
//!
//! A controller governs one direction of one channel. The sender's controller
//! limits the DATA bytes in flight; the receiver runs one too, over the bytes
//! it has requested and not yet received, so that its REQUESTs never flood a
//! slow peer (receiver-driven LEDBAT, RFC 9840 style). Both are fed the same
//! signal: the one-way delay of DATA, which the receiver measures and returns
//! in ACKs (RFC 7574 §8.7), plus round-trip samples and losses.
//!
//! One algorithm per file, each with a [`CongestionFactory`] for its
//! settings; a [`CongestionControl`] (parsed from the name used on the
//! command line and in scenario files) is what an endpoint is configured
//! with ([`factory`]).
//! - [`ledbat`]: LEDBAT (RFC 6817), the default;
//! - [`fixed`]: a constant window, for tests and baselines;
//! - [`delay`]: base and current one-way delay, for delay-based controllers;
//! - [`rtt`]: round-trip time and retransmission timeout (RFC 6298), which the
//!   protocol also uses to time out DATA and REQUESTs.

use std::fmt;
use std::time::Duration;

use crate::time::Instant;

pub mod delay;
pub mod factory;
pub mod fixed;
pub mod ledbat;
pub mod rtt;

pub use factory::{CongestionControl, CongestionFactory, UnknownCongestionControl, NAMES};
pub use fixed::{FixedWindow, FixedWindowConfig};
pub use ledbat::{Ledbat, LedbatConfig};
pub use rtt::{RttConfig, RttEstimator};

/// What an acknowledgement tells a controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AckSample {
    /// Bytes newly acknowledged (for the receiver's controller: received).
    pub bytes: u64,
    /// One-way delay of the acknowledged DATA in microseconds: receive time
    /// minus the sender's timestamp. Clocks are not synchronised, so only
    /// differences between samples are meaningful (RFC 6817 §2.4.1).
    pub one_way_delay: Option<i64>,
    /// Round-trip sample, when the acknowledged DATA's send time is known.
    pub rtt: Option<Duration>,
    /// Bytes in flight before this acknowledgement.
    pub flight: u64,
}

/// A congestion controller for one direction of one channel.
pub trait CongestionController: fmt::Debug + Send {
    /// The algorithm's name ("ledbat", …).
    fn name(&self) -> &'static str;

    /// The congestion window in bytes: how much may be in flight.
    fn window(&self) -> u64;

    /// `bytes` were sent; `flight` is the bytes in flight including them.
    fn on_sent(&mut self, now: Instant, bytes: u64, flight: u64);

    /// An acknowledgement arrived.
    fn on_ack(&mut self, now: Instant, ack: &AckSample);

    /// `bytes` were declared lost (a controller reduces at most once per
    /// round trip).
    fn on_loss(&mut self, now: Instant, bytes: u64);

    /// Nothing was acknowledged within the retransmission timeout.
    fn on_timeout(&mut self, now: Instant);

    /// The rate to pace sending at, in bytes per second, given the smoothed
    /// round-trip time; `None` to send as fast as the window allows.
    fn pacing_rate(&self, srtt: Duration) -> Option<u64>;

    /// The queuing delay the controller measures on its path, for a
    /// delay-based controller once it has samples (RFC 6817 §3.1.2);
    /// `None` otherwise.
    fn queuing_delay(&self) -> Option<Duration> {
        None
    }
}
