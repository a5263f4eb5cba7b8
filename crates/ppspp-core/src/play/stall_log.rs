//! Each stall of a player, one by one: where playback stopped, when, and
//! for how long — the per-viewer totals ([`super::PlaybackStats`]) say how
//! much a viewer stalled, the log says when and where, to line up with
//! what the swarm did then (issue 23: which stalls are long, and why).

use crate::time::Instant;

/// The most stalls a log keeps; later ones are counted in the totals but
/// not logged, so a player that stalls for days holds bounded memory.
pub const MAX_LOGGED_STALLS: usize = 4096;

/// One stall.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StallSpan {
    /// The chunk playback stopped at: the first one missing.
    pub chunk: u64,
    /// When playback reached that chunk.
    pub start: Instant,
    /// When playback resumed (or the viewer seeked away); `None` while the
    /// stall goes on.
    pub end: Option<Instant>,
}

/// The stalls of one player, in order (at most [`MAX_LOGGED_STALLS`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StallLog {
    spans: Vec<StallSpan>,
}

impl StallLog {
    /// A stall began at `start`, waiting for `chunk`.
    pub(crate) fn begin(&mut self, chunk: u64, start: Instant) {
        if self.spans.len() < MAX_LOGGED_STALLS {
            self.spans.push(StallSpan {
                chunk,
                start,
                end: None,
            });
        }
    }

    /// The stall going on ended at `end`.
    pub(crate) fn end(&mut self, end: Instant) {
        if let Some(last) = self.spans.last_mut().filter(|s| s.end.is_none()) {
            last.end = Some(end);
        }
    }

    /// The stalls logged, oldest first.
    pub fn spans(&self) -> &[StallSpan] {
        &self.spans
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_is_open_until_it_ends_and_ends_once() {
        let mut log = StallLog::default();
        log.begin(7, Instant::from_micros(1_000));
        assert_eq!(log.spans()[0].end, None);
        log.end(Instant::from_micros(3_000));
        log.end(Instant::from_micros(9_000));
        assert_eq!(
            log.spans(),
            [StallSpan {
                chunk: 7,
                start: Instant::from_micros(1_000),
                end: Some(Instant::from_micros(3_000)),
            }]
        );
    }

    #[test]
    fn the_log_is_bounded() {
        let mut log = StallLog::default();
        for i in 0..MAX_LOGGED_STALLS as u64 + 10 {
            log.begin(i, Instant::from_micros(i));
            log.end(Instant::from_micros(i + 1));
        }
        assert_eq!(log.spans().len(), MAX_LOGGED_STALLS);
        assert_eq!(
            log.spans().last().unwrap().chunk,
            MAX_LOGGED_STALLS as u64 - 1
        );
    }
}
