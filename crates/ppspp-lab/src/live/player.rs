//! The live player model: what a viewer of a live stream sees.
//!
//! It waits for the hook-in (the core picks it, `live_window.rs`, RFC 7574
//! §6.1), then for a prebuffer of contiguous media from there, and plays at
//! the bitrate. When the next chunk is missing it stalls, and resumes once a
//! rebuffer's worth is there. Unlike video on demand (the core's
//! `ppspp_core::play::Player`) a live viewer cannot wait forever: when it
//! lags more than `max_lag` behind the newest chunk it has, or its position
//! left the discard window (§6.1.3, those chunks will never come), it skips
//! ahead to a prebuffer's distance behind that newest chunk, and the media
//! skipped is lost. With a catch-up rule ([`CatchUp`]) it plays faster
//! than real time while it holds more than a set buffer, as live players
//! do, so its lag shrinks to what delivery allows. Lag — how far the playhead is behind the source's
//! newest chunk, in media time — is sampled on a fixed grid of virtual
//! time, so every viewer's distribution weighs time alike.
//!
//! Sans-IO like the core: the driver hands in time, the chunks verified
//! and the hook-in, and asks when to look again.

use std::time::Duration;

use ppspp_core::play::StallSpan;
use ppspp_core::time::Instant;
use ppspp_core::{Binmap, ChunkIndex};

use super::MediaClock;

/// The most stalls kept one by one (more are still counted).
const MAX_LOGGED_STALLS: usize = 4096;

/// Every this many chunks (by index), a viewer records how long the chunk
/// took from the source to it ([`LivePlayback::delivery_ms`]): 16 gives
/// about 7.6 samples a second of a 1 Mbit/s stream of 1 KiB chunks, and
/// 10 minutes of 500 viewers keep 2.3 M samples (9 MB) instead of 37 M.
pub const DELIVERY_SAMPLE_EVERY: u64 = 16;

/// How a live player plays.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LivePlayerConfig {
    /// Chunks against media time.
    pub clock: MediaClock,
    /// Media buffered before playback starts.
    pub prebuffer: Duration,
    /// Media buffered before playback resumes after a stall.
    pub rebuffer: Duration,
    /// Lagging more than this behind the newest chunk it has, a stalled
    /// player skips ahead.
    pub max_lag: Duration,
    /// The discard window, in chunks.
    pub window_chunks: u64,
    /// Chunks in the stream, when it ends.
    pub end: Option<u64>,
    /// When the source began making chunk 0.
    pub stream_start: Instant,
    /// How often lag is sampled.
    pub sample_every: Duration,
    /// Playing faster while well buffered (`None`: always at 1×).
    pub catch_up: Option<CatchUp>,
}

/// Real time, in thousandths: the rate of playback without catch-up.
const REAL_TIME: u32 = 1000;

/// A live player's catch-up rule: play at `rate_permille`/1000 × real time
/// while more than `above` of media is buffered ahead of the playhead, at
/// 1× otherwise. A viewer's lag is set when it starts (hook-in age plus
/// startup) and playing at 1× never takes it back; live players shrink it
/// so: dash.js's low-latency modes vary the playback rate with latency
/// once the buffer is safe (its `liveCatchup` settings, LoL+'s hybrid
/// mode), Bitmovin's default catch-up rate is 1.2×, hls.js has
/// `maxLiveSyncPlaybackRate`. Gating on the buffer alone (not on a target
/// latency) needs nothing a real player does not know, and settles each
/// viewer at `above` plus its own delivery delay behind the edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatchUp {
    /// Playback rate while catching up, thousandths of real time (> 1000).
    pub rate_permille: u32,
    /// Buffer ahead of the playhead above which it catches up.
    pub above: Duration,
}

/// What the player is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LiveState {
    /// Not hooked in yet.
    Joining,
    /// Waiting for the first prebuffer.
    Prebuffering,
    /// Consuming chunks at the bitrate.
    Playing,
    /// The next chunk was missing: waiting for the rebuffer.
    Stalled,
    /// Played the last chunk of a stream that ended.
    Ended,
}

/// What a live viewer experienced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LivePlayback {
    /// The chunk it hooked in at.
    pub hook_in: Option<u64>,
    /// From joining to the first chunk played.
    pub startup: Option<Duration>,
    /// Times playback stopped at a missing chunk.
    pub stalls: u32,
    /// Time stalled, a stall still going on included.
    pub stall_time: Duration,
    /// Chunks played.
    pub played: u64,
    /// Times it skipped ahead.
    pub skips: u32,
    /// Chunks skipped over (media lost).
    pub skipped: u64,
    /// Lag samples, milliseconds, ascending.
    pub lags_ms: Vec<u32>,
    /// When it played the stream's last chunk.
    pub ended: Option<Instant>,
    /// Delivery delays, milliseconds, ascending: from the source making a
    /// chunk to this viewer verifying it, for the chunks whose index is a
    /// multiple of [`DELIVERY_SAMPLE_EVERY`]. It adds up what every hop
    /// costs — the wait for the munro's signature (RFC 7574 §6.1.2), the
    /// HAVE, the REQUEST, the queue at the sender, the link — which the
    /// lag hides behind the buffer.
    pub delivery_ms: Vec<u32>,
}

impl LivePlayback {
    /// Media time played ÷ (played + stalled + skipped), after startup;
    /// `None` before anything was due.
    pub fn continuity(&self, clock: MediaClock) -> Option<f64> {
        let played = self.played as f64 * clock.chunk_secs();
        let lost = self.stall_time.as_secs_f64() + self.skipped as f64 * clock.chunk_secs();
        (played + lost > 0.0).then(|| played / (played + lost))
    }
}

/// A live viewer's player (see the [module](self) documentation).
#[derive(Clone, Debug)]
pub struct LivePlayer {
    config: LivePlayerConfig,
    created: Instant,
    state: LiveState,
    /// Prebuffering or stalled: the chunk waited at; playing: the chunk
    /// playback last (re)started at.
    at: u64,
    /// Playing: when it (re)started at `at`; stalled: when the stall began.
    since: Instant,
    /// Playing: when playback reaches the first chunk missing.
    next_need: Option<Instant>,
    /// Playing: the first chunk missing at the last look; the chunks up to
    /// it were there then (the player holds them, whatever the window
    /// does to the endpoint's copy since).
    stop: u64,
    /// Playing: media time per real time since `since`, in thousandths.
    rate: u32,
    /// Playing: the chunk up to which `rate` holds (`stop` at real time).
    until: u64,
    next_sample: Option<Instant>,
    stall_log: Vec<StallSpan>,
    /// Stall time of the stalls that ended.
    stalled_us: u64,
    /// Chunks played in the segments that ended.
    played: u64,
    out: LivePlayback,
}

impl LivePlayer {
    /// A player joining at `now`.
    pub fn new(config: LivePlayerConfig, now: Instant) -> LivePlayer {
        LivePlayer {
            config,
            created: now,
            state: LiveState::Joining,
            at: 0,
            since: now,
            next_need: None,
            stop: 0,
            rate: REAL_TIME,
            until: 0,
            next_sample: None,
            stall_log: Vec::new(),
            stalled_us: 0,
            played: 0,
            out: LivePlayback::default(),
        }
    }

    /// `chunk` verified at `now`: samples its delivery delay (see
    /// [`LivePlayback::delivery_ms`]).
    pub fn on_verified(&mut self, chunk: u64, now: Instant) {
        if !chunk.is_multiple_of(DELIVERY_SAMPLE_EVERY) {
            return;
        }
        // Chunk k is made when the camera has its last byte
        // (`source.rs`).
        let made = self.config.stream_start
            + Duration::from_micros(self.config.clock.span_us(chunk.saturating_add(1)));
        let ms = micros(now.saturating_since(made)) / 1000;
        self.out
            .delivery_ms
            .push(u32::try_from(ms).unwrap_or(u32::MAX));
    }

    /// What the player is doing.
    pub fn state(&self) -> LiveState {
        self.state
    }

    /// The chunk playback needs next at `now` (`None` before the hook-in).
    pub fn playhead(&self, now: Instant) -> Option<ChunkIndex> {
        match self.state {
            LiveState::Joining => None,
            LiveState::Playing => Some(ChunkIndex(self.at + self.played_since(now))),
            _ => Some(ChunkIndex(self.at)),
        }
    }

    /// When to look again though no chunk arrives: when playback reaches
    /// the chunk it lacks.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.next_need
    }

    /// Each stall, when and where (the last one may go on).
    pub fn stall_log(&self) -> &[StallSpan] {
        &self.stall_log
    }

    fn played_since(&self, now: Instant) -> u64 {
        let us = ppspp_core::time::duration_micros(now.saturating_since(self.since));
        self.config.clock.chunks_in_us(media_us(us, self.rate))
    }

    /// Real time to play `chunks` at the present rate.
    fn play_time(&self, chunks: u64) -> Duration {
        let media = u128::from(self.config.clock.span_us(chunks));
        let us = (media * u128::from(REAL_TIME)).div_ceil(u128::from(self.rate));
        Duration::from_micros(u64::try_from(us).unwrap_or(u64::MAX))
    }

    /// The rate to play at with the chunks up to `stop` held, and the
    /// chunk up to which it holds ([`CatchUp`]).
    fn pace(&self, stop: u64) -> (u32, u64) {
        let Some(cu) = self.config.catch_up else {
            return (REAL_TIME, stop);
        };
        let keep = self.config.clock.chunks_for(cu.above);
        match stop.checked_sub(keep) {
            Some(until) if until > self.at && cu.rate_permille > REAL_TIME => {
                (cu.rate_permille, until)
            }
            _ => (REAL_TIME, stop),
        }
    }

    /// Moves the player to `now` given the chunks verified (`have`) and,
    /// once the core hooked in, where (`hook_in`).
    pub fn advance(&mut self, now: Instant, have: &Binmap, hook_in: Option<ChunkIndex>) {
        if self.state == LiveState::Joining {
            let Some(h) = hook_in else { return };
            self.at = h.0;
            self.out.hook_in = Some(h.0);
            self.state = LiveState::Prebuffering;
        }
        loop {
            match self.state {
                LiveState::Joining | LiveState::Ended => return,
                LiveState::Prebuffering | LiveState::Stalled => {
                    self.sample_to(now);
                    if self.config.end.is_some_and(|n| self.at >= n) {
                        self.finish(now);
                        return;
                    }
                    self.maybe_skip(have);
                    let buffer = match self.state {
                        LiveState::Prebuffering => self.config.prebuffer,
                        _ => self.config.rebuffer,
                    };
                    if !self.buffered(have, buffer) {
                        self.next_need = None;
                        return;
                    }
                    if self.state == LiveState::Stalled {
                        self.stalled_us += micros(now - self.since);
                        if let Some(last) = self.stall_log.last_mut().filter(|s| s.end.is_none()) {
                            last.end = Some(now);
                        }
                    } else {
                        self.out.startup = Some(now - self.created);
                        self.next_sample = Some(now);
                    }
                    self.state = LiveState::Playing;
                    self.since = now;
                    self.stop = self.at;
                    self.until = self.at;
                    self.rate = REAL_TIME;
                }
                LiveState::Playing => {
                    // Lag samples up to here are of the segment playing.
                    self.sample_to(self.next_need.map_or(now, |t| t.min(now)));
                    self.rebase(now);
                    let missing = first_missing(have, self.at).max(self.stop);
                    let stop = self.config.end.map_or(missing, |n| missing.min(n));
                    self.stop = stop;
                    // A change of rate takes effect from the start of the
                    // chunk playing (`since`): a fraction of a chunk's time.
                    (self.rate, self.until) = self.pace(stop);
                    let until = self.until;
                    let reach = self.since + self.play_time(until - self.at);
                    if reach > now {
                        self.sample_to(now);
                        self.next_need = Some(reach);
                        return;
                    }
                    self.sample_to(reach);
                    self.next_need = None;
                    self.played += until - self.at;
                    self.at = until;
                    self.since = reach;
                    // Down to the buffer kept (or out of media): real time.
                    self.rate = REAL_TIME;
                    if until < stop {
                        continue;
                    }
                    if self.config.end == Some(stop) {
                        self.finish(reach);
                        return;
                    }
                    self.out.stalls += 1;
                    if self.stall_log.len() < MAX_LOGGED_STALLS {
                        self.stall_log.push(StallSpan {
                            chunk: stop,
                            start: reach,
                            end: None,
                        });
                    }
                    self.state = LiveState::Stalled;
                }
            }
        }
    }

    /// Moves the playing position to the chunk playing at `now` (no
    /// further than the chunks known to be there, nor than where the
    /// present rate ends): the chunks behind it were played, whatever
    /// became of them in the endpoint since.
    fn rebase(&mut self, now: Instant) {
        let ahead = self
            .played_since(now)
            .min(self.until.saturating_sub(self.at));
        if ahead == 0 {
            return;
        }
        self.since += self.play_time(ahead);
        self.played += ahead;
        self.at += ahead;
    }

    /// Skips ahead when the position left the window (it will never come)
    /// or, stalled, when it lags more than `max_lag` behind the newest
    /// chunk it has: to a prebuffer's distance behind that chunk.
    fn maybe_skip(&mut self, have: &Binmap) {
        let Some(newest) = have.last_filled_to(ChunkIndex(u64::MAX >> 2)) else {
            return;
        };
        let edge = newest.0 + 1;
        let c = self.config.clock;
        let floor = edge.saturating_sub(self.config.window_chunks);
        let behind = edge.saturating_sub(self.at);
        let too_far =
            self.state == LiveState::Stalled && behind > c.chunks_for(self.config.max_lag);
        if self.at >= floor && !too_far {
            return;
        }
        let target = edge
            .saturating_sub(c.chunks_for(self.config.prebuffer))
            .max(floor);
        if target <= self.at {
            return;
        }
        // Before playback started, moving on is part of the startup.
        if self.out.startup.is_some() {
            self.out.skips += 1;
            self.out.skipped += target - self.at;
        }
        self.at = target;
    }

    /// Whether `buffer` of media from the position is there (or what is
    /// left of a stream that ended).
    fn buffered(&self, have: &Binmap, buffer: Duration) -> bool {
        let want = self.at.saturating_add(self.config.clock.chunks_for(buffer));
        let want = self.config.end.map_or(want, |n| want.min(n));
        first_missing(have, self.at) >= want
    }

    fn finish(&mut self, at: Instant) {
        self.state = LiveState::Ended;
        self.since = at;
        self.next_need = None;
        self.next_sample = None;
        self.out.ended = Some(at);
    }

    /// The live edge's media time at `t`: what the source has made.
    fn edge_us(&self, t: Instant) -> u64 {
        let made = micros(t.saturating_since(self.config.stream_start));
        let c = self.config.clock;
        self.config.end.map_or(made, |n| made.min(c.span_us(n)))
    }

    /// Records the lag at every sampling instant up to `t`, the player in
    /// its present state; sampling stops when the stream ends.
    fn sample_to(&mut self, t: Instant) {
        let c = self.config.clock;
        let stream_end = self
            .config
            .end
            .map(|n| self.config.stream_start + Duration::from_micros(c.span_us(n)));
        while let Some(s) = self.next_sample.filter(|s| *s <= t) {
            if stream_end.is_some_and(|e| s >= e) {
                self.next_sample = None;
                return;
            }
            let mut pos = c.span_us(self.at);
            if self.state == LiveState::Playing {
                pos += media_us(micros(s.saturating_since(self.since)), self.rate);
            }
            let lag_us = self.edge_us(s).saturating_sub(pos);
            self.out
                .lags_ms
                .push(u32::try_from(lag_us / 1000).unwrap_or(u32::MAX));
            self.next_sample = Some(s + self.config.sample_every.max(Duration::from_millis(1)));
        }
    }

    /// What the viewer experienced up to `now` (after [`Self::advance`]).
    pub fn playback(&self, now: Instant) -> LivePlayback {
        let mut out = self.out.clone();
        out.played = self.played;
        out.stall_time = Duration::from_micros(self.stalled_us);
        match self.state {
            LiveState::Playing => out.played += self.played_since(now),
            LiveState::Stalled => out.stall_time += now.saturating_since(self.since),
            _ => {}
        }
        out.lags_ms.sort_unstable();
        out.delivery_ms.sort_unstable();
        out
    }
}

/// The first chunk at or after `from` that `have` lacks.
fn first_missing(have: &Binmap, from: u64) -> u64 {
    have.first_empty_from(ChunkIndex(from))
        .map_or(u64::MAX, |c| c.0)
}

/// Media time played in `real_us` at `rate` thousandths of real time.
fn media_us(real_us: u64, rate: u32) -> u64 {
    let us = u128::from(real_us) * u128::from(rate) / u128::from(REAL_TIME);
    u64::try_from(us).unwrap_or(u64::MAX)
}

fn micros(d: Duration) -> u64 {
    ppspp_core::time::duration_micros(d)
}

#[cfg(test)]
#[path = "player_tests.rs"]
mod tests;
