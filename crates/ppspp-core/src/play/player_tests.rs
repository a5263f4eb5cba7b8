use super::*;
use crate::play::seek::Seeker;
use crate::play::{Bitrate, StallSpan};

/// 1 KiB chunks at 1 Mbit/s: a chunk lasts 8192 µs.
const CHUNK_US: u64 = 8192;

fn at(us: u64) -> Instant {
    Instant::from_micros(us)
}

/// A player of `chunks` chunks created at 0, prebuffering 10 chunks and
/// rebuffering 4.
fn player(chunks: u64) -> Player {
    let config = PlayerConfig {
        bitrate: Bitrate::MBIT,
        prebuffer: Duration::from_micros(10 * CHUNK_US),
        rebuffer: Duration::from_micros(4 * CHUNK_US),
    };
    let mut p = Player::new(config, ChunkSize::DEFAULT, at(0));
    p.set_chunk_count(chunks);
    p
}

fn have(first: u64, last: u64) -> Binmap {
    let mut b = Binmap::new();
    b.set(ChunkRange::new(first, last).unwrap());
    b
}

#[test]
fn starts_once_the_prebuffer_is_there_and_plays_to_the_end() {
    let mut p = player(100);
    p.advance(at(1_000), &have(0, 8));
    assert_eq!(p.state(), PlayerState::Prebuffering);
    assert_eq!(p.poll_timeout(), None);
    let all = have(0, 99);
    p.advance(at(2_000), &all);
    assert_eq!(p.state(), PlayerState::Playing);
    assert_eq!(p.poll_timeout(), Some(at(2_000 + 100 * CHUNK_US)));
    assert_eq!(p.playhead(at(2_000 + 3 * CHUNK_US)), ChunkIndex(3));
    assert_eq!(p.playhead(at(2_000 + 3 * CHUNK_US - 1)), ChunkIndex(2));
    p.advance(at(2_000 + 100 * CHUNK_US), &all);
    assert_eq!(p.state(), PlayerState::Ended);
    let s = p.stats(at(10_000_000), &all);
    assert_eq!(s.startup_delay, Some(Duration::from_micros(2_000)));
    assert_eq!((s.stalls, s.stall_time), (0, Duration::ZERO));
    assert_eq!((s.chunks_due, s.chunks_in_time), (100, 100));
    assert_eq!(s.continuity(), Some(1.0));
}

#[test]
fn stalls_at_a_gap_and_resumes_after_the_rebuffer() {
    let mut p = player(100);
    let mut h = have(0, 19);
    p.advance(at(0), &h);
    assert_eq!(p.state(), PlayerState::Playing);
    // Playback reaches chunk 20, which is missing, at 20 chunk times.
    let gap = at(20 * CHUNK_US);
    assert_eq!(p.poll_timeout(), Some(gap));
    // Looked at late: the stall still began when the gap was reached.
    p.advance(gap + Duration::from_micros(500), &h);
    assert_eq!(p.state(), PlayerState::Stalled);
    assert_eq!(p.playhead(at(30 * CHUNK_US)), ChunkIndex(20));
    h.set(ChunkRange::new(20, 22).unwrap());
    p.advance(at(21 * CHUNK_US), &h);
    assert_eq!(
        p.state(),
        PlayerState::Stalled,
        "3 of the 4 rebuffer chunks"
    );
    h.set(ChunkRange::new(23, 23).unwrap());
    let resume = at(22 * CHUNK_US);
    p.advance(resume, &h);
    assert_eq!(p.state(), PlayerState::Playing);
    let s = p.stats(resume, &h);
    assert_eq!(s.stalls, 1);
    assert_eq!(s.stall_time, Duration::from_micros(2 * CHUNK_US));
    // The log has the one stall: at chunk 20, from the gap to the resume.
    assert_eq!(
        p.stall_log().spans(),
        [StallSpan {
            chunk: 20,
            start: gap,
            end: Some(resume),
        }]
    );
    // Next gap: chunk 24, four chunk times after the resume.
    assert_eq!(
        p.poll_timeout(),
        Some(resume + Duration::from_micros(4 * CHUNK_US))
    );
}

#[test]
fn a_stall_in_progress_counts_its_time_so_far() {
    let mut p = player(100);
    let h = have(0, 9);
    p.advance(at(0), &h);
    p.advance(at(10 * CHUNK_US), &h);
    assert_eq!(p.state(), PlayerState::Stalled);
    let s = p.stats(at(15 * CHUNK_US), &h);
    assert_eq!(s.stalls, 1);
    assert_eq!(s.stall_time, Duration::from_micros(5 * CHUNK_US));
    let log = p.stall_log().spans();
    assert_eq!((log.len(), log[0].chunk, log[0].end), (1, 10, None));
}

#[test]
fn continuity_counts_chunks_late_against_uninterrupted_playback() {
    let mut p = player(100);
    let mut h = have(0, 9);
    p.advance(at(0), &h);
    // Chunk 10 is due at 10 chunk times; it comes 1 µs late.
    p.advance(at(10 * CHUNK_US), &h);
    assert_eq!(p.state(), PlayerState::Stalled);
    let late = at(10 * CHUNK_US + 1);
    h.set_chunk(ChunkIndex(10));
    p.on_verified(late, ChunkIndex(10));
    p.advance(late, &h);
    // Chunk 11 (due at 11 chunk times) comes exactly in time.
    let on_time = at(11 * CHUNK_US);
    h.set_chunk(ChunkIndex(11));
    p.on_verified(on_time, ChunkIndex(11));
    p.advance(on_time, &h);
    // At 13 chunk times chunks 0..=13 are due; 12 and 13 never came.
    let s = p.stats(at(13 * CHUNK_US), &h);
    assert_eq!(s.chunks_due, 14);
    assert_eq!(s.chunks_in_time, 11, "0..=9 and 11");
    assert_eq!(s.continuity(), Some(11.0 / 14.0));
}

#[test]
fn a_seek_waits_for_a_prebuffer_there_without_a_stall() {
    let mut p = player(100);
    let mut h = have(0, 19);
    p.advance(at(0), &h);
    let t = at(5 * CHUNK_US);
    p.seek(t, ChunkIndex(50), &h);
    assert_eq!(p.state(), PlayerState::Prebuffering);
    assert_eq!(p.playhead(t), ChunkIndex(50));
    h.set(ChunkRange::new(50, 59).unwrap());
    let t2 = at(7 * CHUNK_US);
    p.advance(t2, &h);
    assert_eq!(p.state(), PlayerState::Playing);
    assert_eq!(
        p.playhead(t2 + Duration::from_micros(CHUNK_US)),
        ChunkIndex(51)
    );
    let s = p.stats(t2, &h);
    assert_eq!(s.stalls, 0);
    assert_eq!(s.stall_time, Duration::ZERO);
    assert_eq!(s.startup_delay, Some(Duration::ZERO));
    // 0..=5 were due before the seek, 50 is due at once after it.
    assert_eq!((s.chunks_due, s.chunks_in_time), (7, 7));
}

#[test]
fn the_last_chunks_need_no_full_prebuffer() {
    let mut p = player(5);
    p.advance(at(100), &have(0, 4));
    assert_eq!(p.state(), PlayerState::Playing);
    assert_eq!(p.poll_timeout(), Some(at(100 + 5 * CHUNK_US)));
    let mut q = player(100);
    q.seek(at(0), ChunkIndex(100), &Binmap::new());
    assert_eq!(q.state(), PlayerState::Ended, "a seek past the end ends");
}

#[test]
fn playing_out_a_complete_download_ends_without_stalls() {
    let mut p = player(100);
    let all = have(0, 99);
    p.play_out(at(3_000), &all);
    assert_eq!(p.state(), PlayerState::Ended);
    let s = p.stats(at(3_000 + 100 * CHUNK_US), &all);
    assert_eq!(s.stalls, 0);
    assert_eq!(s.chunks_due, 100);
    assert_eq!(p.playhead(at(0)), ChunkIndex(100));
}

#[test]
fn without_a_known_end_playing_has_no_deadline_when_nothing_is_missing() {
    let config = PlayerConfig::default();
    let mut p = Player::new(config, ChunkSize::DEFAULT, at(0));
    let mut h = Binmap::new();
    h.set(ChunkRange::new(0, crate::chunk::MAX_CHUNK_INDEX).unwrap());
    p.advance(at(0), &h);
    assert_eq!(p.state(), PlayerState::Playing);
    assert_eq!(p.poll_timeout(), None);
}

/// The seek model's random source in these tests.
fn seek_rng(seed: u64) -> Xoshiro256PlusPlus {
    use rand::SeedableRng;
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// What a seeker of `model` on `seed` draws: its first gap, then the
/// targets (of `chunks` chunks) and gaps of its first `n` seeks.
fn draws(model: SeekModel, seed: u64, chunks: u64, n: usize) -> (Duration, Vec<(u64, Duration)>) {
    let mut s = Seeker::new(model, seek_rng(seed));
    let first = s.left();
    let seeks = (0..n)
        .map(|_| {
            let target = s.fire(chunks);
            (target, s.left())
        })
        .collect();
    (first, seeks)
}

/// Drives `p` from look to look up to `until`, every chunk there.
fn play_until(p: &mut Player, until: Instant, have: &Binmap) {
    p.advance(at(0), have);
    while let Some(t) = p.poll_timeout().filter(|&t| t <= until) {
        p.advance(t, have);
    }
}

#[test]
fn the_seek_model_is_deterministic_given_its_random_source() {
    let model = SeekModel::per_minute(6.0).unwrap();
    let all = have(0, 99_999);
    let run = |seed: u64| {
        let mut p = player(100_000).with_seeks(model, seek_rng(seed));
        let mut heads = Vec::new();
        p.advance(at(0), &all);
        while let Some(t) = p.poll_timeout().filter(|&t| t <= at(600_000_000)) {
            p.advance(t, &all);
            heads.push((t, p.playhead(t)));
        }
        (heads, p.stats(at(600_000_000), &all))
    };
    let (a, sa) = run(5);
    let (b, sb) = run(5);
    assert_eq!(a, b);
    assert_eq!(sa, sb);
    assert!(sa.seeks > 10, "{sa:?}");
    let (c, _) = run(6);
    assert_ne!(a, c, "another seed, other seeks");
}

#[test]
fn seeks_come_at_the_rate_per_minute_of_playback() {
    // Ten hours of playback at two seeks a minute: 1,200 expected (a
    // Poisson count, standard deviation 35). The content is long enough
    // (10⁹ chunks, 94 days) that a seek practically never lands near
    // the end; every chunk is there, so playback never stops.
    let model = SeekModel::per_minute(2.0).unwrap();
    let n = 1_000_000_000;
    let all = have(0, n - 1);
    let mut p = player(n).with_seeks(model, seek_rng(11));
    let ten_hours = at(36_000_000_000);
    play_until(&mut p, ten_hours, &all);
    let s = p.stats(ten_hours, &all);
    assert_eq!(p.state(), PlayerState::Playing);
    // Exactly the seeks whose drawn playback times fall in the ten hours.
    let (first, seeks) = draws(model, 11, n, 2_000);
    let mut when = at(0) + first;
    let mut expected = 0;
    for (_, gap) in seeks {
        if when > ten_hours {
            break;
        }
        expected += 1;
        when += gap;
    }
    assert_eq!(s.seeks, expected);
    assert_eq!(s.seeks, 1_192, "this seed's count");
    assert!((1_100..=1_300).contains(&s.seeks));
    // Every seek landed in content that is there: no wait, no stall.
    assert_eq!((s.seek_waits, s.seek_wait_time), (0, Duration::ZERO));
    assert_eq!((s.stalls, s.stall_time), (0, Duration::ZERO));
}

#[test]
fn a_seek_of_the_model_restarts_buffering_like_a_startup() {
    let model = SeekModel::per_minute(60.0).unwrap();
    let (gap, seeks) = draws(model, 2, 10_000, 1);
    let (target, _) = seeks[0];
    // The first 200 chunks are there; the seek comes before playback
    // reaches chunk 200 (1.6 s) for this seed, to a chunk beyond them.
    assert!(gap < Duration::from_micros(200 * CHUNK_US), "{gap:?}");
    assert!(target > 300, "{target}");
    let mut h = have(0, 199);
    let mut p = player(10_000).with_seeks(model, seek_rng(2));
    p.advance(at(0), &h);
    assert_eq!(p.state(), PlayerState::Playing);
    let when = at(0) + gap;
    assert_eq!(p.poll_timeout(), Some(when));
    p.advance(when, &h);
    assert_eq!(p.state(), PlayerState::Prebuffering);
    assert_eq!(p.playhead(when), ChunkIndex(target));
    assert_eq!(p.poll_timeout(), None, "waiting for chunks");
    // Looked at later, still waiting: the wait so far is counted.
    let later = when + Duration::from_millis(300);
    p.advance(later, &h);
    let s = p.stats(later, &h);
    assert_eq!((s.seeks, s.seek_waits), (1, 1));
    assert_eq!(s.seek_wait_time, Duration::from_millis(300));
    assert_eq!((s.stalls, s.stall_time), (0, Duration::ZERO));
    // The prebuffer at the target (10 chunks) comes: playback resumes
    // there, and the wait ends.
    h.set(ChunkRange::with_len(target, 10).unwrap());
    let resume = when + Duration::from_millis(500);
    p.advance(resume, &h);
    assert_eq!(p.state(), PlayerState::Playing);
    let s = p.stats(resume, &h);
    assert_eq!(s.seek_wait_time, Duration::from_millis(500));
    assert_eq!(s.startup_delay, Some(Duration::ZERO), "startup unchanged");
    assert_eq!(p.playhead(resume), ChunkIndex(target));
}

#[test]
fn stalls_pause_the_seek_clock() {
    let model = SeekModel::per_minute(1.0).unwrap();
    let (gap, _) = draws(model, 4, 100_000, 0);
    // This seed's first seek comes after more than 20 chunk times of
    // playback.
    assert!(gap > Duration::from_micros(20 * CHUNK_US), "{gap:?}");
    let mut h = have(0, 19);
    let mut p = player(100_000).with_seeks(model, seek_rng(4));
    p.advance(at(0), &h);
    p.advance(at(20 * CHUNK_US), &h);
    assert_eq!(p.state(), PlayerState::Stalled);
    // A stall of 1 s, then everything comes.
    h.set(ChunkRange::new(20, 99_999).unwrap());
    let resume = at(20 * CHUNK_US + 1_000_000);
    p.advance(resume, &h);
    assert_eq!(p.state(), PlayerState::Playing);
    let played = Duration::from_micros(20 * CHUNK_US);
    assert_eq!(p.poll_timeout(), Some(resume + (gap - played)));
}

#[test]
fn a_seek_during_a_stall_ends_it_and_waits_apart() {
    let mut h = have(0, 9);
    let mut p = player(100);
    p.advance(at(0), &h);
    p.advance(at(10 * CHUNK_US), &h);
    assert_eq!(p.state(), PlayerState::Stalled);
    // Seek 3 chunk times into the stall, to content not there.
    let t = at(13 * CHUNK_US);
    p.seek(t, ChunkIndex(50), &h);
    h.set(ChunkRange::new(50, 59).unwrap());
    p.advance(at(20 * CHUNK_US), &h);
    let s = p.stats(at(20 * CHUNK_US), &h);
    assert_eq!(
        (s.stalls, s.stall_time),
        (1, Duration::from_micros(3 * CHUNK_US))
    );
    assert_eq!((s.seeks, s.seek_waits), (1, 1));
    assert_eq!(s.seek_wait_time, Duration::from_micros(7 * CHUNK_US));
    // The stall ended with the seek.
    assert_eq!(
        p.stall_log().spans(),
        [StallSpan {
            chunk: 10,
            start: at(10 * CHUNK_US),
            end: Some(t),
        }]
    );
    // A seek into buffered content plays on at once: a seek, no wait.
    p.seek(at(21 * CHUNK_US), ChunkIndex(0), &h);
    assert_eq!(p.state(), PlayerState::Playing);
    let s = p.stats(at(21 * CHUNK_US), &h);
    assert_eq!((s.seeks, s.seek_waits), (2, 1));
}

#[test]
fn a_seek_before_startup_is_part_of_the_startup() {
    let mut p = player(100);
    let mut h = Binmap::new();
    p.advance(at(0), &h);
    p.seek(at(1_000), ChunkIndex(40), &h);
    h.set(ChunkRange::new(40, 49).unwrap());
    p.advance(at(5_000), &h);
    let s = p.stats(at(5_000), &h);
    assert_eq!(s.startup_delay, Some(Duration::from_micros(5_000)));
    assert_eq!((s.seeks, s.seek_waits), (1, 0));
    assert_eq!(s.seek_wait_time, Duration::ZERO);
}

#[test]
fn playing_out_with_seeks_ends_and_counts_them() {
    // Four seeks a minute over 100 chunks (0.8 s): few seeks come before
    // the end, each into complete content.
    let model = SeekModel::per_minute(60.0).unwrap();
    let all = have(0, 999);
    let mut p = player(1000).with_seeks(model, seek_rng(8));
    p.play_out(at(0), &all);
    assert_eq!(p.state(), PlayerState::Ended);
    let s = p.stats(Instant::MAX, &all);
    assert!(s.seeks > 0, "{s:?}");
    assert_eq!((s.seek_waits, s.stalls), (0, 0));
    assert_eq!(s.continuity(), Some(1.0));
}

#[test]
fn without_a_chunk_count_the_model_does_not_seek() {
    let model = SeekModel::per_minute(60.0).unwrap();
    let mut p = Player::new(PlayerConfig::default(), ChunkSize::DEFAULT, at(0))
        .with_seeks(model, seek_rng(1));
    let mut h = Binmap::new();
    h.set(ChunkRange::new(0, crate::chunk::MAX_CHUNK_INDEX).unwrap());
    p.advance(at(0), &h);
    assert_eq!(p.state(), PlayerState::Playing);
    assert_eq!(p.poll_timeout(), None);
}
