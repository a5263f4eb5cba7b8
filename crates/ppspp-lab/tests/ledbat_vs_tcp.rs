//! The lab's LEDBAT fidelity scenario (`scenarios/ledbat-vs-tcp.toml`): a
//! PPSPP transfer alone on a 10 Mbit/s, 50 ms RTT bottleneck with a 1 s
//! buffer fills it (≥ 95 %) and holds the queue at LEDBAT's 100 ms target
//! (mean within ±10 %, RFC 6817 §2.5); a TCP NewReno transfer that joins at
//! 60 s pushes it below 10 % of the capacity; it takes the capacity back
//! (≥ 90 %) once TCP ends. Prints the yield and reclaim times.

use std::collections::BTreeMap;

use ppspp_lab::run::run;

const SCENARIO: &str = include_str!("../../../scenarios/ledbat-vs-tcp.toml");
const CAPACITY: f64 = 10e6;

/// Per-second rates (bit/s) of each flow from `rates.csv`.
fn rates(csv: &str) -> BTreeMap<String, Vec<(f64, f64)>> {
    let mut last: BTreeMap<String, (f64, u64)> = BTreeMap::new();
    let mut out: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (t, flow, bytes): (f64, String, u64) = (
            f[0].parse().unwrap(),
            f[1].to_string(),
            f[2].parse().unwrap(),
        );
        if let Some((t0, b0)) = last.get(&flow) {
            let r = (bytes - b0) as f64 * 8.0 / (t - t0);
            out.entry(flow.clone()).or_default().push((t, r));
        }
        last.insert(flow, (t, bytes));
    }
    out
}

/// Mean of the per-second rates `v` with `a < t ≤ b`.
fn mean(v: &[(f64, f64)], a: f64, b: f64) -> f64 {
    let x: Vec<f64> = v
        .iter()
        .filter(|p| p.0 > a && p.0 <= b)
        .map(|p| p.1)
        .collect();
    x.iter().sum::<f64>() / x.len() as f64
}

/// Mean `backlog_ms` of the `links.csv` samples with `a ≤ t < b` (the
/// scenario records one queue, the seeder's uplink: the bottleneck).
fn mean_queue_ms(csv: &str, a: f64, b: f64) -> f64 {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (t_col, ms_col) = (col("t_s"), col("backlog_ms"));
    let samples: Vec<f64> = lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let t: f64 = f[t_col].parse().ok()?;
            (a..b)
                .contains(&t)
                .then(|| f[ms_col].parse().ok())
                .flatten()
        })
        .collect();
    assert!(samples.len() > 1000, "{} queue samples", samples.len());
    samples.iter().sum::<f64>() / samples.len() as f64
}

/// When TCP joins (scenario: `start = "60s"`).
const TCP_START: f64 = 60.0;

#[test]
fn ledbat_fills_yields_and_reclaims() {
    let o = run(SCENARIO, "ledbat-vs-tcp.toml", None, None, |_| {}).unwrap();
    let csv = |name: &str| o.csv.iter().find(|c| c.0 == name).unwrap().1.clone();
    let r = rates(&csv("rates.csv"));
    let ledbat = &r["ppspp:seeder[0]"];
    let tcp = &r["flow0"];
    // Alone (wire bytes, headers included): the link is full…
    let alone = mean(ledbat, 5.0, TCP_START);
    assert!(alone >= 0.95 * CAPACITY, "alone {alone}");
    // …and the queue sits at the 100 ms target, ±10 %, once LEDBAT's linear
    // controller has closed the gap slow start left (time constant ≈ 17 s
    // here; see the scenario file).
    let queue_ms = mean_queue_ms(&csv("links.csv"), 30.0, TCP_START);
    assert!(
        (90.0..=110.0).contains(&queue_ms),
        "mean queue {queue_ms} ms"
    );
    // TCP joins: LEDBAT yields below 10 % of the capacity (the yield time is
    // from TCP's start to the first second below that)…
    let yielded = ledbat
        .iter()
        .find(|p| p.0 > TCP_START && p.1 < 0.1 * CAPACITY)
        .map(|p| p.0 - TCP_START)
        .expect("LEDBAT never yielded");
    assert!(yielded <= 5.0, "yield took {yielded} s");
    // TCP moves its 20 MB (≈ 17 s at the full rate)…
    let tcp_end = tcp
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|p| p.0)
        .fold(0.0, f64::max);
    assert!(
        tcp_end > TCP_START + 16.0 && tcp_end < TCP_START + 35.0,
        "TCP ended at {tcp_end}"
    );
    // …while LEDBAT stays below 10 % of the capacity.
    let during = mean(ledbat, TCP_START + yielded, tcp_end);
    assert!(
        during < 0.1 * CAPACITY,
        "LEDBAT at {during} bit/s beside TCP"
    );
    // Then LEDBAT takes the capacity back: the reclaim time is from TCP's
    // last second to LEDBAT's first second at ≥ 90 % of the capacity.
    let reclaimed = ledbat
        .iter()
        .find(|p| p.0 > tcp_end && p.1 >= 0.9 * CAPACITY)
        .map(|p| p.0 - tcp_end)
        .expect("LEDBAT never took 90 % of the link back");
    assert!(reclaimed <= 10.0, "reclaim to 90 % took {reclaimed} s");
    let after = mean(ledbat, tcp_end + reclaimed, f64::INFINITY);
    assert!(after >= 0.95 * CAPACITY, "after reclaim {after}");
    eprintln!(
        "alone {:.2} Mbit/s, mean queue {queue_ms:.1} ms (30–60 s); beside TCP {:.2} Mbit/s; \
         yield below 10 % in {yielded:.0} s; TCP done at {tcp_end:.0} s; \
         back to 90 % in {reclaimed:.0} s, then {:.2} Mbit/s",
        alone / 1e6,
        during / 1e6,
        after / 1e6
    );
}
