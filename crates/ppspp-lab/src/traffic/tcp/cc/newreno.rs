//! Reno's congestion avoidance (RFC 5681 §3.1): the window grows by about
//! one MSS per round trip and halves on a congestion event.

use std::time::Duration;

use ppspp_core::time::Instant;

use super::TcpCongestion;

/// NewReno's window rules; its recovery lives in the sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NewReno;

impl TcpCongestion for NewReno {
    fn avoidance(&mut self, _: Instant, cwnd: u64, _: u64, mss: u64, _: Option<Duration>) -> u64 {
        // RFC 5681 eq. (3), per ACK, at least one byte.
        cwnd + (mss * mss / cwnd.max(1)).max(1)
    }

    fn congestion(&mut self, _: Instant, _: u64, flight: u64, mss: u64) -> u64 {
        // RFC 5681 eq. (4).
        (flight / 2).max(2 * mss)
    }

    fn timeout(&mut self) {}

    fn clone_box(&self) -> Box<dyn TcpCongestion> {
        Box::new(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mss_per_window_of_acks_and_half_on_loss() {
        let mut r = NewReno;
        let (mss, mut cwnd) = (1000, 10_000);
        for _ in 0..10 {
            cwnd = r.avoidance(Instant::ZERO, cwnd, mss, mss, None);
        }
        // Ten ACKs of 100 bytes each on 10,000-10,900 bytes.
        assert!((10_900..=11_000).contains(&cwnd), "{cwnd}");
        assert_eq!(r.congestion(Instant::ZERO, cwnd, 30_000, mss), 15_000);
        assert_eq!(r.congestion(Instant::ZERO, cwnd, 1_000, mss), 2 * mss);
    }
}
