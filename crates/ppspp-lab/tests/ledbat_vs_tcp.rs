//! The lab's LEDBAT fidelity scenario (`scenarios/ledbat-vs-tcp.toml`): a
//! PPSPP transfer alone on a 10 Mbit/s, 50 ms RTT bottleneck with a 1 s
//! buffer fills it and keeps the queue far below the buffer; a TCP NewReno
//! transfer that joins pushes it below 10 % of the capacity; it takes the
//! capacity back once TCP ends. Prints the yield and reclaim times.

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

#[test]
fn ledbat_fills_yields_and_reclaims() {
    let o = run(SCENARIO, "ledbat-vs-tcp.toml", None, None, |_| {}).unwrap();
    let csv = |name: &str| o.csv.iter().find(|c| c.0 == name).unwrap().1.clone();
    let r = rates(&csv("rates.csv"));
    let ledbat = &r["ppspp:seeder[0]"];
    let tcp = &r["flow0"];
    let mean = |v: &[(f64, f64)], a: f64, b: f64| {
        let x: Vec<f64> = v
            .iter()
            .filter(|p| p.0 > a && p.0 <= b)
            .map(|p| p.1)
            .collect();
        x.iter().sum::<f64>() / x.len() as f64
    };
    // Alone (wire bytes, headers included): the link is full.
    let alone = mean(ledbat, 5.0, 30.0);
    assert!(alone >= 0.95 * CAPACITY, "alone {alone}");
    // The queue stays far below the 1 s buffer.
    let samples: Vec<f64> = csv("links.csv")
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let t: f64 = f[1].parse().ok()?;
            (10.0..30.0)
                .contains(&t)
                .then(|| f[3].parse().ok())
                .flatten()
        })
        .collect();
    let queue_ms = samples.iter().sum::<f64>() / samples.len() as f64;
    assert!(
        (20.0..=110.0).contains(&queue_ms),
        "mean queue {queue_ms} ms"
    );
    // TCP starts at 30 s: LEDBAT yields below 10 % of the capacity.
    let yielded = ledbat
        .iter()
        .find(|p| p.0 > 30.0 && p.1 < 0.1 * CAPACITY)
        .map(|p| p.0 - 30.0)
        .expect("LEDBAT never yielded");
    assert!(yielded <= 5.0, "yield took {yielded} s");
    // TCP moves its 20 MB, then LEDBAT takes the capacity back.
    let tcp_end = tcp
        .iter()
        .filter(|p| p.1 > 0.0)
        .map(|p| p.0)
        .fold(0.0, f64::max);
    assert!(tcp_end > 40.0 && tcp_end < 75.0, "TCP ended at {tcp_end}");
    let reclaimed = ledbat
        .iter()
        .find(|p| p.0 > tcp_end && p.1 >= 0.5 * CAPACITY)
        .map(|p| p.0 - tcp_end)
        .expect("LEDBAT never reclaimed half the link");
    assert!(reclaimed <= 15.0, "reclaim to 50 % took {reclaimed} s");
    eprintln!(
        "alone {:.2} Mbit/s, mean queue {queue_ms:.1} ms; yield below 10 % in {yielded:.0} s; \
         TCP done at {tcp_end:.0} s; back to 50 % in {reclaimed:.0} s",
        alone / 1e6
    );
}
