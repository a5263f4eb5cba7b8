use std::time::Duration;

use super::*;
use crate::pick::test_sets::{map, r, Sets};
use crate::pick::PeerLink;

/// An urgent set of 8 chunks: 1 KiB chunks of 1 Mbit/s media last 8192 µs.
fn spread_picker() -> LivePicker {
    let p = LivePicker::sized(MediaRate::default(), Duration::from_micros(8 * 8192)).newest_only();
    assert_eq!(p.urgent_chunks(), 8);
    p
}

/// The same, entering every segment at its head, so that the walk's
/// ranges can be named.
fn picker() -> LivePicker {
    spread_picker().entering_at_heads()
}

/// A live stream: the peer has chunks 0..=199, nothing counted (a live
/// swarm sizes no availability), the playhead at 10.
fn live_sets() -> Sets {
    let mut s = Sets::uncounted(&[(0, 199)]);
    s.chunk_count = None;
    s.live = true;
    s.playhead = Some(10);
    s.link = PeerLink {
        answer_time: Duration::from_millis(100),
        ..PeerLink::default()
    };
    s
}

fn pick(s: &Sets, max: u64) -> Vec<(u64, u64)> {
    let picked = s.pick_with(&mut picker(), max, 1);
    s.check(&picked, max);
    picked
}

#[test]
fn urgent_chunks_in_order_then_the_newest_segment_by_segment() {
    let s = live_sets();
    // 10..=17 urgent; then the newest segment (192..=199), then the one
    // below it, each in order.
    assert_eq!(pick(&s, 20), [(10, 17), (192, 199), (160, 163)]);
    assert_eq!(pick(&s, 5), [(10, 14)]);
    assert_eq!(pick(&s, 0), []);
}

#[test]
fn taken_chunks_are_skipped_and_nothing_below_the_playhead_is_asked() {
    let mut s = live_sets();
    s.have = map(&[(0, 11), (195, 199)]);
    s.request(13, 13);
    s.request(190, 194);
    let picked = pick(&s, 1000);
    // Urgent 12 and 14..=17; the newest segment has nothing fresh, the
    // one below it is partly asked of another peer (190..=191) and left to
    // it; then segments newest first down to the urgent set's end, 18.
    assert_eq!(
        picked,
        [
            (12, 12),
            (14, 17),
            (128, 159),
            (96, 127),
            (64, 95),
            (32, 63),
            (18, 31)
        ]
    );
}

#[test]
fn a_segment_partly_asked_elsewhere_is_left_to_that_peer_unless_urgent() {
    let mut s = live_sets();
    s.request(196, 197);
    // 192..=199 is another peer's: the walk starts one segment lower.
    assert_eq!(pick(&s, 20), [(10, 17), (160, 171)]);
    // Asked of this peer too, the segment's rest comes from here as well.
    s.from_peer = map(&[(192, 193)]);
    s.request(192, 193);
    assert_eq!(pick(&s, 20), [(10, 17), (194, 195), (198, 199), (160, 167)]);
    // In the urgent set the rule does not hold: urgent chunks come from
    // whoever has them.
    s.playhead = Some(190);
    assert_eq!(pick(&s, 4), [(190, 191), (194, 195)]);
}

#[test]
fn chunks_late_elsewhere_come_first() {
    let mut s = live_sets();
    // 15..=16 went late at another peer (released, to be asked again).
    s.late = map(&[(15, 16)]);
    assert_eq!(pick(&s, 4), [(15, 16), (10, 11)]);
    // The in-order walk does not take them a second time.
    assert_eq!(pick(&s, 10), [(15, 16), (10, 14), (17, 17), (192, 193)]);
    // A late chunk past the urgent set is not urgent any more.
    s.late = map(&[(100, 100)]);
    assert_eq!(pick(&s, 2), [(10, 11)]);
}

#[test]
fn a_chunk_late_at_this_peer_is_not_asked_of_it_again() {
    let mut s = live_sets();
    // 12..=13 went late here: the swarm no longer counts them requested
    // (they are for other peers now), but they stay outstanding here.
    s.late = map(&[(12, 13)]);
    s.from_peer = map(&[(12, 13)]);
    assert_eq!(pick(&s, 6), [(10, 11), (14, 17)]);
}

#[test]
fn every_fourth_chunk_past_the_urgent_set_is_the_oldest_fresh_one() {
    let mut s = live_sets();
    // 18..=19 are holes: the chunks above them are had up to 150.
    s.have = map(&[(0, 17), (20, 150)]);
    let mut p = picker().with_oldest_share(4);
    // The urgent set 10..=17 is had: of a budget of 16, 4 go oldest
    // first (the holes, then the first fresh chunks above them), 12 to
    // the newest segments.
    let picked = s.pick_with(&mut p, 16, 1);
    s.check(&picked, 16);
    assert_eq!(picked, [(18, 19), (151, 152), (192, 199), (160, 163)]);
    // A budget of one: the oldest every fourth pick, the newest otherwise.
    let mut p = spread_picker().entering_at_heads().with_oldest_share(4);
    s.playhead = None;
    let ones: Vec<Vec<(u64, u64)>> = (0..8).map(|_| s.pick_with(&mut p, 1, 1)).collect();
    let oldest = ones.iter().filter(|x| x.as_slice() == [(18, 18)]).count();
    let newest = ones.iter().filter(|x| x.as_slice() == [(192, 192)]).count();
    assert_eq!((oldest, newest), (2, 6), "{ones:?}");
}

#[test]
fn while_the_player_waits_everything_from_the_playhead_is_urgent() {
    let mut s = live_sets();
    s.link.prebuffering = true;
    assert_eq!(pick(&s, 30), [(10, 39)]);
}

#[test]
fn no_end_game_in_a_live_stream() {
    let mut s = live_sets();
    s.request(0, 199);
    assert_eq!(pick(&s, 10), []);
    // The same view outside a live stream would open the end game.
    s.live = false;
    assert!(Candidates::end_game_open(&s.view()));
}

#[test]
fn without_a_playhead_only_the_newest_first_walk() {
    let mut s = live_sets();
    s.playhead = None;
    assert_eq!(pick(&s, 10), [(192, 199), (160, 161)]);
}

#[test]
fn urgent_requests_are_due_a_margin_before_they_play() {
    let s = live_sets();
    let p = picker();
    let now = Instant::from_micros(10_000_000);
    let view = PickView { now, ..s.view() };
    // The playhead plays now: the margin is gone, so one answer time.
    assert_eq!(
        p.deadline(&view, r(10, 12)),
        Some(now + Duration::from_millis(100))
    );
    // Past the urgent set: no deadline.
    assert_eq!(p.deadline(&view, r(18, 30)), None);
    let mut s = s;
    s.playhead = None;
    assert_eq!(p.deadline(&s.view(), r(10, 12)), None);
}

#[test]
fn viewers_enter_a_segment_at_their_own_offset_and_wrap_around() {
    let mut s = live_sets();
    s.playhead = None;
    // The newest whole segment is 160..=191; the partial one 192..=199
    // holds a third of the walk's budget.
    s.have = map(&[(192, 199)]);
    let mut entries = std::collections::BTreeSet::new();
    for seed in 0..16 {
        let mut p = spread_picker();
        let picked = s.pick_with(&mut p, 32, seed);
        s.check(&picked, 32);
        // The whole segment, from one entry point: at most two ranges,
        // the second ending where the first began.
        let chunks: std::collections::BTreeSet<u64> =
            picked.iter().flat_map(|&(a, b)| a..=b).collect();
        assert_eq!(chunks, (160..=191).collect(), "seed {seed}: {picked:?}");
        let entry = picked[0].0;
        match picked[..] {
            [(a, 191)] => assert_eq!(a, 160),
            [(a, 191), (160, b)] => assert_eq!(b + 1, a),
            _ => panic!("seed {seed}: {picked:?}"),
        }
        entries.insert(entry);
        // The same picker enters the same segment at the same place again.
        let again = s.pick_with(&mut p, 4, seed + 100);
        assert_eq!(again[0].0, entry, "seed {seed}");
    }
    // Sixteen viewers enter at (nearly) as many places.
    assert!(entries.len() >= 10, "{entries:?}");
}

#[test]
fn an_entry_outside_a_partial_segment_is_folded_into_it() {
    let p = spread_picker();
    for salt in 0..64 {
        let e = p.entry(salt, 192, 199);
        assert!((192..=199).contains(&e), "salt {salt}: {e}");
        let e = p.entry(salt, 170, 191);
        assert!((170..=191).contains(&e), "salt {salt}: {e}");
        assert_eq!(p.entry(salt, 5, 5), 5);
    }
    assert_eq!(picker().entry(7, 160, 191), 160);
}
