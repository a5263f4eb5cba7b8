use super::*;
use crate::play::Bitrate;

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
