//! A small swarm (1 seeder + 5 leechers arriving 5 s apart) with exact
//! counters: every leecher gets every chunk once, completes in arrival
//! order, and the bytes add up.

use ppspp_lab::run::run;
use ppspp_lab::scenario::Role;

const SMALL: &str = include_str!("small_swarm.toml");
const SIZE: u64 = 200_000;

#[test]
fn exact_counters() {
    let o = run(SMALL, "small_swarm.toml", None, None, |_| {}).unwrap();
    let s = &o.summary;
    assert_eq!((s.peers, s.leechers, s.completed), (6, 5, 5));
    let leechers: Vec<_> = o.peers.iter().filter(|p| p.role == Role::Leecher).collect();
    // Every leecher verified exactly the content, nothing was rejected.
    for p in &leechers {
        assert_eq!(p.bytes_down, SIZE, "peer {}", p.id);
        assert_eq!(p.bytes_down_from_seeders + p.bytes_down_from_peers, SIZE);
        assert_eq!(p.chunks_rejected, 0);
    }
    // The first leecher had only the seeder to fetch from.
    assert_eq!(leechers[0].bytes_down_from_seeders, SIZE);
    // Each finished before the next arrived: completion order is arrival
    // order, 1 s, 6 s, ...
    let order: Vec<u32> = {
        let mut v: Vec<_> = leechers
            .iter()
            .map(|p| (p.complete_s.unwrap(), p.id))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v.into_iter().map(|x| x.1).collect()
    };
    assert_eq!(order, vec![1, 2, 3, 4, 5]);
    for (i, p) in leechers.iter().enumerate() {
        let join = p.join_s.unwrap();
        assert_eq!(join, 1.0 + 5.0 * i as f64);
        // 200 KB over an 8 Mbit/s downlink takes at least 0.2 s.
        let took = p.complete_s.unwrap() - join;
        assert!((0.2..5.0).contains(&took), "peer {} took {took} s", p.id);
    }
    // What was received was sent by someone: uploads cover downloads (a
    // chunk lost or sent twice is counted by its sender only).
    let up: u64 = o.peers.iter().map(|p| p.bytes_up).sum();
    assert!(up >= 5 * SIZE, "uploaded {up}");
    // One CSV row per peer.
    let peers_csv = &o.csv[0].1;
    assert_eq!(peers_csv.lines().count(), 7);
}
