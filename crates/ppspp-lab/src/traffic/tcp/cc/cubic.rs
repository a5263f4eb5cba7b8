//! CUBIC congestion control (RFC 9438): after a congestion event the
//! window follows a cubic function of the time since congestion avoidance
//! resumed, with its plateau at the window where the loss happened,
//!
//! ```text
//! W_cubic(t) = C·(t − K)³ + W_max,   K = ∛((W_max − cwnd_epoch) / C)   (eq. 1, 2)
//! ```
//!
//! so it climbs back fast, creeps past the old loss point, then probes
//! upwards fast again. Windows here are in segments, `t` in seconds. It
//! never grows slower than Reno would on the same path (the "Reno-friendly
//! region", §4.3), and it cuts by `β_cubic` = 0.7 instead of Reno's 0.5.
//! HyStart++ (§4.10's option) is not modelled: slow start is RFC 5681's.

use std::time::Duration;

use ppspp_core::time::Instant;

use super::TcpCongestion;

/// RFC 9438 §5.1: C = 0.4 (segments per second³).
pub const C: f64 = 0.4;

/// RFC 9438 §4.6: the multiplicative decrease factor β_cubic.
pub const BETA: f64 = 0.7;

/// RFC 9438 §4.3: the additive increase that makes the Reno estimate grow
/// as fast on average as Reno with β_cubic would: 3(1 − β)/(1 + β).
pub const ALPHA: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);

/// One congestion-avoidance stage: from its first ACK to the next
/// congestion event.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Epoch {
    /// t_epoch: when the stage began.
    start: Instant,
    /// K (s): when `W_cubic` gets back to `w_max`.
    k: f64,
    /// The plateau of this stage's cubic.
    w_max: f64,
    /// W_est (§4.3): where Reno would be now.
    w_est: f64,
}

impl Epoch {
    fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }
}

/// A CUBIC sender's window state.
#[derive(Clone, Debug)]
pub struct Cubic {
    /// §4.7: release bandwidth faster when losses come before the last
    /// plateau is reached (on by default, as in Linux).
    fast_convergence: bool,
    /// W_max as set at the last congestion event; `None` before the first.
    w_max: Option<f64>,
    /// cwnd_prior: the window when the last congestion event happened.
    cwnd_prior: f64,
    /// The last congestion event was a retransmission timeout.
    after_timeout: bool,
    epoch: Option<Epoch>,
    /// The fraction of a byte the last increments left, so that small
    /// increments add up instead of being rounded away.
    carry: f64,
}

impl Default for Cubic {
    fn default() -> Cubic {
        Cubic::new()
    }
}

impl Cubic {
    /// The state of a new connection, fast convergence on.
    pub fn new() -> Cubic {
        Cubic {
            fast_convergence: true,
            w_max: None,
            cwnd_prior: 0.0,
            after_timeout: false,
            epoch: None,
            carry: 0.0,
        }
    }

    /// The same without fast convergence (§4.7 makes it a SHOULD).
    pub fn without_fast_convergence() -> Cubic {
        Cubic {
            fast_convergence: false,
            ..Cubic::new()
        }
    }

    /// W_max (segments) the last congestion event set.
    pub fn w_max(&self) -> Option<f64> {
        self.w_max
    }

    /// K (s) of the current congestion-avoidance stage, once it began.
    pub fn k(&self) -> Option<f64> {
        self.epoch.map(|e| e.k)
    }

    /// Begins a stage at `w` segments (§4.2; after a timeout, §4.8: K = 0
    /// and W_max = cwnd_epoch, so growth starts convex from there).
    fn begin(&mut self, now: Instant, w: f64) -> Epoch {
        let (k, w_max) = match self.w_max {
            Some(m) if !self.after_timeout && m > w => (((m - w) / C).cbrt(), m),
            _ => (0.0, w),
        };
        if self.after_timeout {
            self.w_max = Some(w);
            self.after_timeout = false;
        }
        Epoch {
            start: now,
            k,
            w_max,
            w_est: w,
        }
    }
}

impl TcpCongestion for Cubic {
    fn avoidance(
        &mut self,
        now: Instant,
        cwnd: u64,
        acked: u64,
        mss: u64,
        srtt: Option<Duration>,
    ) -> u64 {
        let m = mss.max(1) as f64;
        let w = (cwnd as f64 / m).max(1.0);
        let mut e = match self.epoch {
            Some(e) => e,
            None => self.begin(now, w),
        };
        let t = now.saturating_since(e.start).as_secs_f64();
        // Before any RTT sample (a CA stage always has had one in
        // practice), a typical 100 ms.
        let rtt = srtt.map_or(0.1, |d| d.as_secs_f64());
        // Counted per segment acknowledged, as Linux does, so delayed ACKs
        // do not halve the growth.
        let segments = acked as f64 / m;
        // §4.3: Reno's estimate, at α_cubic until it passes cwnd_prior and
        // at 1 after that.
        let alpha = if e.w_est >= self.cwnd_prior {
            1.0
        } else {
            ALPHA
        };
        e.w_est += alpha * segments / w;
        let next = if e.w_cubic(t) < e.w_est {
            // Reno-friendly region: cwnd = W_est.
            e.w_est
        } else {
            // §4.2: aim at W_cubic one RTT ahead, at most 1.5 cwnd, and
            // close (target − cwnd)/cwnd of the gap per segment acked.
            let target = e.w_cubic(t + rtt).clamp(w, 1.5 * w);
            w + (target - w) / w * segments
        };
        self.epoch = Some(e);
        // Never shrink in congestion avoidance; keep what rounding drops.
        let bytes = (next.max(w) * m - cwnd as f64).max(0.0) + self.carry;
        let whole = bytes.floor();
        self.carry = bytes - whole;
        cwnd + whole as u64
    }

    fn congestion(&mut self, _: Instant, cwnd: u64, flight: u64, mss: u64) -> u64 {
        let w = cwnd as f64 / mss.max(1) as f64;
        // §4.7 fast convergence: a loss below the last plateau means a new
        // flow is taking its share; leave it more room.
        self.w_max = Some(match self.w_max {
            Some(m) if self.fast_convergence && w < m => w * (1.0 + BETA) / 2.0,
            _ => w,
        });
        self.cwnd_prior = w;
        self.after_timeout = false;
        self.epoch = None;
        self.carry = 0.0;
        // §4.6: ssthresh = flight_size · β_cubic, at least 2 segments.
        ((flight as f64 * BETA) as u64).max(2 * mss)
    }

    fn timeout(&mut self) {
        self.after_timeout = true;
        self.epoch = None;
        self.carry = 0.0;
    }

    fn clone_box(&self) -> Box<dyn TcpCongestion> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
#[path = "cubic_tests.rs"]
mod tests;
