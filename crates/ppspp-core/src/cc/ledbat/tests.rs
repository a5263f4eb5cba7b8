//! One test per LEDBAT rule (RFC 6817 §2.4.2), driving [`Ledbat`] with
//! hand-made ACKs.

use super::*;

const MSS: u64 = 1100;
/// The one-way delay sample at an empty queue, µs (any offset would do).
const BASE: i64 = 25_000;
const RTT: Duration = Duration::from_millis(50);
const RTT_US: u64 = 50_000;

fn at(micros: u64) -> Instant {
    Instant::from_micros(micros)
}

fn no_slow_start() -> LedbatConfig {
    LedbatConfig {
        slow_start: false,
        ..LedbatConfig::default()
    }
}

/// A controller whose window is set to `segments` MSS.
fn with_window(config: LedbatConfig, segments: f64) -> Ledbat {
    let mut cc = Ledbat::new(MSS, config);
    cc.cwnd = segments * MSS as f64;
    cc
}

fn segments(cc: &Ledbat) -> f64 {
    cc.cwnd / MSS as f64
}

/// One ACK of one MSS for a window-limited sender (flight = window).
fn ack_full(cc: &mut Ledbat, now: Instant, delay: i64) {
    let flight = cc.window();
    cc.on_ack(
        now,
        &AckSample {
            bytes: MSS,
            one_way_delay: Some(delay),
            rtt: Some(RTT),
            flight,
        },
    );
}

/// The ACKs of one window, spread over one round trip from `start`; returns
/// the time after it.
fn round_trip(cc: &mut Ledbat, start: u64, delay: i64) -> u64 {
    let n = (cc.window() / MSS).max(1);
    for i in 0..n {
        ack_full(cc, at(start + i * RTT_US / n), delay);
    }
    start + RTT_US
}

/// Fills the current-delay filter with `delay` without acknowledging bytes.
fn settle(cc: &mut Ledbat, now: Instant, delay: i64) {
    for _ in 0..cc.config().current_filter {
        let flight = cc.window();
        cc.on_ack(
            now,
            &AckSample {
                bytes: 0,
                one_way_delay: Some(delay),
                rtt: None,
                flight,
            },
        );
    }
}

#[test]
fn starts_with_two_mss() {
    let cc = Ledbat::new(MSS, LedbatConfig::default());
    assert_eq!(cc.window(), 2 * MSS);
    assert!(cc.in_slow_start());
    assert_eq!(cc.name(), "ledbat");
    assert!(!Ledbat::new(MSS, no_slow_start()).in_slow_start());
    assert_eq!(cc.queuing_delay(), None);
}

#[test]
fn slow_start_doubles_per_round_trip() {
    let mut cc = Ledbat::new(MSS, LedbatConfig::default());
    let mut t = 0;
    for expected in [4, 8, 16, 32] {
        t = round_trip(&mut cc, t, BASE);
        assert_eq!(cc.window(), expected * MSS);
    }
    assert!(cc.in_slow_start());
}

#[test]
fn zero_queuing_delay_grows_one_mss_per_round_trip_after_slow_start() {
    let mut cc = Ledbat::new(MSS, LedbatConfig::default());
    let mut t = 0;
    while cc.window() < 40 * MSS {
        t = round_trip(&mut cc, t, BASE);
    }
    assert!(cc.in_slow_start());
    // A 60 ms queue (more than TARGET/2) ends slow start …
    settle(&mut cc, at(t), BASE + 60_000);
    assert!(!cc.in_slow_start());
    // … and once it drains, growth is linear.
    settle(&mut cc, at(t), BASE);
    let w0 = segments(&cc);
    for _ in 0..10 {
        t = round_trip(&mut cc, t, BASE);
    }
    let growth = segments(&cc) - w0;
    assert!(
        (9.5..=10.0).contains(&growth),
        "grew {growth} MSS in 10 RTTs"
    );
    assert!(!cc.in_slow_start());
}

#[test]
fn without_slow_start_growth_is_linear_from_the_start() {
    let mut cc = Ledbat::new(MSS, no_slow_start());
    let mut t = 0;
    for _ in 0..20 {
        t = round_trip(&mut cc, t, BASE);
    }
    // Fewer ACKs per round trip at a small window, so a little under 1 MSS each.
    let w = segments(&cc);
    assert!((19.0..=22.0).contains(&w), "window {w} MSS after 20 RTTs");
}

#[test]
fn gain_scales_growth() {
    let config = LedbatConfig {
        gain: 0.5,
        ..no_slow_start()
    };
    let mut cc = with_window(config, 40.0);
    let mut t = 0;
    settle(&mut cc, at(t), BASE);
    for _ in 0..10 {
        t = round_trip(&mut cc, t, BASE);
    }
    let growth = segments(&cc) - 40.0;
    assert!((4.8..=5.0).contains(&growth), "grew {growth} MSS");
}

#[test]
fn at_target_the_window_holds_and_above_it_shrinks() {
    let mut cc = with_window(no_slow_start(), 40.0);
    let mut t = 0;
    settle(&mut cc, at(t), BASE);
    // Queuing delay exactly TARGET: off_target = 0.
    settle(&mut cc, at(t), BASE + 100_000);
    t = round_trip(&mut cc, t, BASE + 100_000);
    assert_eq!(cc.window(), 40 * MSS);
    // Twice the target: off_target = −1, one MSS less per round trip.
    settle(&mut cc, at(t), BASE + 200_000);
    t = round_trip(&mut cc, t, BASE + 200_000);
    let shrink = 40.0 - segments(&cc);
    assert!((0.98..=1.05).contains(&shrink), "shrank {shrink} MSS");
    // 1.5 × target: half an MSS.
    let before = segments(&cc);
    settle(&mut cc, at(t), BASE + 150_000);
    round_trip(&mut cc, t, BASE + 150_000);
    let shrink = before - segments(&cc);
    assert!((0.47..=0.52).contains(&shrink), "shrank {shrink} MSS");
}

/// An ACK of one MSS at the base delay with `flight` bytes in flight.
fn ack_with_flight(cc: &mut Ledbat, now: Instant, flight: u64) {
    cc.on_ack(
        now,
        &AckSample {
            bytes: MSS,
            one_way_delay: Some(BASE),
            rtt: Some(RTT),
            flight,
        },
    );
}

#[test]
fn window_is_capped_at_flight_plus_allowed_increase() {
    // A sender not filling its window (flight 10 MSS of 40 for more than a
    // round trip) does not grow it; unlike RFC 6817's pseudocode the cap
    // does not shrink it either.
    let mut cc = with_window(no_slow_start(), 40.0);
    for i in 0..4 {
        ack_with_flight(&mut cc, at(i * RTT_US), 10 * MSS);
    }
    assert_eq!(cc.window(), 40 * MSS);
    // A full window grows, but never past flight + 1 MSS, in slow start too.
    let mut ss = with_window(LedbatConfig::default(), 10.0);
    ack_with_flight(&mut ss, at(1), 10 * MSS);
    assert_eq!(ss.window(), 11 * MSS);
    assert!(ss.in_slow_start());
    let mut half = with_window(LedbatConfig::default(), 10.0);
    ack_with_flight(&mut half, at(1), 5 * MSS);
    assert_eq!(half.window(), 10 * MSS);
    // ALLOWED_INCREASE = 3: slow start may run 3 MSS past the flight.
    let config = LedbatConfig {
        allowed_increase: 3,
        ..LedbatConfig::default()
    };
    let mut wide = with_window(config, 10.0);
    for _ in 0..5 {
        ack_with_flight(&mut wide, at(1), 10 * MSS);
    }
    assert_eq!(wide.window(), 13 * MSS);
}

#[test]
fn the_cap_counts_the_largest_flight_of_the_last_round_trip() {
    // A window-limited flight that dips between refills (a receiver that
    // requests in batches, ACKs in clumps) still grows one MSS per round
    // trip at zero queuing delay: the window was tested when the flight
    // peaked earlier in the round trip.
    let mut cc = with_window(no_slow_start(), 40.0);
    let mut t = 0;
    for _ in 0..10 {
        let n = (cc.window() / MSS).max(1);
        for i in 0..n {
            // Full at the first ACK of the round, then draining by one MSS
            // per ACK until the next batch.
            let flight = cc.window().saturating_sub((i % 16) * MSS);
            ack_with_flight(&mut cc, at(t + i * RTT_US / n), flight);
        }
        t += RTT_US;
    }
    let grown = segments(&cc) - 40.0;
    assert!(
        (9.0..=10.5).contains(&grown),
        "grew {grown} MSS in 10 round trips"
    );
    // Once the flight stays low for two round trips, growth stops again.
    let before = cc.window();
    for i in 0..8 {
        ack_with_flight(&mut cc, at(t + i * RTT_US / 2), 10 * MSS);
    }
    let stalled = cc.window();
    assert!(stalled - before < MSS, "grew {} bytes", stalled - before);
    for i in 8..16 {
        ack_with_flight(&mut cc, at(t + i * RTT_US / 2), 10 * MSS);
    }
    assert_eq!(cc.window(), stalled);
}

#[test]
fn window_never_drops_below_min_cwnd() {
    let mut cc = with_window(no_slow_start(), 3.0);
    settle(&mut cc, at(0), BASE);
    // Ten seconds of queue: off_target = −99.
    settle(&mut cc, at(1), BASE + 10_000_000);
    ack_full(&mut cc, at(2), BASE + 10_000_000);
    assert_eq!(cc.window(), 2 * MSS);
    for i in 0..100 {
        ack_full(&mut cc, at(3 + i), BASE + 10_000_000);
        assert_eq!(cc.window(), 2 * MSS);
    }
    // Nothing in flight (for longer than a round trip, so that the full
    // flights above no longer count): the cap says 1 MSS, the floor 2.
    cc.on_ack(
        at(1_000_000),
        &AckSample {
            bytes: MSS,
            one_way_delay: Some(BASE),
            rtt: None,
            flight: 0,
        },
    );
    assert_eq!(cc.window(), 2 * MSS);
}

#[test]
fn loss_halves_at_most_once_per_round_trip() {
    let mut cc = with_window(no_slow_start(), 40.0);
    let ack = AckSample {
        bytes: 0,
        one_way_delay: None,
        rtt: Some(Duration::from_millis(100)),
        flight: 40 * MSS,
    };
    cc.on_ack(at(0), &ack);
    assert_eq!(cc.srtt(), Some(Duration::from_millis(100)));
    let t = 1_000_000;
    cc.on_loss(at(t), MSS);
    assert_eq!(cc.window(), 20 * MSS);
    cc.on_loss(at(t + 50_000), MSS);
    cc.on_loss(at(t + 99_999), MSS);
    assert_eq!(cc.window(), 20 * MSS);
    cc.on_loss(at(t + 100_000), MSS);
    assert_eq!(cc.window(), 10 * MSS);
    // Down to MIN_CWND and no further.
    for i in 2..10 {
        cc.on_loss(at(t + i * 100_000), MSS);
    }
    assert_eq!(cc.window(), 2 * MSS);
}

#[test]
fn loss_before_any_rtt_sample_waits_one_second() {
    let mut cc = with_window(no_slow_start(), 40.0);
    cc.on_loss(at(0), MSS);
    cc.on_loss(at(999_999), MSS);
    assert_eq!(cc.window(), 20 * MSS);
    cc.on_loss(at(1_000_000), MSS);
    assert_eq!(cc.window(), 10 * MSS);
}

#[test]
fn loss_ends_slow_start() {
    let mut cc = Ledbat::new(MSS, LedbatConfig::default());
    let t = round_trip(&mut cc, 0, BASE);
    round_trip(&mut cc, t, BASE);
    assert_eq!(cc.window(), 8 * MSS);
    cc.on_loss(at(200_000), MSS);
    assert!(!cc.in_slow_start());
    assert_eq!(cc.window(), 4 * MSS);
}

#[test]
fn timeout_drops_to_one_mss_then_slow_starts_to_half_the_old_window() {
    let mut cc = with_window(no_slow_start(), 40.0);
    let mut cc_ss = with_window(LedbatConfig::default(), 40.0);
    cc_ss.in_slow_start = false;
    for cc in [&mut cc, &mut cc_ss] {
        settle(cc, at(0), BASE);
        cc.on_timeout(at(1_000));
        assert_eq!(cc.window(), MSS);
        // A loss right after the timeout is the same congestion event.
        cc.on_loss(at(2_000), MSS);
        assert_eq!(cc.window(), MSS);
        // The next ACK restores MIN_CWND.
        ack_full(cc, at(3_000), BASE);
        assert!(cc.window() >= 2 * MSS);
    }
    // Without slow start LEDBAT's rule goes on linearly …
    assert!(!cc.in_slow_start());
    assert!(cc.window() < 3 * MSS);
    // … with it, slow start climbs back to 20 MSS and stops there.
    assert!(cc_ss.in_slow_start());
    let mut t = 10_000;
    while cc_ss.in_slow_start() {
        t = round_trip(&mut cc_ss, t, BASE);
        assert!(t < 1_000_000, "slow start did not end");
    }
    // Slow start stops at 20 MSS; the rest of that round trip's ACKs follow
    // LEDBAT's rule (+ MSS²/cwnd each).
    let w = segments(&cc_ss);
    assert!((20.0..21.0).contains(&w), "window {w} MSS");
}

#[test]
fn slow_start_exits_when_queuing_delay_exceeds_half_the_target() {
    let mut cc = Ledbat::new(MSS, LedbatConfig::default());
    let mut t = round_trip(&mut cc, 0, BASE);
    t = round_trip(&mut cc, t, BASE);
    assert_eq!(cc.window(), 8 * MSS);
    // Exactly TARGET/2 does not exceed it: still doubling.
    settle(&mut cc, at(t), BASE + 50_000);
    assert!(cc.in_slow_start());
    t = round_trip(&mut cc, t, BASE + 50_000);
    assert_eq!(cc.window(), 16 * MSS);
    assert!(cc.in_slow_start());
    // One µs more ends it, once the filter (the minimum of the last four
    // samples) sees it …
    for _ in 0..3 {
        cc.on_ack(
            at(t),
            &AckSample {
                bytes: 0,
                one_way_delay: Some(BASE + 50_001),
                rtt: None,
                flight: cc.window(),
            },
        );
    }
    assert!(cc.in_slow_start());
    // … and the ACK that ends it already follows LEDBAT's rule:
    // off_target ≈ 0.5, so + 0.5 · MSS² / cwnd instead of + MSS.
    let before = cc.cwnd;
    ack_full(&mut cc, at(t), BASE + 50_001);
    assert!(!cc.in_slow_start());
    let step = (cc.cwnd - before) / MSS as f64;
    let expected = 0.5 * MSS as f64 / before;
    assert!((step - expected).abs() < 1e-3, "step {step} MSS");
}

#[test]
fn slow_start_exit_threshold_follows_the_target() {
    let config = LedbatConfig {
        target: Duration::from_millis(25),
        ..LedbatConfig::default()
    };
    let mut cc = Ledbat::new(MSS, config);
    settle(&mut cc, at(0), BASE);
    settle(&mut cc, at(1), BASE + 12_500);
    assert!(cc.in_slow_start());
    settle(&mut cc, at(2), BASE + 12_501);
    assert!(!cc.in_slow_start());
}

#[test]
fn acks_without_delay_grow_nothing_but_count_for_rtt() {
    for config in [LedbatConfig::default(), no_slow_start()] {
        let mut cc = with_window(config, 10.0);
        settle(&mut cc, at(0), BASE);
        for i in 0..50 {
            cc.on_ack(
                at(i),
                &AckSample {
                    bytes: 10 * MSS,
                    one_way_delay: None,
                    rtt: Some(Duration::from_millis(30)),
                    flight: 10 * MSS,
                },
            );
        }
        assert_eq!(cc.window(), 10 * MSS);
        assert_eq!(cc.srtt(), Some(Duration::from_millis(30)));
    }
}

#[test]
fn base_delay_minimum_and_roll_over_after_minutes() {
    let mut cc = with_window(no_slow_start(), 10.0);
    settle(&mut cc, at(0), BASE);
    // Every later sample is 40 ms higher (a longer route, not a queue).
    let minute = 60_000_000;
    let mut t = 1_000_000;
    while t < 10 * minute {
        settle(&mut cc, at(t), BASE + 40_000);
        assert_eq!(cc.queuing_delay(), Some(Duration::from_millis(40)));
        t += 5_000_000;
    }
    // After ten one-minute buckets the old minimum is forgotten.
    settle(&mut cc, at(10 * minute), BASE + 40_000);
    assert_eq!(cc.queuing_delay(), Some(Duration::ZERO));
    // A lower sample is adopted at once.
    settle(&mut cc, at(10 * minute + 1), BASE + 30_000);
    assert_eq!(cc.delays().base_delay(), Some(BASE + 30_000));
    assert_eq!(cc.queuing_delay(), Some(Duration::ZERO));
}

/// A scripted run touching every rule; returns the window after each step.
fn scripted_run(offset: i64) -> Vec<(u64, bool)> {
    let mut cc = Ledbat::new(MSS, LedbatConfig::default());
    let mut trace = Vec::new();
    let mut t = 0;
    // Slow start, queues growing past the target and draining, flights
    // below the window, a loss, a timeout, then samples minutes apart so
    // that the base-delay buckets roll.
    let queues: Vec<i64> = (0..400).map(|i| (i % 97) * 2_000 - 20_000).collect();
    for (i, q) in queues.iter().enumerate() {
        let q = (*q).max(0);
        let flight = cc.window() - (i as u64 % 3) * 100;
        cc.on_ack(
            at(t),
            &AckSample {
                bytes: MSS,
                one_way_delay: Some(BASE + q + offset),
                rtt: Some(RTT + Duration::from_micros(q as u64)),
                flight,
            },
        );
        if i == 150 {
            cc.on_loss(at(t), MSS);
        }
        if i == 250 {
            cc.on_timeout(at(t));
        }
        trace.push((cc.window(), cc.in_slow_start()));
        t += if i < 300 { 5_000 } else { 3_000_000 };
    }
    trace
}

#[test]
fn a_constant_clock_offset_changes_nothing() {
    let reference = scripted_run(0);
    let ups = reference.windows(2).filter(|w| w[1].0 > w[0].0).count();
    let downs = reference.windows(2).filter(|w| w[1].0 < w[0].0).count();
    assert!(
        ups > 50 && downs > 50,
        "a dull script: {ups} ups, {downs} downs"
    );
    for offset in [1_000_000_000, -1_000_000_000, -25_000, 7_000_000_000_000] {
        assert_eq!(scripted_run(offset), reference, "offset {offset}");
    }
}

#[test]
fn pacing_rate_is_a_window_per_0_8_round_trips() {
    let srtt = Duration::from_millis(125);
    let cc = Ledbat::new(MSS, no_slow_start());
    // 2200 bytes · 1.25 / 0.125 s.
    assert_eq!(cc.pacing_rate(srtt), Some(22_000));
    let ss = Ledbat::new(MSS, LedbatConfig::default());
    assert_eq!(ss.pacing_rate(srtt), Some(35_200));
    assert_eq!(cc.pacing_rate(Duration::ZERO), None);
    assert!(cc.pacing_rate(Duration::from_nanos(1)).unwrap() > 1 << 40);
}

#[test]
fn degenerate_settings_are_raised() {
    let config = LedbatConfig {
        target: Duration::ZERO,
        init_cwnd: 0,
        min_cwnd: 0,
        allowed_increase: 0,
        current_filter: 0,
        base_history: 0,
        ..LedbatConfig::default()
    };
    let mut cc = Ledbat::new(0, config);
    assert_eq!(cc.window(), 1);
    ack_full(&mut cc, at(0), 5);
    ack_full(&mut cc, at(1), 7);
    assert!(cc.window() >= 1);
    assert_eq!(cc.config().target, Duration::from_micros(1));
}
