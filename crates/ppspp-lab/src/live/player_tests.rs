//! The live player on hand-made chunk sets: one 1 KiB chunk per second
//! (8192 bit/s), so every figure is a whole number of seconds.

use super::*;
use ppspp_core::{ChunkRange, ChunkSize};

fn secs(s: u64) -> Instant {
    Instant::from_micros(s * 1_000_000)
}

fn config(window: u64, max_lag: u64, end: Option<u64>) -> LivePlayerConfig {
    LivePlayerConfig {
        clock: MediaClock::new(ChunkSize::DEFAULT, 8192),
        prebuffer: Duration::from_secs(3),
        rebuffer: Duration::from_secs(2),
        max_lag: Duration::from_secs(max_lag),
        window_chunks: window,
        end,
        stream_start: Instant::ZERO,
        sample_every: Duration::from_secs(1),
        catch_up: None,
    }
}

fn add(have: &mut Binmap, first: u64, last: u64) {
    have.set(ChunkRange::new(first, last).unwrap());
}

#[test]
fn it_starts_after_the_prebuffer_and_lags_by_its_hook_in() {
    let mut p = LivePlayer::new(config(100, 10, None), secs(9));
    let mut have = Binmap::new();
    p.advance(secs(9), &have, None);
    assert_eq!(p.state(), LiveState::Joining);
    assert_eq!(p.playhead(secs(9)), None);
    add(&mut have, 5, 9);
    p.advance(secs(10), &have, Some(ChunkIndex(5)));
    assert_eq!(p.state(), LiveState::Playing);
    assert_eq!(p.poll_timeout(), Some(secs(15)));
    add(&mut have, 10, 11);
    p.advance(secs(12), &have, None);
    assert_eq!(p.playhead(secs(12)), Some(ChunkIndex(7)));
    let out = p.playback(secs(12));
    assert_eq!(out.hook_in, Some(5));
    assert_eq!(out.startup, Some(Duration::from_secs(1)));
    assert_eq!(out.lags_ms, vec![5000, 5000, 5000]);
    assert_eq!(out.played, 2);
    assert_eq!(out.stalls, 0);
}

#[test]
fn a_gap_stalls_it_until_the_rebuffer_is_there() {
    let mut p = LivePlayer::new(config(100, 10, None), secs(9));
    let mut have = Binmap::new();
    add(&mut have, 5, 11);
    p.advance(secs(10), &have, Some(ChunkIndex(5)));
    assert_eq!(p.poll_timeout(), Some(secs(17)));
    p.advance(secs(17), &have, None);
    assert_eq!(p.state(), LiveState::Stalled);
    assert_eq!(p.poll_timeout(), None);
    // One chunk is not the 2 s rebuffer.
    add(&mut have, 12, 12);
    p.advance(secs(18), &have, None);
    assert_eq!(p.state(), LiveState::Stalled);
    add(&mut have, 13, 13);
    p.advance(secs(19), &have, None);
    assert_eq!(p.state(), LiveState::Playing);
    let out = p.playback(secs(19));
    assert_eq!(out.stalls, 1);
    assert_eq!(out.stall_time, Duration::from_secs(2));
    assert_eq!(out.played, 7);
    // 5 s behind while playing, then 6 and 7 s as the stall went on.
    assert_eq!(out.lags_ms.iter().filter(|l| **l == 5000).count(), 8);
    assert_eq!(out.lags_ms.last(), Some(&7000));
    let c = out.continuity(p.config.clock).unwrap();
    assert!((c - 7.0 / 9.0).abs() < 1e-9, "{c}");
    let log = p.stall_log();
    assert_eq!(log.len(), 1);
    assert_eq!(
        (log[0].chunk, log[0].start, log[0].end),
        (12, secs(17), Some(secs(19)))
    );
}

#[test]
fn too_far_behind_it_skips_ahead_and_the_media_is_lost() {
    let mut p = LivePlayer::new(config(100, 4, None), secs(9));
    let mut have = Binmap::new();
    add(&mut have, 5, 11);
    p.advance(secs(10), &have, Some(ChunkIndex(5)));
    p.advance(secs(17), &have, None);
    assert_eq!(p.state(), LiveState::Stalled);
    // 12..=19 never come; newer chunks do.
    add(&mut have, 20, 29);
    p.advance(secs(30), &have, None);
    assert_eq!(p.state(), LiveState::Playing);
    // A prebuffer (3 chunks) behind the newest.
    assert_eq!(p.playhead(secs(30)), Some(ChunkIndex(27)));
    let out = p.playback(secs(30));
    assert_eq!((out.skips, out.skipped), (1, 15));
    assert_eq!(out.stall_time, Duration::from_secs(13));
    let c = out.continuity(p.config.clock).unwrap();
    assert!((c - 7.0 / (7.0 + 13.0 + 15.0)).abs() < 1e-9, "{c}");
}

#[test]
fn a_position_that_left_the_window_is_skipped_before_startup_for_free() {
    let mut p = LivePlayer::new(config(10, 100, None), secs(9));
    let mut have = Binmap::new();
    add(&mut have, 5, 6);
    p.advance(secs(10), &have, Some(ChunkIndex(5)));
    assert_eq!(p.state(), LiveState::Prebuffering);
    have.clear(ChunkRange::new(5u64, 6u64).unwrap());
    add(&mut have, 30, 39);
    p.advance(secs(40), &have, None);
    assert_eq!(p.state(), LiveState::Playing);
    assert_eq!(p.playhead(secs(40)), Some(ChunkIndex(37)));
    let out = p.playback(secs(40));
    assert_eq!((out.skips, out.skipped), (0, 0));
    assert_eq!(out.startup, Some(Duration::from_secs(31)));
}

#[test]
fn it_ends_with_the_stream() {
    let mut p = LivePlayer::new(config(100, 10, Some(8)), secs(7));
    let mut have = Binmap::new();
    add(&mut have, 5, 7);
    p.advance(secs(8), &have, Some(ChunkIndex(5)));
    assert_eq!(p.state(), LiveState::Playing);
    p.advance(secs(11), &have, None);
    assert_eq!(p.state(), LiveState::Ended);
    let out = p.playback(secs(20));
    assert_eq!(out.ended, Some(secs(11)));
    assert_eq!((out.played, out.stalls), (3, 0));
    // The stream ended at 8 s: no lag to speak of after it.
    assert!(out.lags_ms.is_empty());
}

#[test]
fn every_sixteenth_chunk_records_its_delivery_delay_from_when_it_was_made() {
    // One chunk a second: chunk k is made at k + 1 s.
    let mut p = LivePlayer::new(config(100, 10, None), secs(0));
    p.on_verified(32, secs(40)); // made at 33 s: 7 s.
    p.on_verified(33, secs(40)); // not a sampled chunk
    p.on_verified(16, secs(20)); // made at 17 s: 3 s.
    p.on_verified(48, Instant::from_micros(49_250_000)); // 250 ms.
                                                         // A clock before the chunk's making (not possible in a run) counts 0.
    p.on_verified(64, secs(10));
    assert_eq!(p.playback(secs(50)).delivery_ms, [0, 250, 3_000, 7_000]);
}

fn catching_up(rate_permille: u32, above: u64) -> LivePlayerConfig {
    LivePlayerConfig {
        catch_up: Some(CatchUp {
            rate_permille,
            above: Duration::from_secs(above),
        }),
        ..config(100, 10, None)
    }
}

/// Joins at 9 s, hooks in at chunk 5 holding chunks 5..=14, and starts at
/// 10 s (the edge is at 10 s of media then: 5 s behind).
fn started(config: LivePlayerConfig) -> (LivePlayer, Binmap) {
    let mut p = LivePlayer::new(config, secs(9));
    let mut have = Binmap::new();
    add(&mut have, 5, 14);
    p.advance(secs(10), &have, Some(ChunkIndex(5)));
    assert_eq!(p.state(), LiveState::Playing);
    (p, have)
}

#[test]
fn catching_up_it_plays_fast_down_to_the_buffer_kept_then_at_real_time() {
    let (mut p, have) = started(catching_up(2000, 2));
    // 10 chunks held, 2 kept: 8 chunks at 2x take 4 s.
    assert_eq!(p.poll_timeout(), Some(secs(14)));
    assert_eq!(p.playhead(secs(12)), Some(ChunkIndex(9)));
    p.advance(secs(14), &have, None);
    assert_eq!(p.playhead(secs(14)), Some(ChunkIndex(13)));
    // The last 2 chunks at real time.
    assert_eq!(p.poll_timeout(), Some(secs(16)));
    p.advance(secs(15), &have, None);
    let out = p.playback(secs(15));
    assert_eq!(out.played, 9);
    // 5 s behind at the start, 1 s less each second of catching up.
    assert_eq!(out.lags_ms, [1000, 1000, 2000, 3000, 4000, 5000]);
    p.advance(secs(16), &have, None);
    assert_eq!(p.state(), LiveState::Stalled);
    assert_eq!(p.playback(secs(16)).played, 10);
}

#[test]
fn a_late_look_still_plays_real_time_past_the_buffer_kept() {
    let (mut p, have) = started(catching_up(2000, 2));
    // Nobody looked at 14 s, when it slowed down.
    p.advance(secs(15), &have, None);
    assert_eq!(p.playhead(secs(15)), Some(ChunkIndex(14)));
    assert_eq!(p.poll_timeout(), Some(secs(16)));
    assert_eq!(
        p.playback(secs(15)).lags_ms,
        [1000, 1000, 2000, 3000, 4000, 5000]
    );
}

#[test]
fn new_chunks_above_the_buffer_kept_speed_it_up_again() {
    let (mut p, mut have) = started(catching_up(2000, 2));
    p.advance(secs(14), &have, None);
    // At 14 s it holds 13 and 14 (the 2 s kept); 6 more arrive.
    add(&mut have, 15, 20);
    p.advance(secs(14), &have, None);
    // 6 chunks above the 2 kept, at 2x: 3 s.
    assert_eq!(p.poll_timeout(), Some(secs(17)));
    assert_eq!(p.playhead(secs(17)), Some(ChunkIndex(19)));
}

#[test]
fn without_catch_up_or_below_its_buffer_it_plays_at_real_time() {
    let (p, _) = started(config(100, 10, None));
    assert_eq!(p.poll_timeout(), Some(secs(20)));
    // Holding 10 s, keeping 10: never faster.
    let (p, _) = started(catching_up(2000, 10));
    assert_eq!(p.poll_timeout(), Some(secs(20)));
}
