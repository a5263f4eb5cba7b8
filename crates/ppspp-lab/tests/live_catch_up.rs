//! A live player with a catch-up rule (`live::player::CatchUp`) plays
//! faster than real time while well buffered: on the same swarm its
//! viewers lag less behind the source than viewers at 1×, and still play
//! (or skip) every chunk from their hook-in to the end of the stream. The
//! scenario refuses a rule that is not a catch-up or is not for live.

use ppspp_lab::run::{run, Outcome};
use ppspp_lab::scenario::{parse, Role};
use ppspp_lab::sweep::apply;

const SCENARIO: &str = include_str!("../../../scenarios/live-small.toml");

/// `live-small` with 5 viewers of a 30 s stream, with `sets` applied.
fn small(sets: &[(&str, &str)]) -> String {
    let mut text = apply(SCENARIO, "peers.viewers.count", "5").unwrap();
    text = apply(&text, "live.duration", "30s").unwrap();
    text = apply(&text, "duration", "40s").unwrap();
    for (k, v) in sets {
        text = apply(&text, k, v).unwrap();
    }
    text
}

/// Each viewer's (median lag in ms, chunks played + skipped, hook-in).
fn viewers(o: &Outcome) -> Vec<(u32, u64, u64)> {
    o.peers
        .iter()
        .filter(|p| p.role == Role::Leecher)
        .map(|p| {
            let play = p.live.as_ref().unwrap().playback.as_ref().unwrap();
            let median = play.lags_ms[play.lags_ms.len() / 2];
            (median, play.played + play.skipped, play.hook_in.unwrap())
        })
        .collect()
}

#[test]
fn catching_up_viewers_lag_less_and_still_play_the_whole_stream() {
    let plain = run(&small(&[]), "live-small.toml", Some(1), None, |_| {}).unwrap();
    let text = small(&[
        ("peers.viewers.player.catch_up.rate", "1.5"),
        ("peers.viewers.player.catch_up.above", "1s"),
    ]);
    let fast = run(&text, "live-small.toml", Some(1), None, |_| {}).unwrap();
    let made = |o: &Outcome| {
        let source = o.peers.iter().find(|p| p.role == Role::Seeder).unwrap();
        source.live.as_ref().unwrap().made
    };
    assert_eq!(made(&plain), made(&fast));
    let (a, b) = (viewers(&plain), viewers(&fast));
    assert_eq!(a.len(), 5);
    for ((lag_plain, _, _), (lag_fast, to_end, hook)) in a.iter().zip(&b) {
        // The prebuffer is 2 s and catching up stops at 1 s of buffer: a
        // viewer that caught up is at least most of that second closer.
        assert!(
            lag_fast + 500 <= *lag_plain,
            "median lag {lag_fast} ms catching up against {lag_plain} ms"
        );
        assert_eq!(*to_end, made(&fast) - hook, "played or skipped to the end");
    }
    let mean = |v: &[(u32, u64, u64)]| v.iter().map(|x| f64::from(x.0)).sum::<f64>() / 5.0;
    let (live_plain, live_fast) = (plain.live.unwrap(), fast.live.unwrap());
    assert!(mean(&b) < mean(&a));
    assert!(live_fast.lag_s[0] < live_plain.lag_s[0], "{live_fast:?}");
}

#[test]
fn a_catch_up_rule_must_speed_up_and_is_for_live_viewers_only() {
    for rate in ["1.0", "0.8", "2.5"] {
        let text = small(&[
            ("peers.viewers.player.catch_up.rate", rate),
            ("peers.viewers.player.catch_up.above", "1s"),
        ]);
        let e = parse(&text, "t.toml").unwrap_err().to_string();
        assert!(e.contains("catch-up rate"), "{rate}: {e}");
    }
    let vod = include_str!("../../../scenarios/vod-small.toml");
    let text = apply(vod, "peers.viewers.player.catch_up.rate", "1.2").unwrap();
    let text = apply(&text, "peers.viewers.player.catch_up.above", "1s").unwrap();
    let e = parse(&text, "t.toml").unwrap_err().to_string();
    assert!(e.contains("catch_up is for live viewers"), "{e}");
}
