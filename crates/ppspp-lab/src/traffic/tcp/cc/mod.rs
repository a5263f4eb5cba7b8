//! How the TCP model's window grows and shrinks: one policy per file
//! behind [`TcpCongestion`]. The sender (`../sender.rs`) keeps what every
//! policy shares — slow start (RFC 5681 §3.1), fast retransmit and NewReno
//! fast recovery (RFC 6582), the retransmission timer (RFC 6298) — and asks
//! the policy two things: the window after an ACK in congestion avoidance,
//! and the slow-start threshold after a congestion event. That is the split
//! RFC 9438 §1 describes: CUBIC "changes only the congestion window
//! increase function" and the decrease factor, and keeps Reno's loss
//! recovery.

use std::fmt;
use std::time::Duration;

use ppspp_core::time::Instant;
use serde::Deserialize;

mod cubic;
mod newreno;

pub use cubic::Cubic;
pub use newreno::NewReno;

/// A congestion-avoidance policy of the TCP model. Windows are in bytes;
/// `mss` is the sender's SMSS.
pub trait TcpCongestion: fmt::Debug + Send {
    /// The window after `acked` newly acknowledged bytes in congestion
    /// avoidance (`cwnd ≥ ssthresh`, not in fast recovery). `srtt` is the
    /// smoothed round-trip time once one was measured.
    fn avoidance(
        &mut self,
        now: Instant,
        cwnd: u64,
        acked: u64,
        mss: u64,
        srtt: Option<Duration>,
    ) -> u64;

    /// A congestion event (the third duplicate ACK, or a retransmission
    /// timeout), once per episode: the new slow-start threshold. `flight`
    /// is FlightSize (RFC 5681 eq. 4).
    fn congestion(&mut self, now: Instant, cwnd: u64, flight: u64, mss: u64) -> u64;

    /// The retransmission timer expired (every expiry, after
    /// [`TcpCongestion::congestion`] if it opened the episode).
    fn timeout(&mut self);

    /// A boxed copy, so that a sender can be cloned.
    fn clone_box(&self) -> Box<dyn TcpCongestion>;
}

impl Clone for Box<dyn TcpCongestion> {
    fn clone(&self) -> Box<dyn TcpCongestion> {
        self.clone_box()
    }
}

/// Which [`TcpCongestion`] a TCP flow runs, by name (`cc = "cubic"` in a
/// scenario's `[[flows]]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TcpCc {
    /// Reno's AIMD (RFC 5681 §3.1): one MSS per round trip, halve on loss.
    #[default]
    #[serde(alias = "reno")]
    Newreno,
    /// CUBIC (RFC 9438), the default of Linux, Windows and macOS.
    Cubic,
}

impl TcpCc {
    /// A fresh policy of this kind.
    pub fn build(self) -> Box<dyn TcpCongestion> {
        match self {
            TcpCc::Newreno => Box::new(NewReno),
            TcpCc::Cubic => Box::new(Cubic::new()),
        }
    }

    /// Its name as a scenario spells it.
    pub fn name(self) -> &'static str {
        match self {
            TcpCc::Newreno => "newreno",
            TcpCc::Cubic => "cubic",
        }
    }
}
