//! A seeder that leaves at a fixed time (`departure = { kind = "at", … }`)
//! leaves then, and the viewers that stay go on among themselves.

use ppspp_lab::run::run;
use ppspp_lab::scenario::Role;
use ppspp_lab::sweep::apply;

const SCENARIO: &str = include_str!("../../../scenarios/vod-small.toml");

#[test]
fn the_seeder_leaves_at_its_time_and_the_viewers_stay() {
    let mut text = apply(SCENARIO, "peers.viewers.count", "6").unwrap();
    text = apply(&text, "content.size", "2500000B").unwrap();
    text = apply(&text, "peers.seeder.departure.kind", "at").unwrap();
    text = apply(&text, "peers.seeder.departure.time", "8s").unwrap();
    let o = run(&text, "vod-small.toml", Some(1), None, |_| {}).unwrap();
    let seeder = o.peers.iter().find(|p| p.role == Role::Seeder).unwrap();
    assert_eq!(seeder.leave_s, Some(8.0));
    let viewers: Vec<_> = o.peers.iter().filter(|p| p.role == Role::Leecher).collect();
    assert!(viewers.iter().all(|p| p.leave_s.is_none()));
    // The viewers arrive within 1 to 11 s: some after the seeder left.
    // Whoever completed got some of the content from other viewers.
    let late = viewers.iter().filter(|p| p.join_s > Some(8.0)).count();
    assert!(late > 0, "no viewer came after the seeder left");
    for p in viewers.iter().filter(|p| p.join_s > Some(8.0)) {
        assert_eq!(p.bytes_down_from_seeders, 0, "{p:?}");
    }
}
