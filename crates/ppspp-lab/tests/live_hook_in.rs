//! Where a live viewer hooks in: at the newest munro its peers announce
//! unless the scenario says `hook_in_behind` (RFC 7574 §6.1; libswift
//! hooks in at the newest munro too). A viewer that hooks in further back
//! plays that much further behind the source, since the lab's player
//! starts at its hook-in and plays at 1× without a catch-up rule.

use ppspp_lab::run::{run, Outcome};
use ppspp_lab::scenario::{parse, Role};
use ppspp_lab::sweep::apply;

const SCENARIO: &str = include_str!("../../../scenarios/live-small.toml");

/// `live-small` with 5 viewers of a 30 s stream, hooking in `behind`
/// munros back.
fn small(behind: u64) -> String {
    let mut text = apply(SCENARIO, "peers.viewers.count", "5").unwrap();
    text = apply(&text, "live.duration", "30s").unwrap();
    text = apply(&text, "duration", "40s").unwrap();
    apply(&text, "live.hook_in_behind", &behind.to_string()).unwrap()
}

/// Each viewer's (hook-in chunk, median lag in ms).
fn viewers(o: &Outcome) -> Vec<(u64, u32)> {
    o.peers
        .iter()
        .filter(|p| p.role == Role::Leecher)
        .map(|p| {
            let play = p.live.as_ref().unwrap().playback.as_ref().unwrap();
            (play.hook_in.unwrap(), play.lags_ms[play.lags_ms.len() / 2])
        })
        .collect()
}

#[test]
fn a_live_scenario_hooks_in_at_the_newest_munro_unless_it_says_otherwise() {
    let without: String = SCENARIO
        .lines()
        .filter(|l| !l.starts_with("hook_in_behind"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(without, SCENARIO, "the scenario names hook_in_behind");
    let live = |text: &str| parse(text, "t.toml").unwrap().live.unwrap();
    assert_eq!(live(&without).hook_in_behind, 0);
    assert_eq!(live(&small(3)).hook_in_behind, 3);
}

#[test]
fn viewers_that_hook_in_further_back_lag_further_behind() {
    let newest = run(&small(0), "live-small.toml", Some(1), None, |_| {}).unwrap();
    let back = run(&small(8), "live-small.toml", Some(1), None, |_| {}).unwrap();
    let (a, b) = (viewers(&newest), viewers(&back));
    assert_eq!((a.len(), b.len()), (5, 5));
    // A munro is 32 chunks: every hook-in is a munro's first chunk.
    assert!(
        a.iter().chain(&b).all(|(hook, _)| hook % 32 == 0),
        "{a:?} {b:?}"
    );
    let mean = |v: &[(u64, u32)]| v.iter().map(|x| f64::from(x.1)).sum::<f64>() / 5.0;
    // Eight munros are about 2.1 s of media at 1 Mbit/s in 1 KiB chunks;
    // at least half of it shows (a viewer at the newest munro waits longer
    // for its prebuffer, which eats into the difference).
    assert!(
        mean(&a) + 1000.0 <= mean(&b),
        "mean median lag {} ms hooking in at the newest against {} ms eight munros back",
        mean(&a),
        mean(&b)
    );
}
