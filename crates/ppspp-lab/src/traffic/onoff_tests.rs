use super::*;
use crate::rng::{rng, Stream};

/// E5's source with t = 1: 200 kb/s bursts, mean ON 0.1 s, mean OFF
/// 0.2 s, shape 1.5; 250-byte packets (one every 10 ms while ON).
fn e5(seed: u64, stop: Option<Instant>) -> ParetoOnOff {
    let config = OnOffConfig {
        src: HostId(1),
        dst: HostId(2),
        flow: FlowId(3),
        burst_rate_bps: 200_000,
        size: 250,
        mean_on: Duration::from_millis(100),
        mean_off: Duration::from_millis(200),
        shape: 1.5,
        start: Instant::from_micros(1_000_000),
        stop,
    };
    ParetoOnOff::new(config, rng(seed, Stream::Flow, 0))
}

/// Drives `src` the way the engine does until `end`; returns the send
/// times of its packets, checking their sequence numbers run 0, 1, 2, ...
fn run(src: &mut ParetoOnOff, end: Instant) -> Vec<Instant> {
    let mut sent = Vec::new();
    while let Some(at) = src.poll_timeout() {
        if at > end {
            break;
        }
        src.on_timeout(at);
        while let Some(p) = src.poll_transmit(at) {
            match p.body {
                Body::Probe { seq, sent: s } => {
                    assert_eq!(seq, sent.len() as u64);
                    assert_eq!(s, at);
                    sent.push(s);
                }
                other => panic!("unexpected body {other:?}"),
            }
        }
    }
    sent
}

#[test]
fn long_run_rate_is_burst_times_on_fraction() {
    // Expected: 200 kb/s · 0.1 / (0.1 + 0.2) = 66.7 kb/s. With shape 1.5 the
    // variance is infinite and the error of a mean over n cycles shrinks
    // only like n^(-1/3): over 20 000 s (~67 000 cycles), 90 % of 200 seeds
    // fell within -6.5 %..+3.8 % of the expectation, but the extremes were
    // -26 % and +32 % (one enormous OFF or ON draw). Hence fixed seeds and
    // a 7 % bound; the shape itself is tested in `on_and_off_lengths_...`.
    let span = 20_000_000_000u64;
    for seed in [1, 2, 3] {
        let mut src = e5(seed, Some(Instant::from_micros(1_000_000 + span)));
        let sent = run(&mut src, Instant::MAX);
        let rate = src.bytes_sent() as f64 * 8.0 / (span as f64 / 1e6);
        let expected = 200_000.0 / 3.0;
        assert!(
            (rate / expected - 1.0).abs() < 0.06,
            "seed {seed}: {rate:.0} b/s against {expected:.0} b/s"
        );
        assert_eq!(src.packets_sent(), sent.len() as u64);
        // Mean ON of 10 packets: about one burst per 0.3 s.
        let per_burst = sent.len() as f64 / src.bursts() as f64;
        assert!(
            (per_burst / 10.0 - 1.0).abs() < 0.1,
            "seed {seed}: {per_burst} packets/burst"
        );
    }
}

#[test]
fn nothing_is_sent_while_off_and_bursts_keep_the_burst_rate() {
    let mut src = e5(7, None);
    let sent = run(&mut src, Instant::from_micros(601_000_000));
    assert!(sent.len() > 10_000, "only {} packets", sent.len());
    let offs = src.offs.clone();
    assert!(offs.len() > 1000);
    // No packet lies inside an OFF period: each one is at or after the
    // end of the OFF periods before it and before the start of the next.
    let mut i = 0;
    for &t in &sent {
        while i < offs.len() && offs[i].1 <= t {
            i += 1;
        }
        if let Some(&(from, to)) = offs.get(i) {
            assert!(t < from, "packet at {t} inside OFF [{from}, {to})");
        }
    }
    // Between consecutive packets: the 10 ms burst interval inside a
    // burst, or that plus exactly the OFF period drawn between bursts.
    let mut gaps_with_off = 0;
    let mut j = 0;
    for w in sent.windows(2) {
        let gap = w[1].as_micros() - w[0].as_micros();
        while j < offs.len() && offs[j].0 <= w[0] {
            j += 1;
        }
        match offs.get(j) {
            Some(&(from, to)) if from <= w[1] => {
                assert_eq!(gap, 10_000 + (to.as_micros() - from.as_micros()));
                gaps_with_off += 1;
            }
            _ => assert_eq!(gap, 10_000),
        }
    }
    let offs_between = offs
        .iter()
        .filter(|(_, to)| *to <= *sent.last().unwrap())
        .count();
    assert_eq!(gaps_with_off, offs_between);
    // Every OFF period is at least the Pareto scale, 200 ms · 1/3.
    assert!(offs
        .iter()
        .all(|(f, t)| t.as_micros() - f.as_micros() >= 66_666));
}

#[test]
fn the_same_seed_gives_the_same_schedule() {
    let end = Instant::from_micros(60_000_000);
    let a = run(&mut e5(11, None), end);
    let b = run(&mut e5(11, None), end);
    let c = run(&mut e5(12, None), end);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn stop_ends_the_flow_and_nothing_goes_before_start() {
    let stop = Instant::from_micros(31_000_000);
    let mut src = e5(5, Some(stop));
    assert_eq!(src.poll_transmit(Instant::from_micros(999_999)), None);
    assert_eq!(src.poll_timeout(), Some(Instant::from_micros(1_000_000)));
    let sent = run(&mut src, Instant::MAX);
    assert_eq!(sent[0], Instant::from_micros(1_000_000), "starts ON");
    assert!(sent.iter().all(|t| *t < stop));
    assert_eq!(src.poll_timeout(), None);
}

#[test]
fn without_off_periods_it_is_constant_rate() {
    let mut config = e5(1, None).config().clone();
    config.mean_off = Duration::ZERO;
    let mut src = ParetoOnOff::new(config, rng(1, Stream::Flow, 0));
    let sent = run(&mut src, Instant::from_micros(11_000_000 - 1));
    // 10 s at one packet per 10 ms from t = 1 s.
    assert_eq!(sent.len(), 1000);
    assert!(sent
        .windows(2)
        .all(|w| w[1].as_micros() - w[0].as_micros() == 10_000));
}

#[test]
fn on_and_off_lengths_follow_their_pareto_laws() {
    // P(X > x) = (scale / x)^shape. OFF: scale 200 ms / 3, so half the
    // OFF periods exceed scale · 2^(2/3) = 105.83 ms and 1/8 exceed four
    // times the scale. ON: scale 10/3 packets, and a burst has 7 packets
    // or more when X >= 6.5, with probability (3.333 / 6.5)^1.5 = 0.367.
    // ~10 000 draws give a binomial standard deviation under 0.005; the
    // bounds are 0.02.
    let mut src = e5(3, None);
    run(&mut src, Instant::from_micros(3_001_000_000));
    let offs = &src.offs;
    let n = offs.len() as f64;
    assert!(n > 9000.0, "{n} OFF periods");
    let len = |&(f, t): &(Instant, Instant)| t.as_micros() - f.as_micros();
    let above = |x: u64| offs.iter().filter(|o| len(o) > x).count() as f64 / n;
    assert!((above(105_827) - 0.5).abs() < 0.02, "{}", above(105_827));
    assert!((above(266_667) - 0.125).abs() < 0.02, "{}", above(266_667));
    // Burst k runs from the end of OFF k-1 (or the start) to OFF k.
    let mut from = Instant::from_micros(1_000_000);
    let mut long = 0;
    for &(on_end, off_end) in offs {
        let packets = (on_end.as_micros() - from.as_micros()) / 10_000;
        assert!(packets >= 1);
        long += usize::from(packets >= 7);
        from = off_end;
    }
    let long = long as f64 / n;
    assert!((long - 0.367).abs() < 0.02, "{long}");
}
