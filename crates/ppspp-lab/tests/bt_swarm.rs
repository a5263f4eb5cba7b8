//! BitTorrent swarms in the simulator: a flash crowd over TCP completes
//! with every byte accounted for, leechers trade among themselves, runs
//! repeat exactly, and a BitTorrent swarm and a ppspp swarm in one
//! scenario stay apart, as do two named swarms.

use ppspp_lab::run::run;
use ppspp_lab::scenario::Role;

const SIZE: u64 = 4_000_000;

fn scenario(disposition: u8, extra: &str) -> String {
    format!(
        r#"
name = "bt-small"
seed = 3
duration = "300s"
stop_when_done = true

[content]
size = "{SIZE}B"

[network]
groups = ["all"]
delay = [["10ms"]]

[classes.server]
up = "10Mbit/s"
down = "10Mbit/s"
queue = "100ms"

[classes.home]
up = "1Mbit/s"
down = "8Mbit/s"
queue = "1s"
delay = "5ms"

[[peers]]
name = "seed"
class = "server"
role = "seeder"
bittorrent = {{ disposition = {disposition} }}

[[peers]]
name = "leechers"
count = 8
class = "home"
role = "leecher"
bittorrent = {{ disposition = {disposition} }}
{extra}
"#
    )
}

#[test]
fn a_flash_crowd_over_tcp_completes_and_every_byte_is_accounted_for() {
    let text = scenario(5, "");
    let o = run(&text, "bt.toml", None, None, |_| {}).unwrap();
    let s = &o.summary;
    assert_eq!((s.peers, s.leechers, s.completed), (9, 8, 8));
    let leechers: Vec<_> = o.peers.iter().filter(|p| p.role == Role::Leecher).collect();
    let mut dup_blocks = 0;
    for p in &leechers {
        let bt = p.bittorrent.as_ref().expect("a BitTorrent peer");
        assert_eq!(p.bytes_down, SIZE, "peer {}", p.id);
        assert_eq!(p.bytes_down_from_seeders + p.bytes_down_from_peers, SIZE);
        assert_eq!(bt.bytes_down_tcp, SIZE, "disposition 5 is TCP only");
        // 4 MB over an 8 Mbit/s downlink takes at least 4 s.
        assert!(p.complete_s.unwrap() - p.join_s.unwrap() >= 4.0);
        dup_blocks += bt.duplicate_blocks;
    }
    // Leechers uploaded to each other: the seed (10 Mbit/s) did not do it
    // all.
    let from_peers: u64 = leechers.iter().map(|p| p.bytes_down_from_peers).sum();
    assert!(from_peers > SIZE, "leechers traded {from_peers} bytes");
    // What was uploaded is what was downloaded, plus end-game duplicates,
    // plus blocks still on their way when the run stopped at the last
    // completion (at most about a second of the uplinks: 5 %).
    let up: u64 = o.peers.iter().map(|p| p.bytes_up).sum();
    let accounted = 8 * SIZE + dup_blocks * 16_384;
    assert!(up >= 8 * SIZE);
    assert!(up <= accounted + accounted / 20, "{up} {dup_blocks}");
    // bittorrent.csv: one row per BitTorrent peer, bytes by transport.
    let (_, csv) = o.csv.iter().find(|(n, _)| *n == "bittorrent.csv").unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 9);
    let down_tcp: u64 = rows
        .iter()
        .map(|r| r.split(',').nth(2).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(down_tcp, 8 * SIZE);
}

#[test]
fn a_run_repeats_exactly() {
    let text = scenario(5, "");
    let a = run(&text, "bt.toml", None, None, |_| {}).unwrap();
    let b = run(&text, "bt.toml", None, None, |_| {}).unwrap();
    assert_eq!(a.summary.trace_hash, b.summary.trace_hash);
    let times = |o: &ppspp_lab::run::Outcome| -> Vec<Option<f64>> {
        o.peers.iter().map(|p| p.complete_s).collect()
    };
    assert_eq!(times(&a), times(&b));
    let c = run(&text, "bt.toml", Some(4), None, |_| {}).unwrap();
    assert_ne!(times(&a), times(&c), "another seed, another run");
}

#[test]
fn a_bittorrent_swarm_and_a_ppspp_swarm_stay_apart() {
    let ppspp = r#"
[[peers]]
name = "ppspp-seed"
class = "server"
role = "seeder"

[[peers]]
name = "ppspp-leechers"
count = 3
class = "home"
role = "leecher"
"#;
    let text = scenario(5, ppspp);
    let o = run(&text, "bt.toml", None, None, |_| {}).unwrap();
    assert_eq!(o.summary.completed, 11);
    let bt_hosts: Vec<u32> = o
        .peers
        .iter()
        .filter(|p| p.bittorrent.is_some())
        .map(|p| p.id)
        .collect();
    assert_eq!(bt_hosts, (0..9).collect::<Vec<_>>());
    for p in o.peers.iter().filter(|p| p.bittorrent.is_some()) {
        let from = &p.bittorrent.as_ref().unwrap().down_from;
        assert!(from.keys().all(|h| bt_hosts.contains(h)), "{from:?}");
    }
    // The ppspp leechers got the content from the ppspp seeder and each
    // other.
    for p in o
        .peers
        .iter()
        .filter(|p| p.bittorrent.is_none() && p.role == Role::Leecher)
    {
        assert_eq!(p.bytes_down, SIZE, "peer {}", p.id);
    }
}

#[test]
fn named_swarms_of_the_same_content_stay_apart() {
    // Seed paper 003's setting: several BitTorrent swarms side by side.
    let other = r#"
[[peers]]
name = "seed-b"
class = "server"
role = "seeder"
swarm = "b"
bittorrent = { disposition = 5 }

[[peers]]
name = "leechers-b"
count = 3
class = "home"
role = "leecher"
swarm = "b"
bittorrent = { disposition = 5 }
"#;
    let text = scenario(5, other);
    let o = run(&text, "bt.toml", None, None, |_| {}).unwrap();
    assert_eq!(o.summary.completed, 11);
    let in_b = |id: u32| id >= 9;
    for p in &o.peers {
        let bt = p.bittorrent.as_ref().expect("all BitTorrent");
        if p.role == Role::Leecher {
            assert_eq!(p.bytes_down, SIZE, "peer {}", p.id);
        }
        assert!(
            bt.down_from.keys().all(|&h| in_b(h) == in_b(p.id)),
            "peer {} got bytes from another swarm: {:?}",
            p.id,
            bt.down_from
        );
    }
}

#[test]
fn a_tcp_window_caps_what_each_connection_carries() {
    // 2 segments per round trip of about 40 ms (5 + 10 + 5 ms each way
    // between two homes) is 0.6 Mbit/s a connection, below the 1 Mbit/s
    // uplinks: the swarm takes about twice as long (seed 3: 46 s against
    // 23 s on average).
    let mean_download = |text: &str| -> f64 {
        let o = run(text, "bt.toml", None, None, |_| {}).unwrap();
        assert_eq!(o.summary.completed, 8);
        let t: Vec<f64> = o
            .peers
            .iter()
            .filter(|p| p.role == Role::Leecher)
            .map(|p| p.complete_s.unwrap() - p.join_s.unwrap())
            .collect();
        t.iter().sum::<f64>() / t.len() as f64
    };
    let free = mean_download(&scenario(5, ""));
    let windowed = scenario(5, "").replace(
        "disposition = 5 }",
        "disposition = 5, tcp_window = \"2920B\" }",
    );
    let capped = mean_download(&windowed);
    assert!(capped > 1.5 * free, "{capped} s against {free} s");
    let tiny = scenario(5, "").replace(
        "disposition = 5 }",
        "disposition = 5, tcp_window = \"1KB\" }",
    );
    let e = run(&tiny, "bt.toml", None, None, |_| {}).err().unwrap();
    assert!(e.to_string().contains("smaller than one segment"), "{e}");
}

#[test]
fn bittorrent_groups_refuse_ppspp_settings() {
    let text = scenario(5, "").replace(
        "role = \"leecher\"\n",
        "role = \"leecher\"\nplayer = { bitrate = \"1Mbit/s\" }\n",
    );
    let e = run(&text, "bt.toml", None, None, |_| {}).err().unwrap();
    assert!(e.to_string().contains("ppspp settings"), "{e}");
    let text = scenario(40, "");
    let e = run(&text, "bt.toml", None, None, |_| {}).err().unwrap();
    assert!(e.to_string().contains("disposition above 31"), "{e}");
}
