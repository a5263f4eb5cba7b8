//! The fast-peer set of seed paper 000 §III-A: the peers to which urgent
//! (high-priority) requests go, ranked by the expected bandwidth of eq. (1)
//! and chosen by eq. (2).
//!
//! ```text
//! R_i = S_i − k·S_i·L_r,   S_i = P·(1 − RTT_i)/DIP_i            (1)
//! choose the first n peers, by decreasing R_i, with Σ R_i ≥ x·BR_v  (2)
//! ```
//!
//! Where the paper is vague, these are our choices:
//! - **Units of eq. (1).** P is the payload of one DATA packet in bytes
//!   (a chunk), DIP the smoothed inter-arrival time of DATA from the peer
//!   in seconds, so P/DIP is bytes per second. RTT_i is the peer's smoothed
//!   request round trip in seconds, so (1 − RTT_i) discounts far peers; it
//!   is floored at [`MIN_RTT_FACTOR`] so that a peer a second or more away
//!   still ranks by its rate instead of dropping to zero or below.
//! - **DIP samples** are taken only between DATA packets that arrived
//!   while more requests were outstanding at the peer: a gap while nothing
//!   was asked measures our demand, not the link.
//! - **L_r** is the ratio of requests that timed out to chunks received
//!   from the peer, over a decaying history (both counts halve once
//!   received passes [`LOSS_HISTORY`]). R_i is floored at zero.
//! - **k** starts at 1 and grows by one (up to [`K_MAX`]) at each update
//!   where the link is unstable: DIP or RTT varies by more than half its
//!   mean (mean deviation / mean > [`UNSTABLE`]). The paper only says k is
//!   "incremented"; we also let it fall back by one after
//!   [`STABLE_UPDATES`] stable updates in a row, so a peer is not punished
//!   forever for one bad period.
//! - **x** starts at [`X_START`] and grows by [`X_STEP`] (up to [`X_MAX`])
//!   at every stall the player reports; after [`X_CALM`] without a stall it
//!   falls back by one step, to no less than [`X_START`]. More stalls: more
//!   peers serve urgent data.
//! - **No estimates yet** (start-up): the set is unknown and every peer may
//!   serve urgent data.
//! - **A silent peer** — its requests timed out with no later one answered,
//!   and no DATA since — has R_i = 0 until it sends again. Eq. (1) alone
//!   would keep its old S_i, and L_r grows only by the few requests a
//!   timed-out window still holds: a fast peer that went quiet stayed fast
//!   for seconds while urgent data waited on it.

use std::time::Duration;

use crate::time::Instant;

/// The smallest value of eq. (1)'s `(1 − RTT_i)` factor (chosen).
pub const MIN_RTT_FACTOR: f64 = 0.1;
/// Received chunks after which the loss history decays (chosen).
pub const LOSS_HISTORY: u64 = 1000;
/// Mean deviation over mean above which a link counts as unstable (chosen).
pub const UNSTABLE: f64 = 0.5;
/// The largest k (chosen).
pub const K_MAX: u32 = 4;
/// Stable updates in a row after which k falls by one (chosen).
pub const STABLE_UPDATES: u32 = 5;
/// x at the start (chosen: half again the bitrate).
pub const X_START: f64 = 1.5;
/// How much a stall raises x (chosen).
pub const X_STEP: f64 = 0.5;
/// The largest x (chosen).
pub const X_MAX: f64 = 4.0;
/// Time without a stall after which x falls by one step (chosen).
pub const X_CALM: Duration = Duration::from_secs(30);
/// How often the set is recomputed (chosen).
pub const UPDATE_PERIOD: Duration = Duration::from_secs(1);

/// What one channel measures of its peer's link, for eq. (1).
#[derive(Clone, Debug)]
pub struct LinkEstimate {
    /// Smoothed DATA inter-arrival time and its mean deviation, in seconds.
    dip: Option<(f64, f64)>,
    /// When the last DATA arrived, and whether more was asked then.
    last_data: Option<(Instant, bool)>,
    /// Mean DATA payload in bytes.
    packet: f64,
    received: u64,
    lost: u64,
    /// Requests timed out and nothing arrived since.
    silent: bool,
    k: u32,
    stable_run: u32,
}

impl Default for LinkEstimate {
    fn default() -> Self {
        LinkEstimate {
            dip: None,
            last_data: None,
            packet: 0.0,
            received: 0,
            lost: 0,
            silent: false,
            k: 1,
            stable_run: 0,
        }
    }
}

impl LinkEstimate {
    /// A requested chunk of `bytes` arrived at `now`; `more_asked`: other
    /// requests to the peer are still outstanding after it.
    pub fn on_data(&mut self, now: Instant, bytes: usize, more_asked: bool) {
        if let Some((at, busy)) = self.last_data {
            if busy {
                let gap = now.saturating_since(at).as_secs_f64();
                self.dip = Some(match self.dip {
                    // RFC 6298-style smoothing: α = 1/8, β = 1/4.
                    Some((mean, dev)) => (
                        mean + (gap - mean) / 8.0,
                        dev + ((gap - mean).abs() - dev) / 4.0,
                    ),
                    None => (gap, gap / 2.0),
                });
            }
        }
        self.last_data = Some((now, more_asked));
        self.silent = false;
        self.packet = if self.received == 0 {
            bytes as f64
        } else {
            self.packet + (bytes as f64 - self.packet) / 8.0
        };
        self.received += 1;
        if self.received > LOSS_HISTORY {
            self.received /= 2;
            self.lost /= 2;
        }
    }

    /// `chunks` requested from the peer timed out.
    pub fn on_lost(&mut self, chunks: u64) {
        self.lost = self.lost.saturating_add(chunks);
        // A gap across a timeout is not the link's pace.
        self.last_data = None;
    }

    /// `chunks` requested from the peer were lost while later ones arrived
    /// (no gap in the peer's pace).
    pub fn on_passed_over(&mut self, chunks: u64) {
        self.lost = self.lost.saturating_add(chunks);
    }

    /// Requests to the peer timed out and none sent after them was
    /// answered: it is not answering now.
    pub fn on_silence(&mut self) {
        self.silent = true;
    }

    /// L_r: requests lost per chunk received.
    pub fn loss_ratio(&self) -> f64 {
        self.lost as f64 / self.received.max(1) as f64
    }

    /// The current k.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Adapts k to how much DIP and the round trip (`srtt`, `rttvar`)
    /// vary; called once per set update.
    pub fn update_stability(&mut self, rtt: Option<(Duration, Duration)>) {
        let dip_unstable = self.dip.is_some_and(|(m, d)| m > 0.0 && d / m > UNSTABLE);
        let rtt_unstable = rtt.is_some_and(|(s, v)| {
            let s = s.as_secs_f64();
            s > 0.0 && v.as_secs_f64() / s > UNSTABLE
        });
        if dip_unstable || rtt_unstable {
            self.k = (self.k + 1).min(K_MAX);
            self.stable_run = 0;
        } else {
            self.stable_run += 1;
            if self.stable_run >= STABLE_UPDATES {
                self.k = self.k.saturating_sub(1).max(1);
                self.stable_run = 0;
            }
        }
    }

    /// R_i of eq. (1) in bytes per second, given the smoothed request round
    /// trip; `None` until DIP has a sample.
    pub fn expected_bandwidth(&self, srtt: Option<Duration>) -> Option<f64> {
        let (dip, _) = self.dip?;
        if self.silent {
            return Some(0.0);
        }
        let rtt = srtt.map_or(0.0, |d| d.as_secs_f64());
        let s = self.packet * (1.0 - rtt).max(MIN_RTT_FACTOR) / dip.max(1e-6);
        Some((s - f64::from(self.k) * s * self.loss_ratio()).max(0.0))
    }
}

/// A swarm's eq. (2) state: the factor x and when it last moved.
#[derive(Clone, Debug)]
pub struct FastPeers {
    x: f64,
    calm_since: Instant,
    next_update: Instant,
}

impl Default for FastPeers {
    fn default() -> Self {
        FastPeers {
            x: X_START,
            calm_since: Instant::ZERO,
            next_update: Instant::ZERO,
        }
    }
}

impl FastPeers {
    /// The current x.
    pub fn x(&self) -> f64 {
        self.x
    }

    /// The player stalled at `now`: ask more peers for urgent data.
    pub fn on_stall(&mut self, now: Instant) {
        self.x = (self.x + X_STEP).min(X_MAX);
        self.calm_since = now;
    }

    /// Whether the set is due for an update at `now`; if so, the next one
    /// is scheduled and x relaxes after a calm period.
    pub fn due(&mut self, now: Instant) -> bool {
        if now < self.next_update {
            return false;
        }
        self.next_update = now + UPDATE_PERIOD;
        if now.saturating_since(self.calm_since) >= X_CALM {
            self.x = (self.x - X_STEP).max(X_START);
            self.calm_since = now;
        }
        true
    }
}

/// Eq. (2): given each peer's R_i (bytes/s), ranks them by decreasing R_i
/// (ties by position, for determinism) and returns how many of the first
/// reach `need` = x·BR_v bytes/s — all of them if their sum falls short.
/// `ranked` is sorted in place; its first n entries are the fast peers.
pub fn select<K: Ord + Copy>(ranked: &mut [(K, f64)], need: f64) -> usize {
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut sum = 0.0;
    for (i, &(_, r)) in ranked.iter().enumerate() {
        sum += r;
        if sum >= need {
            return i + 1;
        }
    }
    ranked.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_micros(ms * 1000)
    }

    #[test]
    fn eq1_is_bytes_per_second_discounted_by_rtt_and_loss() {
        let mut l = LinkEstimate::default();
        // 1 KiB every 10 ms while busy: 102 400 B/s.
        for i in 0..50 {
            l.on_data(t(10 * i), 1024, true);
        }
        let r = l.expected_bandwidth(None).unwrap();
        assert!((r - 102_400.0).abs() < 1.0, "{r}");
        // A 200 ms round trip keeps 80 %.
        let r = l
            .expected_bandwidth(Some(Duration::from_millis(200)))
            .unwrap();
        assert!((r - 81_920.0).abs() < 1.0, "{r}");
        // 5 lost of 50 received, k = 1: minus 10 %.
        l.on_lost(5);
        let r = l.expected_bandwidth(None).unwrap();
        assert!((r - 92_160.0).abs() < 1.0, "{r}");
        // A round trip over a second is floored, not negative.
        let far = l.expected_bandwidth(Some(Duration::from_secs(3))).unwrap();
        assert!(far > 0.0 && far < r / 5.0, "{far}");
    }

    #[test]
    fn a_silent_peer_expects_nothing_until_it_sends_again() {
        let mut l = LinkEstimate::default();
        for i in 0..50 {
            l.on_data(t(10 * i), 1024, true);
        }
        let before = l.expected_bandwidth(None).unwrap();
        // Its requests timed out with nothing answered after them: a few
        // lost chunks alone would leave it nearly as fast as before.
        l.on_lost(2);
        assert!(l.expected_bandwidth(None).unwrap() > 0.9 * before);
        l.on_silence();
        assert_eq!(l.expected_bandwidth(None), Some(0.0));
        // It answers again: its rate counts again, less the loss.
        l.on_data(t(2000), 1024, true);
        let after = l.expected_bandwidth(None).unwrap();
        assert!(after > 0.9 * before, "{after} against {before}");
    }

    #[test]
    fn a_loss_found_early_counts_but_keeps_the_pace() {
        let paced = |early: bool| {
            let mut l = LinkEstimate::default();
            for i in 0..50 {
                l.on_data(t(10 * i), 1024, true);
            }
            if early {
                l.on_passed_over(5);
            } else {
                l.on_lost(5);
            }
            // The re-asked chunk comes 100 ms later: with the loss found
            // early the gap is the link's pace; after a timeout it is not.
            l.on_data(t(590), 1024, true);
            (l.loss_ratio(), l.expected_bandwidth(None).unwrap())
        };
        let (early_loss, early_rate) = paced(true);
        let (late_loss, late_rate) = paced(false);
        assert_eq!(early_loss, late_loss);
        assert!(early_loss > 0.0);
        assert!(early_rate < late_rate, "{early_rate} against {late_rate}");
    }

    #[test]
    fn gaps_while_nothing_was_asked_are_not_samples() {
        let mut l = LinkEstimate::default();
        l.on_data(t(0), 1024, true);
        l.on_data(t(10), 1024, false);
        // 5 s idle: we asked nothing.
        l.on_data(t(5010), 1024, true);
        l.on_data(t(5020), 1024, true);
        let r = l.expected_bandwidth(None).unwrap();
        assert!((r - 102_400.0).abs() < 1.0, "{r}");
        assert!(LinkEstimate::default().expected_bandwidth(None).is_none());
    }

    #[test]
    fn k_grows_on_instability_and_falls_back_when_calm() {
        let mut l = LinkEstimate::default();
        let shaky = Some((Duration::from_millis(100), Duration::from_millis(80)));
        for _ in 0..10 {
            l.update_stability(shaky);
        }
        assert_eq!(l.k(), K_MAX);
        let calm = Some((Duration::from_millis(100), Duration::from_millis(10)));
        for _ in 0..STABLE_UPDATES {
            l.update_stability(calm);
        }
        assert_eq!(l.k(), K_MAX - 1);
    }

    #[test]
    fn eq2_takes_the_fastest_until_the_sum_reaches_the_need() {
        let mut peers = [(1u32, 10.0), (2, 50.0), (3, 30.0), (4, 30.0)];
        assert_eq!(select(&mut peers, 75.0), 2);
        assert_eq!(peers[..2], [(2, 50.0), (3, 30.0)]);
        assert_eq!(select(&mut peers, 50.0), 1);
        assert_eq!(select(&mut peers, 1000.0), 4);
        assert_eq!(select::<u32>(&mut [], 1.0), 0);
    }

    #[test]
    fn x_rises_with_stalls_and_relaxes_after_calm() {
        let mut f = FastPeers::default();
        assert!(f.due(t(0)));
        assert!(!f.due(t(500)));
        f.on_stall(t(1000));
        f.on_stall(t(2000));
        assert_eq!(f.x(), X_START + 2.0 * X_STEP);
        assert!(f.due(t(2000)));
        assert_eq!(f.x(), X_START + 2.0 * X_STEP);
        assert!(f.due(t(32_000)));
        assert_eq!(f.x(), X_START + X_STEP);
        for i in 0..10 {
            f.due(t(70_000 + 31_000 * i));
        }
        assert_eq!(f.x(), X_START);
    }
}
