//! A swarm whose peers keep only four channels: the flash crowd fills the
//! seeder's places at once, and latecomers are refused by it. Every
//! leecher still completes — peers leave half their places for incoming
//! channels and stranded leechers ask the tracker again — and without the
//! re-announce some would not.

use ppspp_lab::run::run;
use ppspp_lab::scenario::Role;
use ppspp_lab::sweep::apply;

const SCENARIO: &str = include_str!("full_swarm.toml");

fn completed(text: &str) -> (u32, u32) {
    let o = run(text, "full_swarm.toml", None, None, |_| {}).unwrap();
    let leechers = o.peers.iter().filter(|p| p.role == Role::Leecher);
    let done = leechers.clone().filter(|p| p.complete_s.is_some()).count();
    (done as u32, leechers.count() as u32)
}

#[test]
fn every_leecher_gets_in_and_completes() {
    assert_eq!(completed(SCENARIO), (20, 20));
}

#[test]
fn without_reannounce_latecomers_are_stranded() {
    let once = apply(SCENARIO, "swarm.reannounce", "1h").unwrap();
    let (done, all) = completed(&once);
    assert!(done < all, "{done} of {all} completed without re-announce");
}
