use std::time::Duration;

use super::*;
use crate::pick::test_sets::{r, Sets};
use crate::pick::{PeerLink, StdVod};

/// As swift-vod's tests: 1000 chunks at this peer and two others, playhead
/// 100, a high set of 10 chunks (100..=109) and a mid set of 20
/// (110..=129); this peer is slow (not in a fast set of 2).
fn sets() -> Sets {
    let mut s = Sets::counted(1000, &[(0, 999)]);
    s.availability.add(r(0, 999));
    s.availability.add(r(0, 999));
    s.playhead = Some(100);
    s.link = PeerLink {
        fast: Some(false),
        fast_count: 2,
        window: 16,
        loss: 0.0,
        answer_time: Duration::from_millis(300),
        prebuffering: false,
    };
    s
}

fn picker() -> BufferVod {
    BufferVod::with_windows(MediaRate::default(), 10, 20)
}

/// swift-vod with the same windows, to compare with.
fn swift_vod() -> SwiftVod {
    SwiftVod::with_windows(MediaRate::default(), 10, 20)
}

fn chunks(picked: &[(u64, u64)]) -> u64 {
    picked.iter().map(|(a, b)| b - a + 1).sum()
}

#[test]
fn the_buffer_is_the_run_held_from_the_playhead() {
    let mut s = sets();
    assert_eq!(BufferVod::buffered(&s.view()), Some(0));
    s.have.set(r(95, 104));
    assert_eq!(BufferVod::buffered(&s.view()), Some(5));
    s.have.set(r(106, 999));
    assert_eq!(BufferVod::buffered(&s.view()), Some(5), "a gap at 105");
    s.have.set(r(105, 105));
    assert_eq!(BufferVod::buffered(&s.view()), Some(900), "to the end");
    s.playhead = None;
    assert_eq!(BufferVod::buffered(&s.view()), None);
}

#[test]
fn a_low_buffer_puts_even_a_slow_peer_on_the_high_set_in_order() {
    let mut s = sets();
    s.have.set(r(100, 102));
    // Three chunks held, fewer than half the high set's ten: urgent.
    let picked = s.pick_with(&mut picker(), 8, 1);
    assert_eq!(picked.first(), Some(&(103, 109)));
    assert_eq!(chunks(&picked), 8, "then the mid set: {picked:?}");
    // swift-vod asks this slow peer for the mid set first.
    let swift = s.pick_with(&mut swift_vod(), 8, 1);
    assert!(swift.iter().all(|&(a, _)| a >= 110), "{swift:?}");
}

#[test]
fn a_healthy_buffer_is_swift_vods() {
    let mut s = sets();
    s.have.set(r(100, 104));
    for seed in 1..4 {
        let ours = s.pick_with(&mut picker(), 8, seed);
        let swift = s.pick_with(&mut swift_vod(), 8, seed);
        assert_eq!(ours, swift);
    }
}

#[test]
fn late_requests_come_first_while_the_buffer_is_low() {
    // 104..=105 went late at another peer and were released; the rest of
    // the high set is asked elsewhere.
    let mut s = sets();
    s.request(100, 103);
    s.request(106, 109);
    s.late.set(r(104, 105));
    let picked = s.pick_with(&mut picker(), 4, 1);
    assert_eq!(picked.first(), Some(&(104, 105)), "{picked:?}");
}

#[test]
fn a_prebuffering_player_is_served_as_swift_vod_serves_it() {
    let mut s = sets();
    s.link.prebuffering = true;
    let ours = s.pick_with(&mut picker(), 20, 1);
    let swift = s.pick_with(&mut swift_vod(), 20, 1);
    assert_eq!(ours, swift);
    assert_eq!(ours, [(100, 104)], "eq. 3's share: H/F = 5");
}

#[test]
fn a_peer_with_every_chunk_is_asked_for_the_high_set_first_whatever_the_buffer() {
    let mut s = sets();
    s.peer_counted = false;
    s.have.set(r(100, 104));
    // 108 has one holder fewer than the rest of the back half (105..=109).
    s.availability.remove(r(108, 108));
    for seed in 1..4 {
        let ours = s.pick_with(&mut picker(), 8, seed);
        // The front half of the high set (100..=104) in order — held
        // already — then its back half rarest-first (the rarest chunk
        // first, its run extending rightwards), then the mid set.
        assert_eq!(ours.first().map(|r| r.0), Some(108), "{ours:?}");
        let high: Vec<u64> = ours
            .iter()
            .flat_map(|&(a, b)| a..=b)
            .filter(|&c| c < 110)
            .collect();
        let mut sorted = high.clone();
        sorted.sort_unstable();
        assert_eq!(
            sorted,
            [105, 106, 107, 108, 109],
            "the whole high set: {ours:?}"
        );
        assert_eq!(chunks(&ours), 8, "then the mid set: {ours:?}");
    }
    // The front half goes in order, as std-vod asks.
    s.have = crate::binmap::Binmap::new();
    let ours = s.pick_with(&mut picker(), 5, 1);
    let std = s.pick_with(&mut StdVod::with_windows(10, 20), 5, 1);
    assert_eq!(ours, std);
    assert_eq!(ours, [(100, 104)]);
    // swift-vod asks the same slow peer for the mid set only.
    let swift = s.pick_with(&mut swift_vod(), 8, 1);
    assert!(swift.iter().all(|&(a, _)| a >= 110), "{swift:?}");
    // While the player prebuffers, swift-vod's prebuffer plan still holds.
    s.link.prebuffering = true;
    let ours = s.pick_with(&mut picker(), 20, 1);
    let swift = s.pick_with(&mut swift_vod(), 20, 1);
    assert_eq!(ours, swift);
}

#[test]
fn a_viewer_stays_on_the_urgent_data_until_the_buffer_is_calm_again() {
    // High set 10: low under 5 chunks held, calm again from 8 (0.75).
    let mut s = sets();
    let mut ours = picker();
    s.have.set(r(100, 104));
    assert!(
        !ours.urgent(&s.view()),
        "5 held, never low: swift-vod's plan"
    );
    s.playhead = Some(101);
    assert!(ours.urgent(&s.view()), "4 held: low");
    s.have.set(r(105, 107));
    assert!(ours.urgent(&s.view()), "7 held: still urgent");
    let picked = s.pick_with(&mut ours, 2, 1);
    assert_eq!(
        picked,
        [(108, 109)],
        "the high set, in order, from a slow peer"
    );
    s.have.set(r(108, 108));
    assert!(!ours.urgent(&s.view()), "8 held: calm");
    let picked = s.pick_with(&mut ours, 8, 1);
    let swift = s.pick_with(&mut swift_vod(), 8, 1);
    assert_eq!(picked, swift, "back to swift-vod's plan");
    s.playhead = Some(103);
    assert!(!ours.urgent(&s.view()), "6 held after calm: not low yet");
    s.playhead = None;
    assert!(!ours.urgent(&s.view()), "nothing plays");
}
