//! `stalls.csv`: every viewer's stalls one by one, which add up to the
//! totals `peers.csv` gives (`stalls`, `stall_s`).

use std::collections::HashMap;

use ppspp_lab::run::run;
use ppspp_lab::sweep::apply;

const SCENARIO: &str = include_str!("../../../scenarios/vod-small.toml");

#[test]
fn the_stall_log_adds_up_to_the_viewers_totals() {
    // A seeder too slow for the flash crowd: viewers stall.
    let mut text = apply(SCENARIO, "peers.viewers.count", "12").unwrap();
    text = apply(&text, "content.size", "2500000B").unwrap();
    text = apply(&text, "classes.server.up", "4Mbit/s").unwrap();
    let o = run(&text, "vod-small.toml", Some(1), None, |_| {}).unwrap();
    let csv = &o
        .csv
        .iter()
        .find(|(name, _)| *name == "stalls.csv")
        .expect("stalls.csv")
        .1;
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("id,group,stall,chunk,start_s,end_s,duration_s")
    );
    // Per viewer: stalls logged, their total duration, the last index.
    let mut logged: HashMap<u32, (u32, f64)> = HashMap::new();
    let chunks = 2_500_000u64.div_ceil(1024);
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 7, "{line}");
        let id: u32 = f[0].parse().unwrap();
        let index: u32 = f[2].parse().unwrap();
        let chunk: u64 = f[3].parse().unwrap();
        let start: f64 = f[4].parse().unwrap();
        let duration: f64 = f[6].parse().unwrap();
        let entry = logged.entry(id).or_default();
        entry.0 += 1;
        assert_eq!(index, entry.0, "stalls numbered in order: {line}");
        entry.1 += duration;
        assert!(chunk < chunks, "{line}");
        let peer = &o.peers[id as usize];
        assert!(start >= peer.join_s.unwrap(), "{line}");
        if let Ok(end) = f[5].parse::<f64>() {
            assert!((end - start - duration).abs() < 1e-5, "{line}");
        }
    }
    let mut stalled = 0;
    for p in o.peers.iter().filter(|p| p.playback.is_some()) {
        let totals = p.playback.unwrap();
        let (n, time) = logged.get(&p.id).copied().unwrap_or_default();
        assert_eq!(n, totals.stalls, "peer {}", p.id);
        assert!(
            (time - totals.stall_time.as_secs_f64()).abs() < 1e-4 * (n + 1) as f64,
            "peer {}: logged {time} s, total {:?}",
            p.id,
            totals.stall_time
        );
        stalled += usize::from(n > 0);
    }
    assert!(stalled > 0, "no viewer stalled: the test shows nothing");
}
