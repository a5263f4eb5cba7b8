//! What the downloading commands print: sizes and rates in one unit system
//! (binary: KiB, MiB, GiB — the units of indicatif's byte counters, which
//! `seed`'s hashing bar uses), counts with the right plural, and rates and
//! ETAs that count only the bytes this run downloaded, not those resumed.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Bytes in binary units (1 KiB = 1024 B): every size and rate the
/// commands print goes through here.
pub fn human_bytes(n: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n.max(0.0);
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `n` and the noun, singular for exactly one: "1 peer", "2 peers".
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A duration for people: "0.4 s", "60 s" (seconds up to two minutes, as
/// the timeouts are given), "3 min 5 s", "2 h 10 min".
pub fn human_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 10.0 {
        return format!("{s:.1} s");
    }
    let s = d.as_secs();
    match (s / 3600, s / 60 % 60, s % 60) {
        (0, _, _) if s < 120 => format!("{s} s"),
        (0, min, 0) => format!("{min} min"),
        (0, min, sec) => format!("{min} min {sec} s"),
        (h, min, _) => format!("{h} h {min} min"),
    }
}

/// The recent download rate: bytes received over the last few seconds,
/// from samples of a counter that starts at zero with this run (so bytes
/// resumed from an earlier run never count).
pub struct RateMeter {
    window: Duration,
    samples: VecDeque<(Instant, u64)>,
}

impl RateMeter {
    /// A meter averaging over `window`.
    pub fn new(window: Duration) -> RateMeter {
        RateMeter {
            window,
            samples: VecDeque::new(),
        }
    }

    /// The counter read `bytes` at `now`.
    pub fn record(&mut self, now: Instant, bytes: u64) {
        self.samples.push_back((now, bytes));
        // Keep one sample older than the window, so that the window is
        // always spanned once it has passed.
        while self.samples.len() > 2
            && self
                .samples
                .get(1)
                .is_some_and(|(t, _)| now.duration_since(*t) >= self.window)
        {
            self.samples.pop_front();
        }
    }

    /// Bytes per second between the oldest and newest sample kept.
    pub fn rate(&self) -> f64 {
        match (self.samples.front(), self.samples.back()) {
            (Some((t0, b0)), Some((t1, b1))) if t1 > t0 => {
                b1.saturating_sub(*b0) as f64 / t1.duration_since(*t0).as_secs_f64()
            }
            _ => 0.0,
        }
    }
}

/// Where a download stands, as one line for the progress bar and for the
/// plain lines printed when stderr is not a terminal.
pub struct Progress {
    /// Bytes stored, resumed ones included.
    pub stored: u64,
    /// The content's size, once known.
    pub total: Option<u64>,
    /// The recent rate of this run (bytes per second).
    pub rate: f64,
    /// Peers connected now.
    pub peers: usize,
}

impl Progress {
    /// "1.2 MiB of 3.0 MiB (40.0%), 512.0 KiB/s, 2 peers, ETA 3.0 s".
    pub fn line(&self) -> String {
        let size = match self.total {
            Some(t) => format!(
                "{} of {} ({:.1}%)",
                human_bytes(self.stored as f64),
                human_bytes(t as f64),
                100.0 * self.stored as f64 / t.max(1) as f64
            ),
            None => format!("{} (size unknown)", human_bytes(self.stored as f64)),
        };
        let eta = match self.eta() {
            Some(d) => format!(", ETA {}", human_duration(d)),
            None => String::new(),
        };
        format!(
            "{size}, {}/s, {}{eta}",
            human_bytes(self.rate),
            count(self.peers, "peer", "peers")
        )
    }

    /// The time left at the recent rate (none while nothing arrives or the
    /// size is unknown).
    pub fn eta(&self) -> Option<Duration> {
        let left = self.total?.saturating_sub(self.stored);
        (self.rate >= 1.0).then(|| Duration::from_secs_f64(left as f64 / self.rate))
    }
}

/// The line printed once a download completes.
pub struct Summary {
    /// Where the content is.
    pub path: String,
    /// Its size.
    pub size: u64,
    /// Bytes that were there from an earlier run.
    pub resumed: u64,
    /// How long this run took.
    pub elapsed: Duration,
    /// Peers that sent chunks in this run.
    pub peers: usize,
}

impl Summary {
    /// "movie.mp4 complete (3.0 MiB): 1.8 MiB in 2.1 s at 0.9 MiB/s from 2
    /// peers, 1.2 MiB resumed": the rate is the mean over this run's bytes.
    pub fn line(&self) -> String {
        let fetched = self.size.saturating_sub(self.resumed);
        let rate = fetched as f64 / self.elapsed.as_secs_f64().max(1e-3);
        let resumed = if self.resumed > 0 {
            format!(", {} resumed", human_bytes(self.resumed as f64))
        } else {
            String::new()
        };
        format!(
            "{} complete ({}): {} in {} at {}/s from {}{resumed}",
            self.path,
            human_bytes(self.size as f64),
            human_bytes(fetched as f64),
            human_duration(self.elapsed),
            human_bytes(rate),
            count(self.peers, "peer", "peers"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_units_everywhere() {
        assert_eq!(human_bytes(0.0), "0 B");
        assert_eq!(human_bytes(1000.0), "1000 B");
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
        assert_eq!(human_bytes(3.0 * 1024.0 * 1024.0), "3.0 MiB");
        assert_eq!(human_bytes(5.0 * 1024f64.powi(3)), "5.0 GiB");
    }

    #[test]
    fn plurals() {
        assert_eq!(count(0, "peer", "peers"), "0 peers");
        assert_eq!(count(1, "peer", "peers"), "1 peer");
        assert_eq!(count(2, "peer", "peers"), "2 peers");
    }

    #[test]
    fn durations() {
        assert_eq!(human_duration(Duration::from_millis(2100)), "2.1 s");
        assert_eq!(human_duration(Duration::from_secs(42)), "42 s");
        assert_eq!(human_duration(Duration::from_secs(60)), "60 s");
        assert_eq!(human_duration(Duration::from_secs(120)), "2 min");
        assert_eq!(human_duration(Duration::from_secs(185)), "3 min 5 s");
        assert_eq!(human_duration(Duration::from_secs(7800)), "2 h 10 min");
    }

    #[test]
    fn rate_counts_only_this_runs_bytes_in_the_window() {
        let t0 = Instant::now();
        let mut m = RateMeter::new(Duration::from_secs(5));
        assert_eq!(m.rate(), 0.0);
        for s in 0..=10u64 {
            m.record(t0 + Duration::from_secs(s), s * 1000);
        }
        assert!((m.rate() - 1000.0).abs() < 1e-9, "{}", m.rate());
        // A stall: the rate falls to zero once the window holds no bytes.
        for s in 11..=20u64 {
            m.record(t0 + Duration::from_secs(s), 10_000);
        }
        assert_eq!(m.rate(), 0.0);
    }

    #[test]
    fn progress_line_and_eta() {
        let p = Progress {
            stored: 1024 * 1024,
            total: Some(4 * 1024 * 1024),
            rate: 1024.0 * 1024.0,
            peers: 1,
        };
        assert_eq!(p.eta(), Some(Duration::from_secs(3)));
        assert_eq!(
            p.line(),
            "1.0 MiB of 4.0 MiB (25.0%), 1.0 MiB/s, 1 peer, ETA 3.0 s"
        );
        let stalled = Progress { rate: 0.0, ..p };
        assert_eq!(stalled.eta(), None);
    }

    #[test]
    fn summary_rate_is_this_runs_mean() {
        let s = Summary {
            path: "out".into(),
            size: 4 * 1024 * 1024,
            resumed: 2 * 1024 * 1024,
            elapsed: Duration::from_secs(2),
            peers: 2,
        };
        assert_eq!(
            s.line(),
            "out complete (4.0 MiB): 2.0 MiB in 2.0 s at 1.0 MiB/s from 2 peers, 2.0 MiB resumed"
        );
    }
}
