//! LEDBAT against one bottleneck: does it fill the link and hold the queue at
//! its target (RFC 6817 §2.4)?
//!
//! A tiny deterministic packet model, kept here until the network simulator
//! exists: one sender, a FIFO drop-tail bottleneck of 10 Mbit/s with a 1 s
//! buffer, 25 ms propagation each way, DATA of 1100 bytes acknowledged one by
//! one, time in integer microseconds. The sender is window-limited and paced
//! at the controller's pacing rate; the receiver stamps each ACK with
//! `receive time − send timestamp` taken from two clocks with different,
//! arbitrary offsets.
//!
//! How long to warm up: near the target LEDBAT moves the window by
//! `off_target` MSS per round trip, so the queue approaches the target
//! exponentially with a time constant of `TARGET · RTT / (MSS / capacity)`
//! round trips' worth of time: with a 25 ms target ≈ 2 s, with 100 ms ≈ 17 s
//! (114 round trips of ≈ 150 ms). Slow start leaves the queue ≈ 50 ms above a
//! 100 ms target (it exits when the queue reads 50 ms, a round trip late,
//! while the window doubles), so the 100 ms runs warm up for 40 s.

use std::collections::VecDeque;
use std::time::Duration;

use ppspp_core::cc::{AckSample, CongestionController, Ledbat, LedbatConfig, RttEstimator};
use ppspp_core::time::Instant;

const MSS: u64 = 1100;

/// The bottleneck and the path around it.
#[derive(Clone, Copy, Debug)]
struct Path {
    /// Bottleneck capacity in bit/s.
    bps: u64,
    /// Drop-tail buffer, in µs of transmission at that capacity.
    buffer_us: u64,
    /// Propagation delay each way, µs.
    propagation_us: u64,
}

/// The path of the brief: 10 Mbit/s, 1 s of buffer, 25 ms each way.
const PATH: Path = Path {
    bps: 10_000_000,
    buffer_us: 1_000_000,
    propagation_us: 25_000,
};
/// The sender's and the receiver's clocks read `now` plus these.
const SENDER_CLOCK: i64 = 123_456_789_000;
const RECEIVER_CLOCK: i64 = -987_654_321;

/// A datagram between sending and its ACK's arrival.
struct InFlight {
    sent: u64,
    ack_at: u64,
    one_way_delay: i64,
}

/// What one run measured after its warm-up.
#[derive(Debug)]
struct Outcome {
    /// Busy fraction of the bottleneck.
    utilisation: f64,
    /// Mean time datagrams sent in the span waited in the queue.
    mean_queue_ms: f64,
    /// The 95th percentile of that wait.
    p95_queue_ms: f64,
    /// Datagrams the full buffer dropped (over the whole run).
    drops: u64,
    /// The window at the end, bytes.
    final_window: u64,
}

/// Runs a sender with `config` over `path` for `warm_up + measure` and
/// measures the second part.
fn run(path: Path, config: LedbatConfig, warm_up: Duration, measure: Duration) -> Outcome {
    let tx_us = MSS * 8 * 1_000_000 / path.bps;
    let mut cc = Ledbat::new(MSS, config);
    let mut rtt = RttEstimator::default();
    let start = u64::try_from(warm_up.as_micros()).unwrap();
    let end = start + u64::try_from(measure.as_micros()).unwrap();

    let mut now = 0u64;
    let mut link_free = 0u64;
    let mut flight = 0u64;
    let mut next_send = 0u64;
    let mut in_flight: VecDeque<InFlight> = VecDeque::new();
    // Drops are noticed one round trip after they happen.
    let mut losses: VecDeque<u64> = VecDeque::new();

    let mut busy_us = 0u64;
    let mut waits: Vec<u64> = Vec::new();
    let mut drops = 0u64;

    while now < end {
        // Send while the window and the pacer allow.
        while flight + MSS <= cc.window() && now >= next_send {
            let wait = link_free.saturating_sub(now);
            if wait + tx_us > path.buffer_us {
                drops += 1;
                losses.push_back(now + 2 * path.propagation_us + path.buffer_us);
            } else {
                let service = now + wait;
                link_free = service + tx_us;
                let received = link_free + path.propagation_us;
                in_flight.push_back(InFlight {
                    sent: now,
                    ack_at: received + path.propagation_us,
                    one_way_delay: (received as i64 + RECEIVER_CLOCK) - (now as i64 + SENDER_CLOCK),
                });
                // The part of this transmission inside the measured span.
                busy_us += link_free.min(end).saturating_sub(service.max(start));
                if (start..end).contains(&now) {
                    waits.push(wait);
                }
            }
            flight += MSS;
            cc.on_sent(Instant::from_micros(now), MSS, flight);
            let rate = rtt.srtt().and_then(|s| cc.pacing_rate(s));
            next_send = match rate {
                Some(r) if r > 0 => now + (MSS * 1_000_000).div_ceil(r),
                _ => now,
            };
        }

        // Advance to the next event: an ACK, a noticed loss, or the pacer
        // (only when the window would let a datagram go).
        let mut next = end;
        if let Some(p) = in_flight.front() {
            next = next.min(p.ack_at);
        }
        if let Some(&l) = losses.front() {
            next = next.min(l);
        }
        if flight + MSS <= cc.window() && next_send > now {
            next = next.min(next_send);
        }
        assert!(next > now || next == end, "the model stalled at {now} µs");
        now = next;

        while in_flight.front().is_some_and(|p| p.ack_at <= now) {
            let p = in_flight.pop_front().unwrap();
            let sample = Duration::from_micros(now - p.sent);
            rtt.on_sample(sample);
            cc.on_ack(
                Instant::from_micros(now),
                &AckSample {
                    bytes: MSS,
                    one_way_delay: Some(p.one_way_delay),
                    rtt: Some(sample),
                    flight,
                },
            );
            flight -= MSS;
        }
        while losses.front().is_some_and(|&l| l <= now) {
            losses.pop_front();
            cc.on_loss(Instant::from_micros(now), MSS);
            flight -= MSS;
        }
    }

    waits.sort_unstable();
    let ms = |us: u64| us as f64 / 1000.0;
    Outcome {
        utilisation: busy_us as f64 / (end - start) as f64,
        mean_queue_ms: ms(waits.iter().sum::<u64>()) / waits.len().max(1) as f64,
        p95_queue_ms: ms(waits[waits.len() * 95 / 100]),
        drops,
        final_window: cc.window(),
    }
}

fn with_target(target_ms: u64) -> LedbatConfig {
    LedbatConfig {
        target: Duration::from_millis(target_ms),
        ..LedbatConfig::default()
    }
}

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// Full link, mean queuing delay within ±10 % of the target, a steady queue
/// (95th percentile within +20 %), no drops.
fn check(outcome: &Outcome, target_ms: f64) {
    println!("target {target_ms} ms: {outcome:?}");
    assert!(
        outcome.utilisation >= 0.95,
        "utilisation {:.3} < 95 %",
        outcome.utilisation
    );
    let error = (outcome.mean_queue_ms - target_ms).abs() / target_ms;
    assert!(
        error <= 0.10,
        "mean queuing delay {:.2} ms, target {target_ms} ms",
        outcome.mean_queue_ms
    );
    assert!(
        outcome.p95_queue_ms <= 1.2 * target_ms,
        "p95 queuing delay {:.2} ms",
        outcome.p95_queue_ms
    );
    assert_eq!(outcome.drops, 0);
}

#[test]
fn fills_the_link_and_holds_the_queue_at_a_100_ms_target() {
    let outcome = run(PATH, with_target(100), secs(40), secs(20));
    check(&outcome, 100.0);
}

#[test]
fn fills_the_link_and_holds_the_queue_at_a_25_ms_target() {
    let outcome = run(PATH, with_target(25), secs(10), secs(20));
    check(&outcome, 25.0);
}

#[test]
fn the_queue_scales_with_the_target() {
    let long = run(PATH, with_target(100), secs(40), secs(20));
    let short = run(PATH, with_target(25), secs(40), secs(20));
    let ratio = long.mean_queue_ms / short.mean_queue_ms;
    println!("queue ratio {ratio:.3}: {long:?} / {short:?}");
    assert!((3.6..=4.4).contains(&ratio), "ratio {ratio:.3}");
    // The window differs by the queue: 75 ms of 10 Mbit/s ≈ 85 datagrams.
    let extra = long.final_window as f64 - short.final_window as f64;
    let expected = 0.075 * PATH.bps as f64 / 8.0;
    assert!(
        (extra / expected - 1.0).abs() < 0.1,
        "window grew {extra} bytes"
    );
}

#[test]
fn slow_start_fills_the_link_within_seconds() {
    let with = run(PATH, with_target(100), secs(1), secs(3));
    let without = run(
        PATH,
        LedbatConfig {
            slow_start: false,
            ..with_target(100)
        },
        secs(1),
        secs(3),
    );
    println!("1–4 s with slow start: {with:?}\nwithout: {without:?}");
    assert!(with.utilisation >= 0.99, "{with:?}");
    assert!(without.utilisation < 0.9, "{without:?}");
    assert_eq!(with.drops, 0);
}

#[test]
fn runs_are_deterministic() {
    let a = run(PATH, with_target(60), secs(2), secs(2));
    let b = run(PATH, with_target(60), secs(2), secs(2));
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}
