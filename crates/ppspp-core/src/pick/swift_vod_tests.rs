use std::time::Duration;

use super::*;
use crate::pick::test_sets::{map, r, Sets};
use crate::pick::PeerLink;

/// 1000 chunks at this peer and two others, playhead 100: a high set of
/// 10 chunks (100..=109) and a mid set of 20 (110..=129); 1 KiB chunks of
/// 1 Mbit/s media (8192 µs each).
fn sets(fast: Option<bool>, fast_count: u64, window: u64) -> Sets {
    let mut s = Sets::counted(1000, &[(0, 999)]);
    s.availability.add(r(0, 999));
    s.availability.add(r(0, 999));
    s.playhead = Some(100);
    s.link = PeerLink {
        fast,
        fast_count,
        window,
        loss: 0.0,
        answer_time: Duration::from_millis(300),
        prebuffering: false,
    };
    s
}

/// `margin` before `t`.
fn at(t: Instant, margin: Duration) -> Instant {
    Instant::from_micros(t.as_micros() - margin.as_micros() as u64)
}

fn picker() -> SwiftVod {
    SwiftVod::with_windows(MediaRate::default(), 10, 20)
}

fn pick(s: &Sets, max: u64) -> Vec<(u64, u64)> {
    s.pick_with(&mut picker(), max, 1)
}

#[test]
fn a_fast_peer_gets_eq3s_share_of_the_high_set_or_else_the_mid_set() {
    // H/F = 10/2 = 5 < W/2 = 8: five urgent chunks and nothing else.
    let mut s = sets(Some(true), 2, 16);
    assert_eq!(pick(&s, 8), [(100, 104)]);
    // Nothing urgent left for it: rarest-first from the mid set.
    s.request(100, 109);
    let picked = pick(&s, 8);
    let n: u64 = picked.iter().map(|(a, b)| b - a + 1).sum();
    assert_eq!(n, 8);
    assert!(
        picked.iter().all(|&(a, b)| a >= 110 && b <= 129),
        "{picked:?}"
    );
    // W/2 = 2 < H/F: two.
    let s = sets(Some(true), 1, 4);
    assert_eq!(pick(&s, 2), [(100, 101)]);
}

#[test]
fn with_no_fast_set_yet_every_peer_serves_urgent_data() {
    let s = sets(None, 0, 40);
    assert_eq!(pick(&s, 10), [(100, 109)]);
}

#[test]
fn a_prebuffering_player_asks_every_peer_for_the_high_set_and_nothing_else() {
    // A slow peer gets eq. 3's share, as a fast one would: H/F = 10/3
    // rounds up to 4 < W/2 = 20.
    let mut s = sets(Some(false), 3, 40);
    s.link.prebuffering = true;
    assert_eq!(pick(&s, 20), [(100, 103)]);
    s.request(100, 103);
    assert_eq!(pick(&s, 20), [(104, 107)]);
    s.request(104, 107);
    assert_eq!(pick(&s, 20), [(108, 109)]);
    // All of it asked elsewhere: nothing, not the mid or low sets.
    s.request(108, 109);
    assert_eq!(pick(&s, 20), []);
    s.link.fast = Some(true);
    assert_eq!(pick(&s, 20), []);
    // Once the player plays, the same peer is asked for the mid set.
    s.link.prebuffering = false;
    let picked = pick(&s, 20);
    assert!(!picked.is_empty());
    assert!(
        picked.iter().all(|&(a, b)| a >= 110 && b <= 129),
        "{picked:?}"
    );
}

#[test]
fn a_slow_peer_gets_urgent_chunks_only_when_nothing_else_is_needed() {
    let mut s = sets(Some(false), 3, 40);
    let picked = pick(&s, 10);
    assert!(
        picked.iter().all(|&(a, b)| !(a <= 109 && b >= 100)),
        "{picked:?}"
    );
    // It has only the high set and the playhead's chunk is not asked
    // elsewhere: it is asked, in order.
    s.peer_has = map(&[(100, 109)]);
    s.availability = crate::pick::availability::Availability::new();
    s.availability.set_chunk_count(1000);
    s.availability.add(r(100, 109));
    s.request(100, 101);
    assert_eq!(pick(&s, 3), [(102, 104)]);
    // And never an end-game duplicate.
    s.request(102, 109);
    assert_eq!(pick(&s, 3), []);
    // A fast peer gets end-game duplicates, once every chunk we lack is
    // asked of someone.
    s.link.fast = Some(true);
    assert_eq!(pick(&s, 3), []);
    s.request(0, 99);
    s.request(110, 999);
    assert_eq!(pick(&s, 3), [(100, 102)]);
}

#[test]
fn high_set_deadlines_keep_a_margin_before_play_time() {
    let mut s = sets(Some(true), 1, 40);
    s.chunk_count = Some(1000);
    let p = picker();
    let view = s.view();
    let chunk = Duration::from_micros(8192);
    // Chunk 109 plays 9 chunk-times after the playhead: 73.7 ms; minus the
    // 1 s margin is in the past, so the deadline is the answer time.
    assert_eq!(
        p.deadline(&view, r(109, 109)),
        Some(view.now + Duration::from_millis(300))
    );
    // A wider high set: chunk 300 plays 200 chunk-times on (1.64 s).
    let p = SwiftVod::with_windows(MediaRate::default(), 400, 20);
    assert_eq!(
        p.deadline(&view, r(300, 300)),
        Some(at(view.now + chunk * 200, SAFETY_MARGIN))
    );
    // Loss widens the margin: 5 % → 1.5 s.
    s.link.loss = 0.05;
    let view = s.view();
    assert_eq!(
        p.deadline(&view, r(300, 300)),
        Some(view.now + Duration::from_millis(300))
    );
    let late = p.deadline(&view, r(399, 399)).unwrap();
    assert_eq!(
        late,
        at(view.now + chunk * 299, Duration::from_millis(1500))
    );
    // Past the high set, or with nothing playing: no deadline.
    assert_eq!(p.deadline(&view, r(500, 510)), None);
    s.playhead = None;
    assert_eq!(p.deadline(&s.view(), r(300, 300)), None);
}

#[test]
fn a_slow_peer_is_asked_first_for_urgent_chunks_late_elsewhere() {
    let mut s = sets(Some(false), 3, 40);
    // Chunks 103..=104 went late at a fast peer: released, to be asked
    // again. 105 went late too but is asked again already.
    s.late = map(&[(103, 105)]);
    s.request(105, 105);
    let picked = pick(&s, 10);
    assert_eq!(picked[0], (103, 104), "{picked:?}");
    // The rest of its budget still goes to the mid and low sets.
    let n: u64 = picked.iter().map(|(a, b)| b - a + 1).sum();
    assert_eq!(n, 10);
    assert!(picked[1..].iter().all(|&(a, _)| a >= 110), "{picked:?}");
    // A late chunk beyond the high set is not urgent any more: not first.
    s.late = map(&[(300, 300)]);
    assert!(pick(&s, 10).iter().all(|&(a, b)| !(a <= 109 && b >= 100)));
}
