//! Cross traffic in a scenario: plain hosts (no PPSPP peer) exchange a CBR
//! flow with exact counts, beside a swarm that still completes; flows that
//! name no host are refused with the line.

use ppspp_lab::run::run;
use ppspp_lab::scenario::{parse, Role};

const SMALL: &str = include_str!("small_swarm.toml");

fn with_hosts(flow: &str) -> String {
    format!(
        "{SMALL}
[[peers]]
name = \"video\"
count = 2
class = \"home\"
role = \"host\"

{flow}"
    )
    .replace("[record]\nqueues = [\"seeder.up\"]\n", "")
        + "\n[record]\nqueues = [\"seeder.up\"]\n"
}

#[test]
fn cbr_between_hosts_delivers_exactly() {
    // 800 kbit/s in 1000-byte packets from 2 s to 12 s: one packet every
    // 10 ms, 1000 packets, all delivered (1 Mbit/s uplink, no loss).
    let text = with_hosts(
        "[[flows]]
kind = \"cbr\"
from = \"video[0]\"
to = \"video[1]\"
rate = \"800kbit/s\"
packet_size = 1000
start = \"2s\"
stop = \"12s\"
",
    );
    let o = run(&text, "x", None, None, |_| {}).unwrap();
    let flows = &o.csv.iter().find(|c| c.0 == "flows.csv").unwrap().1;
    let row: Vec<&str> = flows.lines().nth(1).unwrap().split(',').collect();
    // flow,kind,src_host,dst_host,packets_sent,bytes_delivered,...
    assert_eq!(&row[..6], &["0", "Cbr", "6", "7", "1000", "1000000"]);
    // Hosts are not peers: the swarm's 5 leechers still all complete.
    assert_eq!(o.summary.completed, 5);
    let hosts: Vec<_> = o.peers.iter().filter(|p| p.role == Role::Host).collect();
    assert_eq!(hosts.len(), 2);
    assert!(hosts.iter().all(|h| h.bytes_down == 0 && h.bytes_up == 0));
}

#[test]
fn bad_flows_are_refused() {
    let e = parse(
        &with_hosts(
            "[[flows]]\nkind = \"cbr\"\nfrom = \"video[5]\"\nto = \"video[1]\"\nrate = 1000\n",
        ),
        "f.toml",
    )
    .unwrap_err();
    assert!(e.message.contains("'video[5]' names no host"), "{e}");
    assert!(e.line.is_some());
    let e = parse(
        &with_hosts("[[flows]]\nkind = \"cbr\"\nfrom = \"video[0]\"\nto = \"video[1]\"\n"),
        "f.toml",
    )
    .unwrap_err();
    assert!(e.message.contains("needs a rate"), "{e}");
    let e = parse(
        &with_hosts("[[flows]]\nkind = \"tcp\"\nfrom = \"video\"\nto = \"video[0]\"\n"),
        "f.toml",
    )
    .unwrap_err();
    assert!(e.message.contains("to itself"), "{e}");
}
