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
packet_size = \"1000B\"
start = \"2s\"
stop = \"12s\"
",
    );
    let o = run(&text, "x", None, None, |_| {}).unwrap();
    let flows = &o.csv.iter().find(|c| c.0 == "flows.csv").unwrap().1;
    let row: Vec<&str> = flows.lines().nth(1).unwrap().split(',').collect();
    // flow,kind,src_host,dst_host,packets_sent,bytes_delivered,...
    assert_eq!(&row[..6], &["0", "Cbr", "6", "7", "1000", "1000000"]);
    // What the receiver saw: all 1000, none lost, one every 10 ms exactly
    // (nothing else queues on either access link), so no jitter and every
    // packet as late as the first.
    // packets_received,lost,delay_mean_ms,delay_p95_ms,inter_arrival_mean_ms,
    // inter_arrival_p95_ms,inter_arrival_max_ms,jitter_ms,jitter_mean_ms
    assert_eq!(&row[8..10], &["1000", "0"]);
    assert_eq!(row[10], row[11], "constant delay");
    assert_eq!(
        &row[12..],
        &["10.000", "10.000", "10.000", "0.000", "0.000"]
    );
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
            "[[flows]]\nkind = \"cbr\"\nfrom = \"video[5]\"\nto = \"video[1]\"\nrate = \"8kbit/s\"\n",
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

#[test]
fn traced_flow_waits_match_the_queue() {
    // Two 800 kbit/s flows share video[0]'s 1 Mbit/s uplink (200 ms queue):
    // the queue fills, so flow0's packets wait from 0 up to the limit.
    // Alone, flow0 never waits.
    let cbr = |start: &str| {
        format!(
            "[[flows]]\nkind = \"cbr\"\nfrom = \"video[0]\"\nto = \"video[1]\"\n\
             rate = \"800kbit/s\"\npacket_size = \"1000B\"\nstart = \"{start}\"\nstop = \"12s\"\n"
        )
    };
    let trace = "\n[[record.waits]]\nlink = \"video[0].up\"\nflow = \"flow0\"\n";
    let waits = |text: &str| -> (Vec<f64>, Vec<String>) {
        let o = run(text, "x", None, None, |_| {}).unwrap();
        let flows = &o.csv.iter().find(|c| c.0 == "flows.csv").unwrap().1;
        let flow0 = flows.lines().nth(1).unwrap().split(',').map(String::from);
        let csv = &o.csv.iter().find(|c| c.0 == "waits.csv").unwrap().1;
        let waits = csv
            .lines()
            .skip(1)
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                assert_eq!(&f[1..3], &["video[0].up", "flow0"]);
                f[4].parse().unwrap()
            })
            .collect();
        (waits, flow0.collect())
    };
    let (alone, _) = waits(&(with_hosts(&cbr("2s")) + trace));
    assert_eq!(alone.len(), 1000);
    assert!(alone.iter().all(|&w| w == 0.0), "{alone:?}");
    let (shared, flow0) = waits(&(with_hosts(&(cbr("2s") + &cbr("2.005s"))) + trace));
    // The receiver sees the queue: losses, gaps longer than the 10 ms
    // sending interval, and jitter.
    let num = |k: usize| -> f64 { flow0[k].parse().unwrap() };
    // A receiver counts a loss by the gap below a later arrival, so drops
    // after the last arrival go unseen.
    let seen = num(8) + num(9);
    assert!(
        num(9) > 0.0 && (990.0..=1000.0).contains(&seen),
        "{flow0:?}"
    );
    assert_eq!(
        num(8) as usize,
        shared.len(),
        "every packet that waited arrived"
    );
    assert!(num(14) > 10.0 && num(15) > 0.0, "{flow0:?}");
    // The jitter's mean over the flow is positive too.
    assert!(num(16) > 0.0, "{flow0:?}");
    // Packets dropped at the full queue never wait: fewer than 1000 rows.
    assert!((500..1000).contains(&shared.len()), "{}", shared.len());
    assert_eq!(shared[0], 0.0);
    let max = shared.iter().cloned().fold(0.0, f64::max);
    // A packet waits at most a full queue: 200 ms at 1 Mbit/s.
    assert!((180.0..=200.0).contains(&max), "max wait {max} ms");
}

#[test]
fn bad_traces_are_refused() {
    let base = with_hosts(
        "[[flows]]\nkind = \"cbr\"\nfrom = \"video[0]\"\nto = \"video[1]\"\nrate = \"8kbit/s\"\n",
    );
    for (trace, says) in [
        ("link = \"video[3].up\"\nflow = \"flow0\"", "names no link"),
        (
            "link = \"video[0].sideways\"\nflow = \"flow0\"",
            "names no link",
        ),
        ("link = \"video[0].up\"\nflow = \"flow1\"", "names no flow"),
        (
            "link = \"video[0].up\"\nflow = \"ppspp:nobody\"",
            "names no flow",
        ),
    ] {
        let text = format!("{base}\n[[record.waits]]\n{trace}\n");
        let e = parse(&text, "f.toml").unwrap_err();
        assert!(e.message.contains(says), "{trace}: {e}");
        assert!(e.line.is_some(), "{trace}: no line");
    }
    let twice = format!(
        "{base}\n[[record.waits]]\nlink = \"video[0].up\"\nflow = \"flow0\"\n\
         [[record.waits]]\nlink = \"video[0].up\"\nflow = \"flow0\"\n"
    );
    let e = parse(&twice, "f.toml").unwrap_err();
    assert!(e.message.contains("already traces 'flow0'"), "{e}");
}

#[test]
fn one_link_traces_several_flows() {
    // Seed paper 003 compares a video call's waits with BitTorrent's at
    // one router queue: two CBR flows share video[0]'s uplink, and the
    // seeder's own uplink carries its peer packets ("peer:GROUP[i]").
    let cbr = |start: &str| {
        format!(
            "[[flows]]\nkind = \"cbr\"\nfrom = \"video[0]\"\nto = \"video[1]\"\n\
             rate = \"800kbit/s\"\npacket_size = \"1000B\"\nstart = \"{start}\"\nstop = \"12s\"\n"
        )
    };
    let traces = "\n[[record.waits]]\nlink = \"video[0].up\"\nflow = \"flow0\"\n\
                  [[record.waits]]\nlink = \"video[0].up\"\nflow = \"flow1\"\n\
                  [[record.waits]]\nlink = \"seeder.up\"\nflow = \"peer:seeder\"\n";
    let text = with_hosts(&(cbr("2s") + &cbr("2.005s"))) + traces;
    let o = run(&text, "x", None, None, |_| {}).unwrap();
    let csv = &o.csv.iter().find(|c| c.0 == "waits.csv").unwrap().1;
    let rows = |link: &str, flow: &str| -> Vec<f64> {
        csv.lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .filter(|f| f[1] == link && f[2] == flow)
            .map(|f| f[4].parse().unwrap())
            .collect()
    };
    let (f0, f1) = (rows("video[0].up", "flow0"), rows("video[0].up", "flow1"));
    // Every packet offered to the full queue either waited or was dropped;
    // the two flows' waits together are what the link saw of them.
    let flows = &o.csv.iter().find(|c| c.0 == "flows.csv").unwrap().1;
    let received: Vec<usize> = flows
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(8).unwrap().parse().unwrap())
        .collect();
    assert_eq!((f0.len(), f1.len()), (received[0], received[1]));
    assert!(
        f1.iter().cloned().fold(0.0, f64::max) > 150.0,
        "flow1 waits behind flow0"
    );
    assert!(!rows("seeder.up", "peer:seeder").is_empty());
    // traced_flows.csv splits the shared link's drops by flow: each flow
    // offered 1000 packets, waited as often as it was forwarded, and the
    // two flows' drops add up to the link's (nothing else crosses it).
    let counts = &o.csv.iter().find(|c| c.0 == "traced_flows.csv").unwrap().1;
    let count = |link: &str, flow: &str| -> Vec<f64> {
        let row = counts
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect::<Vec<_>>())
            .find(|f| f[1] == link && f[2] == flow)
            .unwrap();
        row[3..].iter().map(|x| x.parse().unwrap()).collect()
    };
    let (c0, c1) = (count("video[0].up", "flow0"), count("video[0].up", "flow1"));
    assert_eq!((c0[0], c1[0]), (1000.0, 1000.0));
    assert_eq!(c0[0] - c0[1], f0.len() as f64);
    assert_eq!(c1[0] - c1[1], f1.len() as f64);
    let stats = &o.csv.iter().find(|c| c.0 == "link_stats.csv").unwrap().1;
    let link_drops: f64 = stats
        .lines()
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f[1] == "video[0].up")
        .unwrap()[5]
        .parse()
        .unwrap();
    assert!(c1[1] > 0.0, "the later flow loses packets: {counts}");
    assert_eq!(c0[1] + c1[1], link_drops);
    // The mean wait agrees with the per-packet waits.
    let mean1 = f1.iter().sum::<f64>() / f1.len() as f64;
    assert!((c1[4] - mean1).abs() < 0.01, "{} against {mean1}", c1[4]);
    assert_eq!(count("seeder.up", "peer:seeder")[1], 0.0);
}

#[test]
fn a_scenario_of_hosts_alone_runs_its_flows() {
    // Seed paper 003's baseline: the video with no P2P client at all. No
    // seeder, no leecher; the run lasts its duration and the flow arrives
    // whole (400 packets of 1000 B at 800 kbit/s over 4 s).
    let text = "name = \"video-alone\"\nduration = \"6s\"\nstop_when_done = false\n\
                [content]\nsize = \"1MB\"\n\
                [network]\ngroups = [\"all\"]\ndelay = [[\"5ms\"]]\n\
                [classes.home]\nup = \"1Mbit/s\"\ndown = \"8Mbit/s\"\nqueue = \"200ms\"\n\
                [[peers]]\nname = \"h\"\ncount = 2\nclass = \"home\"\nrole = \"host\"\n\
                [[flows]]\nkind = \"cbr\"\nfrom = \"h[0]\"\nto = \"h[1]\"\nrate = \"800kbit/s\"\n\
                packet_size = \"1000B\"\nstart = \"1s\"\nstop = \"5s\"\n";
    let o = run(text, "x", None, None, |_| {}).unwrap();
    assert!(
        (o.summary.virtual_s - 6.0).abs() < 1e-9,
        "{}",
        o.summary.virtual_s
    );
    let flows = &o.csv.iter().find(|c| c.0 == "flows.csv").unwrap().1;
    let f: Vec<&str> = flows.lines().nth(1).unwrap().split(',').collect();
    assert_eq!((f[8], f[9]), ("400", "0"), "{flows}");
}
