//! A swarm whose peers keep only four channels: the flash crowd fills the
//! seeder's places at once, and latecomers are refused by it. Every
//! leecher still completes — peers leave half their places for incoming
//! channels and stranded leechers ask the tracker again — and without the
//! re-announce some would not. Stranded means too few channels, or
//! channels only to peers that have nothing either (an island of
//! latecomers, which seed 1 makes).

use ppspp_lab::run::run;
use ppspp_lab::scenario::Role;
use ppspp_lab::sweep::apply;

const SCENARIO: &str = include_str!("full_swarm.toml");

/// Seeds tried: which latecomers end up stranded depends on the draw.
const SEEDS: [u64; 4] = [1, 2, 3, 4];

fn completed(text: &str, seed: u64) -> (u32, u32) {
    let o = run(text, "full_swarm.toml", Some(seed), None, |_| {}).unwrap();
    let leechers = o.peers.iter().filter(|p| p.role == Role::Leecher);
    let done = leechers.clone().filter(|p| p.complete_s.is_some()).count();
    (done as u32, leechers.count() as u32)
}

#[test]
fn every_leecher_gets_in_and_completes() {
    for seed in SEEDS {
        assert_eq!(completed(SCENARIO, seed), (20, 20), "seed {seed}");
    }
}

#[test]
fn without_reannounce_latecomers_are_stranded() {
    let once = apply(SCENARIO, "swarm.reannounce", "1h").unwrap();
    let stranded: Vec<u64> = SEEDS
        .into_iter()
        .filter(|&seed| {
            let (done, all) = completed(&once, seed);
            done < all
        })
        .collect();
    assert!(
        !stranded.is_empty(),
        "every seed completed without re-announce"
    );
}
