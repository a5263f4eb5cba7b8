//! The player's state machine and its metrics.

use std::time::Duration;

use rand::rngs::Xoshiro256PlusPlus;

use super::seek::{SeekModel, Seeker};
use super::stall_log::StallLog;
use super::timing::Timing;
use super::PlayerConfig;
use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange, ChunkSize};
use crate::time::Instant;

/// What the player is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerState {
    /// Waiting for the prebuffer, at the start or after a seek (a seek
    /// wait, see [`PlaybackStats`]).
    Prebuffering,
    /// Consuming chunks at the bitrate.
    Playing,
    /// The next chunk was missing: waiting for the rebuffer.
    Stalled,
    /// Played to the end of the content.
    Ended,
}

/// What the viewer experienced so far.
///
/// # Seeks are not stalls
/// After a seek the player waits for a prebuffer at the new position, as
/// it does at startup. That wait is counted apart, in [`seek_waits`] and
/// [`seek_wait_time`], never in [`stalls`] and [`stall_time`]: a stall is
/// playback that stopped at a missing chunk, the figure seed paper 000
/// counts (§IV-A, Fig. 6), and a seek is the viewer's own doing; so stall
/// figures stay comparable between viewers that seek and viewers that do
/// not, as the startup delay is kept apart from them too. A seek in the
/// middle of a stall ends the stall (its time so far counts as stall
/// time); a seek before playback first started is part of the startup.
///
/// [`seek_waits`]: PlaybackStats::seek_waits
/// [`seek_wait_time`]: PlaybackStats::seek_wait_time
/// [`stalls`]: PlaybackStats::stalls
/// [`stall_time`]: PlaybackStats::stall_time
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlaybackStats {
    /// From the player's creation to the first chunk played; `None` while
    /// it has not started.
    pub startup_delay: Option<Duration>,
    /// Times playback stopped for a missing chunk.
    pub stalls: u32,
    /// Time spent stalled, a stall still going on included.
    pub stall_time: Duration,
    /// Chunks whose deadline has passed (see [`Player`] for deadlines).
    pub chunks_due: u64,
    /// Of those, the chunks that were there by their deadline.
    pub chunks_in_time: u64,
    /// Times the viewer jumped to another position (the seek model's
    /// seeks and the driver's, [`Player::seek`]).
    pub seeks: u32,
    /// Seeks after playback had started whose new position lacked the
    /// prebuffer, so that playback waited (a seek landing in buffered
    /// content plays on at once and is no wait).
    pub seek_waits: u32,
    /// Time spent waiting for the prebuffer after those seeks, a wait
    /// still going on included.
    pub seek_wait_time: Duration,
}

impl PlaybackStats {
    /// The continuity index: chunks in time ÷ chunks due; `None` before
    /// any chunk was due.
    pub fn continuity(&self) -> Option<f64> {
        (self.chunks_due > 0).then(|| self.chunks_in_time as f64 / self.chunks_due as f64)
    }
}

/// A viewer of one stream (see the [module](super) documentation).
///
/// # Deadlines
/// A stalling player needs each chunk when its playhead reaches it, so by
/// that measure only the chunk it stalled on is ever late. The continuity
/// index therefore uses the schedule of uninterrupted playback, the usual
/// definition in P2P streaming: from the moment playback first starts (or
/// starts again after a seek) at chunk `p` at time `t`, chunk `p + j` is
/// due at `t + j · chunk duration`, stalls or not. A chunk is in time when
/// it verified by then.
#[derive(Clone, Debug)]
pub struct Player {
    config: PlayerConfig,
    timing: Timing,
    /// The content's chunk count, once known.
    end: Option<u64>,
    created: Instant,
    state: PlayerState,
    /// Prebuffering or stalled: the chunk playback waits at. Playing: the
    /// chunk playback last (re)started at. Ended: the chunk count.
    at: u64,
    /// Playing: when playback (re)started at `at`. Stalled: when the stall
    /// began. Ended: when playback ended.
    since: Instant,
    /// Playing: when playback reaches the first chunk it lacks (or the end).
    next_need: Option<Instant>,
    /// The uninterrupted schedule's origin: (chunk, time).
    schedule: Option<(u64, Instant)>,
    /// Chunks of the current schedule that verified after their deadline.
    late: u64,
    /// Due and in-time counts of schedules before the last seek.
    earlier_due: u64,
    earlier_in_time: u64,
    startup: Option<Duration>,
    stalls: u32,
    /// Time of the stalls that ended.
    stalled: Duration,
    /// Each stall, when and where.
    stall_log: StallLog,
    /// The seek model, when the viewer seeks on its own.
    seeker: Option<Seeker>,
    seeks: u32,
    seek_waits: u32,
    /// Time of the seek waits that ended.
    seek_waited: Duration,
}

impl Player {
    /// A player created at `now`, prebuffering from chunk 0 of content
    /// cut in chunks of `chunk_size`.
    pub fn new(config: PlayerConfig, chunk_size: ChunkSize, now: Instant) -> Player {
        Player {
            config,
            timing: Timing::new(chunk_size, config.bitrate),
            end: None,
            created: now,
            state: PlayerState::Prebuffering,
            at: 0,
            since: now,
            next_need: None,
            schedule: None,
            late: 0,
            earlier_due: 0,
            earlier_in_time: 0,
            startup: None,
            stalls: 0,
            stalled: Duration::ZERO,
            stall_log: StallLog::default(),
            seeker: None,
            seeks: 0,
            seek_waits: 0,
            seek_waited: Duration::ZERO,
        }
    }

    /// The player seeks on its own as `model` says, drawing from `rng`
    /// (the driver's, derived from its seed: the player reads no global
    /// random source). Seeks need the chunk count
    /// ([`Player::set_chunk_count`]); none comes before it is known.
    pub fn with_seeks(mut self, model: SeekModel, rng: Xoshiro256PlusPlus) -> Player {
        self.seeker = Some(Seeker::new(model, rng));
        self
    }

    /// The content has `chunks` chunks (known once its size is).
    pub fn set_chunk_count(&mut self, chunks: u64) {
        self.end = Some(chunks);
    }

    /// Stalls so far (a driver tells the endpoint of new ones, see
    /// `Endpoint::note_stall`).
    pub fn stall_count(&self) -> u32 {
        self.stalls
    }

    /// What the player is doing.
    pub fn state(&self) -> PlayerState {
        self.state
    }

    /// The chunk playback needs next at `now`: the one waited for, or the
    /// one playing. Download schedulers put their urgent window here.
    pub fn playhead(&self, now: Instant) -> ChunkIndex {
        let c = match self.state {
            PlayerState::Playing => {
                let played = self.at + self.timing.chunks_in_us(micros(now - self.since));
                self.end.map_or(played, |n| played.min(n.saturating_sub(1)))
            }
            _ => self.at,
        };
        ChunkIndex(c)
    }

    /// When the player must be looked at again ([`Player::advance`]) even
    /// if no chunk arrives: when playback reaches a chunk we lack, or the
    /// end, or the seek model's next seek. `None` while it waits for
    /// chunks, or has ended.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next_need
    }

    /// Chunk `chunk` verified at `now`; counts it late when past its
    /// deadline. Call once per chunk, in any order with
    /// [`Player::advance`] at the same instant.
    pub fn on_verified(&mut self, now: Instant, chunk: ChunkIndex) {
        let Some((p, t)) = self.schedule else {
            return;
        };
        let c = chunk.0;
        if c < p || self.end.is_some_and(|n| c >= n) {
            return;
        }
        if micros(now - t) > self.timing.span_us(c - p) {
            self.late += 1;
        }
    }

    /// Moves the player to `now`, given the chunks we have. Call after
    /// every input that may have added chunks, and at
    /// [`Player::poll_timeout`].
    pub fn advance(&mut self, now: Instant, have: &Binmap) {
        loop {
            match self.state {
                PlayerState::Ended => return,
                PlayerState::Prebuffering | PlayerState::Stalled => {
                    if self.end.is_some_and(|n| self.at >= n) {
                        self.finish(now);
                        return;
                    }
                    let buffer = match self.state {
                        PlayerState::Prebuffering => self.config.prebuffer,
                        _ => self.config.rebuffer,
                    };
                    if !self.buffered(have, buffer) {
                        return;
                    }
                    match (self.state, self.startup) {
                        (PlayerState::Stalled, _) => {
                            self.stalled += now - self.since;
                            self.stall_log.end(now);
                        }
                        (_, Some(_)) => self.seek_waited += now - self.since,
                        (_, None) => self.startup = Some(now - self.created),
                    }
                    self.schedule.get_or_insert((self.at, now));
                    self.state = PlayerState::Playing;
                    self.since = now;
                }
                PlayerState::Playing => {
                    let missing = first_missing(have, self.at);
                    let stop = self.end.map_or(missing, |n| missing.min(n));
                    let span = self.timing.span_us(stop.saturating_sub(self.at));
                    let reach = self.since + Duration::from_micros(span);
                    // The seek model's seek comes first if it is due before
                    // playback reaches the gap or the end.
                    let seek = self.seek_due().filter(|&t| t < reach);
                    if let Some(t) = seek.filter(|&t| t <= now) {
                        self.seek_by_model(t, have);
                        continue;
                    }
                    if reach > now {
                        // Nothing missing and no end known: no deadline.
                        let need = (reach != Instant::MAX).then_some(reach);
                        self.next_need = seek.or(need);
                        return;
                    }
                    self.next_need = None;
                    self.stop_playing(reach);
                    if self.end == Some(stop) {
                        self.at = stop;
                        self.finish(reach);
                        return;
                    }
                    // The stall began when playback reached the gap, which
                    // may be before `now`; it may also end at once.
                    self.stalls += 1;
                    self.stall_log.begin(stop, reach);
                    self.state = PlayerState::Stalled;
                    self.at = stop;
                    self.since = reach;
                }
            }
        }
    }

    /// Whether `buffer` of media from the playback position is there (or
    /// all that is left of the content).
    fn buffered(&self, have: &Binmap, buffer: Duration) -> bool {
        if self.end.is_some_and(|n| self.at >= n) {
            return true;
        }
        let want = self.at.saturating_add(self.timing.chunks_for(buffer));
        let want = self.end.map_or(want, |n| want.min(n));
        first_missing(have, self.at) >= want
    }

    /// When the seek model's next seek comes, playing on; `None` without a
    /// model or a known chunk count, or when not playing.
    fn seek_due(&self) -> Option<Instant> {
        let s = self.seeker.as_ref()?;
        self.end?;
        (self.state == PlayerState::Playing).then(|| self.since + s.left())
    }

    /// Playing stops at `at` (a stall, the end, a seek): the seek model
    /// counts the playback time.
    fn stop_playing(&mut self, at: Instant) {
        if let Some(s) = self.seeker.as_mut() {
            s.played(at - self.since);
        }
    }

    /// The seek model's seek, due at `at` while playing.
    fn seek_by_model(&mut self, at: Instant, have: &Binmap) {
        let (Some(s), Some(n)) = (self.seeker.as_mut(), self.end) else {
            return;
        };
        // Its playback time is spent: `fire` draws the next gap.
        let target = s.fire(n);
        self.jump(at, ChunkIndex(target), have);
    }

    /// Plays out what is left when every chunk from the playhead to the
    /// end is there (a viewer that left the swarm with the whole content
    /// keeps watching): advances to `now`, then to the end of playback.
    /// A viewer with a seek model keeps seeking as it watches (a seek into
    /// complete content waits for nothing), so the end comes after its
    /// seeks; at most [`PLAY_OUT_LOOKS`] looks are taken, after which the
    /// player stays playing where it got to.
    pub fn play_out(&mut self, now: Instant, have: &Binmap) {
        self.advance(now, have);
        for _ in 0..PLAY_OUT_LOOKS {
            match (self.state, self.next_need) {
                (PlayerState::Playing, Some(t)) => self.advance(t, have),
                _ => return,
            }
        }
    }

    /// Moves playback to `chunk` at `now`: the player waits for a
    /// prebuffer there (a stall in progress ends; the wait is a seek wait,
    /// not a stall: see [`PlaybackStats`]).
    pub fn seek(&mut self, now: Instant, chunk: ChunkIndex, have: &Binmap) {
        self.advance(now, have);
        if self.state == PlayerState::Playing {
            self.stop_playing(now);
        }
        self.jump(now, chunk, have);
        self.advance(now, have);
    }

    /// The bookkeeping of a seek to `chunk` at `at`: the schedule ends,
    /// a stall or a seek wait in progress ends, and the player prebuffers
    /// at `chunk`. The caller has counted playback time.
    fn jump(&mut self, at: Instant, chunk: ChunkIndex, have: &Binmap) {
        let (due, in_time) = self.schedule_counts(at, have);
        self.earlier_due += due;
        self.earlier_in_time += in_time;
        self.schedule = None;
        self.late = 0;
        match (self.state, self.startup) {
            (PlayerState::Stalled, _) => {
                self.stalled += at - self.since;
                self.stall_log.end(at);
            }
            (PlayerState::Prebuffering, Some(_)) => self.seek_waited += at - self.since,
            _ => {}
        }
        self.seeks += 1;
        self.state = PlayerState::Prebuffering;
        self.at = chunk.0;
        self.since = at;
        self.next_need = None;
        if self.startup.is_some() && !self.buffered(have, self.config.prebuffer) {
            self.seek_waits += 1;
        }
    }

    /// Each stall so far, when and where (the last one may go on).
    pub fn stall_log(&self) -> &StallLog {
        &self.stall_log
    }

    /// The metrics at `now` (after [`Player::advance`] to `now`).
    pub fn stats(&self, now: Instant, have: &Binmap) -> PlaybackStats {
        let (due, in_time) = self.schedule_counts(now, have);
        let ongoing = match self.state {
            PlayerState::Stalled => now - self.since,
            _ => Duration::ZERO,
        };
        let seek_waiting = match (self.state, self.startup) {
            (PlayerState::Prebuffering, Some(_)) => now - self.since,
            _ => Duration::ZERO,
        };
        PlaybackStats {
            startup_delay: self.startup,
            stalls: self.stalls,
            stall_time: self.stalled + ongoing,
            chunks_due: self.earlier_due + due,
            chunks_in_time: self.earlier_in_time + in_time,
            seeks: self.seeks,
            seek_waits: self.seek_waits,
            seek_wait_time: self.seek_waited + seek_waiting,
        }
    }

    /// Due and in-time chunks of the current schedule at `now`.
    fn schedule_counts(&self, now: Instant, have: &Binmap) -> (u64, u64) {
        let Some((p, t)) = self.schedule else {
            return (0, 0);
        };
        if now < t {
            return (0, 0);
        }
        let mut due = self.timing.chunks_in_us(micros(now - t)).saturating_add(1);
        if let Some(n) = self.end {
            due = due.min(n.saturating_sub(p));
        }
        let present = ChunkRange::with_len(p, due).map_or(0, |r| have.count_in(r));
        (due, present.saturating_sub(self.late))
    }

    fn finish(&mut self, at: Instant) {
        self.state = PlayerState::Ended;
        self.since = at;
        self.next_need = None;
    }
}

/// The most looks [`Player::play_out`] takes: enough for any seek rate a
/// [`SeekModel`] takes over content of hours, and a bound on the work.
pub const PLAY_OUT_LOOKS: u32 = 1 << 20;

/// The first chunk at or after `from` that `have` lacks.
fn first_missing(have: &Binmap, from: u64) -> u64 {
    have.first_empty_from(ChunkIndex(from))
        .map_or(u64::MAX, |c| c.0)
}

fn micros(d: Duration) -> u64 {
    crate::time::duration_micros(d)
}

#[cfg(test)]
#[path = "player_tests.rs"]
mod tests;
