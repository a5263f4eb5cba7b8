//! TCP flows in a scenario share a bottleneck as TCP does (issue 25's
//! fidelity checks): two flows of the same congestion control (NewReno or
//! CUBIC, with or without SACK) from one 10 Mbit/s uplink each get their
//! half within 10 %, and together (or a CUBIC flow alone) they fill it
//! (≥ 95 %). A flow with the handshake delivers less by about its round
//! trip. A `cc`, `sack` or `handshake` on a UDP flow is refused.

#[path = "common/dumbbell.rs"]
mod dumbbell;
use dumbbell::dumbbell;
use ppspp_lab::run::run;
use ppspp_lab::scenario::parse;

/// A seeder nobody downloads from (a scenario needs one), a sending host
/// with a 10 Mbit/s uplink and a 62.5 KB (50 ms) queue, two receivers
/// behind 100 Mbit/s links; 40 ms base RTT; 60 s. `flows` are appended.
fn scenario(flows: &str) -> String {
    dumbbell("tcp-sharing", "60s", "50ms", flows)
}

fn flow(to: usize, cc: &str) -> String {
    format!("[[flows]]\nkind = \"tcp\"\nfrom = \"src\"\nto = \"dst[{to}]\"\nstart = \"1s\"\ncc = \"{cc}\"\n\n")
}

fn sack_flow(to: usize, cc: &str) -> String {
    flow(to, cc).replace("\n\n", "\nsack = true\n\n")
}

/// Payload bytes each flow delivered (`flows.csv`).
fn delivered(text: &str) -> Vec<f64> {
    let o = run(text, "x", None, None, |_| {}).unwrap();
    let csv = &o.csv.iter().find(|c| c.0 == "flows.csv").unwrap().1;
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').nth(5).unwrap().parse().unwrap())
        .collect()
}

/// Payload the uplink carries in the 59 s the flows run: 1460 of every
/// 1500 bytes on the wire.
const CAPACITY: f64 = 10e6 / 8.0 * 59.0 * 1460.0 / 1500.0;

#[test]
fn two_flows_of_one_kind_share_the_link_evenly_and_fill_it() {
    for (cc, sack) in [
        ("newreno", false),
        ("cubic", false),
        ("newreno", true),
        ("cubic", true),
    ] {
        let make = if sack { sack_flow } else { flow };
        let d = delivered(&scenario(&(make(0, cc) + &make(1, cc))));
        let cc = format!("{cc}{}", if sack { " + SACK" } else { "" });
        let total: f64 = d.iter().sum();
        assert!(
            total >= 0.95 * CAPACITY,
            "{cc}: {:.3} of capacity",
            total / CAPACITY
        );
        for (i, x) in d.iter().enumerate() {
            let share = x / (total / 2.0);
            assert!(
                (0.9..=1.1).contains(&share),
                "{cc}: flow {i} got {share:.3} of its half"
            );
        }
    }
}

#[test]
fn a_cubic_flow_alone_fills_the_link() {
    let d = delivered(&scenario(&flow(0, "cubic")));
    assert!(
        d[0] >= 0.95 * CAPACITY,
        "{:.3} of capacity",
        d[0] / CAPACITY
    );
}

#[test]
fn a_congestion_control_on_a_udp_flow_is_refused() {
    let text = scenario(
        "[[flows]]\nkind = \"cbr\"\nfrom = \"src\"\nto = \"dst[0]\"\nrate = \"1Mbit/s\"\ncc = \"cubic\"\n",
    );
    let e = parse(&text, "f.toml").unwrap_err();
    assert!(e.message.contains("only a TCP flow"), "{e}");
    for key in ["sack = true", "handshake = true"] {
        let e = parse(&text.replace("cc = \"cubic\"", key), "f.toml").unwrap_err();
        assert!(e.message.contains("only a TCP flow"), "{key}: {e}");
    }
    let e = parse(
        &text.replace("cubic", "vegas").replace("cbr", "tcp"),
        "f.toml",
    )
    .unwrap_err();
    assert!(e.message.contains("vegas"), "{e}");
}

/// The handshake in a scenario: the SYN and SYN-ACK take a round trip
/// (about 41 ms here) before data, so a flow delivers less than without
/// by about what the link carries in that time, never more.
#[test]
fn a_handshake_costs_a_round_trip_of_the_link() {
    let plain = delivered(&scenario(&flow(0, "cubic")))[0];
    let opened = delivered(&scenario(
        &flow(0, "cubic").replace("\n\n", "\nhandshake = true\n\n"),
    ))[0];
    let lost = plain - opened;
    // 41 ms of 10 Mbit/s payload is about 50 KB; slow start from 40 ms
    // later ends its climb later too, so allow up to four times that.
    assert!(lost > 0.0 && lost < 200_000.0, "{plain} against {opened}");
}
