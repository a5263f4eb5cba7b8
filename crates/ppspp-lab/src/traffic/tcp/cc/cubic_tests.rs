//! CUBIC's window against RFC 9438's equations, driven by a synthetic ACK
//! clock: every round trip the whole window is acknowledged one segment at
//! a time, evenly spread over the RTT.

use super::*;

const MSS: u64 = 1460;

fn at(s: f64) -> Instant {
    Instant::from_micros((s * 1e6).round() as u64)
}

/// Runs `rounds` round trips of `rtt` seconds from `start` (s) at `cwnd`
/// bytes; returns (time since `start`, cwnd in segments) after each.
fn ack_clock(c: &mut Cubic, start: f64, cwnd: u64, rtt: f64, rounds: u32) -> Vec<(f64, f64)> {
    let mut cwnd = cwnd;
    let mut now = start;
    let mut out = Vec::new();
    let srtt = Some(Duration::from_secs_f64(rtt));
    for _ in 0..rounds {
        let n = (cwnd / MSS).max(1);
        for i in 0..n {
            let t = now + rtt * i as f64 / n as f64;
            cwnd = c.avoidance(at(t), cwnd, MSS, MSS, srtt);
        }
        now += rtt;
        out.push((now - start, cwnd as f64 / MSS as f64));
    }
    out
}

/// Where Reno would be `r` round trips into a stage that began at 70
/// segments after a loss at 100 (§4.3): α_cubic per round trip up to
/// cwnd_prior (100), one segment per round trip after that.
fn reno_from_70(r: f64) -> f64 {
    let to_prior = 30.0 / ALPHA;
    if r <= to_prior {
        70.0 + ALPHA * r
    } else {
        100.0 + (r - to_prior)
    }
}

/// The fidelity check of issue 25: after a loss at W_max = 100 segments,
/// on a 100 ms path, the window follows W_cubic(t) = C(t − K)³ + W_max
/// within 5 % over two K (concave up to the old plateau, convex beyond),
/// except where Reno's estimate is higher (§4.3: then it is W_est, from
/// t ≈ 6.1 s to 8.4 s here).
#[test]
fn after_a_loss_the_window_follows_the_cubic_function() {
    let mut c = Cubic::new();
    let w_max = 100.0;
    let ssthresh = c.congestion(at(0.0), 100 * MSS, 100 * MSS, MSS);
    assert_eq!(ssthresh, 102_200, "β_cubic = 0.7 of FlightSize");
    assert_eq!(c.w_max(), Some(w_max));
    let k = (w_max * (1.0 - BETA) / C).cbrt();
    // Recovery takes a round trip; congestion avoidance begins after it.
    let samples = ack_clock(&mut c, 0.1, ssthresh, 0.1, 85);
    assert!((c.k().unwrap() - k).abs() < 1e-9, "K = ∛(W_max(1−β)/C)");
    let mut cubic_rounds = 0;
    for (r, (t, w)) in samples.into_iter().enumerate() {
        let cubic = C * (t - k).powi(3) + w_max;
        let reno = reno_from_70(r as f64 + 1.0);
        cubic_rounds += usize::from(cubic >= reno);
        let expect = cubic.max(reno);
        assert!(
            (w - expect).abs() <= 0.05 * expect,
            "t {t:.1} s: cwnd {w:.2} against W_cubic {cubic:.2}, W_est {reno:.2}"
        );
    }
    assert!(cubic_rounds >= 60, "mostly the cubic: {cubic_rounds} of 85");
}

/// One ACK in the cubic region adds exactly (target − cwnd)/cwnd segments
/// (§4.2), target = W_cubic(t + RTT).
#[test]
fn an_ack_closes_a_cwnd_th_of_the_gap_to_the_target() {
    let mut c = Cubic::new();
    let ssthresh = c.congestion(at(0.0), 100 * MSS, 100 * MSS, MSS);
    let rtt = Some(Duration::from_millis(100));
    // The first ACK begins the stage at 1 s (t = 0, where W_cubic equals
    // cwnd_epoch and Reno's estimate is a hair above it).
    let cwnd = c.avoidance(at(1.0), ssthresh, MSS, MSS, rtt);
    let k = (30.0f64 / C).cbrt();
    let w = cwnd as f64 / MSS as f64;
    let target = C * (0.05 + 0.1 - k).powi(3) + 100.0;
    let next = c.avoidance(at(1.05), cwnd, MSS, MSS, rtt);
    let expect = (target - w) / w * MSS as f64;
    let got = (next - cwnd) as f64;
    assert!(
        (got - expect).abs() <= 1.0,
        "grew {got} bytes, RFC 9438: {expect:.2}"
    );
}

/// On a short path Reno would grow faster than the cubic right after the
/// loss: the window follows Reno's estimate (§4.3), α_cubic per RTT until
/// it passes cwnd_prior and one segment per RTT after that.
#[test]
fn on_a_short_path_the_window_is_renos() {
    let mut c = Cubic::new();
    let ssthresh = c.congestion(at(0.0), 100 * MSS, 100 * MSS, MSS);
    let rtt = 0.01;
    let samples = ack_clock(&mut c, rtt, ssthresh, rtt, 100);
    let k = (100.0 * (1.0 - BETA) / C).cbrt();
    // W_est climbs from 70 at α_cubic per round trip: 30 / α ≈ 56.7 rounds
    // to 100, then 1 per round.
    let reno = reno_from_70;
    for (i, (t, w)) in samples.into_iter().enumerate() {
        let expect = reno(i as f64 + 1.0);
        let cubic = C * (t - k).powi(3) + 100.0;
        assert!(cubic < expect, "round {i}: Reno-friendly region");
        assert!(
            (w - expect).abs() <= 0.02 * expect,
            "round {i}: cwnd {w:.2} against W_est {expect:.2}"
        );
    }
}

/// §4.7: a loss before the window regained the last plateau lowers the
/// next plateau to W·(1 + β)/2; without fast convergence it stays W.
#[test]
fn fast_convergence_lowers_the_plateau_of_a_second_loss() {
    for (mut c, expect) in [
        (Cubic::new(), 80.0 * (1.0 + BETA) / 2.0),
        (Cubic::without_fast_convergence(), 80.0),
    ] {
        c.congestion(at(0.0), 100 * MSS, 100 * MSS, MSS);
        c.congestion(at(1.0), 80 * MSS, 80 * MSS, MSS);
        assert!((c.w_max().unwrap() - expect).abs() < 1e-9);
    }
}

/// §4.8: the first stage after a timeout starts convex from where it
/// begins (K = 0, W_max = cwnd_epoch): slow at first, never below it.
#[test]
fn after_a_timeout_growth_is_convex_from_cwnd_epoch() {
    let mut c = Cubic::new();
    let ssthresh = c.congestion(at(0.0), 100 * MSS, 100 * MSS, MSS);
    c.timeout();
    let samples = ack_clock(&mut c, 2.0, ssthresh, 0.1, 30);
    assert_eq!(c.k(), Some(0.0));
    assert_eq!(c.w_max(), Some(70.0));
    for (t, w) in samples {
        // Reno's estimate from 70 at α_cubic (< cwnd_prior 100) bounds it
        // below; the cubic from a plateau at 70 with K = 0 above 1 s.
        let cubic = C * t.powi(3) + 70.0;
        let reno = 70.0 + ALPHA * t / 0.1;
        let expect = cubic.max(reno);
        assert!(
            (w - expect).abs() <= 0.05 * expect,
            "t {t:.1}: cwnd {w:.2} against {expect:.2}"
        );
    }
}

#[test]
fn the_window_never_shrinks_in_congestion_avoidance_and_ssthresh_has_a_floor() {
    let mut c = Cubic::new();
    assert_eq!(c.congestion(at(0.0), 2 * MSS, MSS, MSS), 2 * MSS);
    let mut cwnd = 2 * MSS;
    for i in 0..1000 {
        let next = c.avoidance(at(0.001 * i as f64), cwnd, 100, MSS, None);
        assert!(next >= cwnd);
        cwnd = next;
    }
}
