//! ACK: what we owe the peer for the chunks it sent (RFC 7574 §3.6, §8.7),
//! each ACK repeating the run before it so that a lost ACK costs the
//! sender nothing.

use super::super::Scope;
use super::Download;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::proto::swarm::Swarm;
use crate::proto::EndpointConfig;
use crate::time::Instant;
use crate::wire::{DatagramWriter, DelaySample, Message};

/// ACKs written into a datagram and not yet taken as sent: the datagram
/// may still be dropped if nothing else goes with them and they are not
/// due (`Download::acks_due`).
#[must_use]
#[derive(Clone, Copy, Debug, Default)]
pub struct AcksWritten {
    /// Entries of the ACK queue written.
    count: usize,
    /// The run the last of them extends (`reack`).
    run: Option<ChunkRange>,
}

impl AcksWritten {
    /// Whether any ACK was written.
    pub fn any(&self) -> bool {
        self.count > 0
    }
}

impl Download {
    /// Writes the ACKs owed and takes them as sent.
    #[cfg(test)]
    pub fn poll_acks(&mut self, swarm: &Swarm, sc: &Scope<'_>, w: &mut DatagramWriter<'_>) {
        let written = self.write_acks(swarm, sc, w);
        self.commit_acks(written);
    }

    /// Writes the ACKs owed, without taking them as sent: see
    /// [`Download::commit_acks`].
    pub fn write_acks(
        &self,
        swarm: &Swarm,
        sc: &Scope<'_>,
        w: &mut DatagramWriter<'_>,
    ) -> AcksWritten {
        let mut done = AcksWritten {
            count: 0,
            run: self.ack_run,
        };
        let ranges = sc.params.addressing.is_chunk_ranges();
        'acks: for &(range, delay) in &self.acks {
            let (run, covered) = reack(done.run, range);
            // Bins would cost a message per bin of the repeated run: only
            // chunk ranges repeat it, at the cost of one.
            let acked = if ranges { covered } else { range };
            for spec in sc.specs_for(swarm, acked) {
                if w.push(&Message::Ack {
                    spec,
                    delay: DelaySample(delay),
                })
                .is_err()
                {
                    break 'acks;
                }
            }
            done.run = Some(run);
            done.count += 1;
        }
        done
    }

    /// The ACKs of [`Download::write_acks`] went out.
    pub fn commit_acks(&mut self, written: AcksWritten) {
        if written.count == 0 {
            return;
        }
        self.ack_run = written.run;
        self.acks.drain(..written.count);
        if self.acks.is_empty() {
            self.acks_since = None;
        }
    }

    /// Whether the ACKs owed must go now, in a datagram of their own if
    /// need be (`EndpointConfig::ack_every`): enough chunks wait, or no
    /// more DATA is asked of the peer (the sender may be waiting for them
    /// to send anything more, and no later chunk will come to take them),
    /// or the oldest has waited `ack_delay`.
    pub fn acks_due(&self, now: Instant, cfg: &EndpointConfig) -> bool {
        let Some(since) = self.acks_since else {
            return false;
        };
        // Each chunk queued is one chunk of a range in `acks` (a repeat
        // starts a range of its own), so their lengths count them.
        let waiting: u64 = self.acks.iter().map(|(r, _)| r.len()).sum();
        waiting >= cfg.ack_every.max(1)
            || self.outstanding.count() == 0
            || now >= since + cfg.ack_delay
    }

    /// When the ACKs owed are due at the latest.
    pub fn ack_deadline(&self, cfg: &EndpointConfig) -> Option<Instant> {
        self.acks_since.map(|since| since + cfg.ack_delay)
    }

    pub(super) fn queue_ack(&mut self, chunk: ChunkIndex, delay: i64, now: Instant) {
        self.acks_since.get_or_insert(now);
        if let Some(last) = self.acks.last_mut() {
            if last.0.last().0.checked_add(1) == Some(chunk.0) {
                if let Some(r) = ChunkRange::new(last.0.first(), chunk) {
                    *last = (r, delay);
                    return;
                }
            }
        }
        if let Some(r) = ChunkRange::single(chunk) {
            self.acks.push((r, delay));
        }
    }
}

/// How many chunks an ACK repeats of the run before it (chosen: 64, about
/// a round trip of DATA at a few Mbit/s over 1 KiB chunks).
pub(crate) const REACK_CHUNKS: u64 = 64;

/// An ACK for `range` after ACKs covering `run`: the run it extends, and
/// the chunks to acknowledge — `range` and up to [`REACK_CHUNKS`] of the
/// run right before it. An ACK lost on the way is thus repeated by the
/// next one, so the sender does not take its DATA for lost and halve its
/// window over a lost ACK (on a path that loses 2 % of its datagrams that
/// cut throughput to a quarter in E1). Acknowledging a chunk again is
/// harmless: an ACK only confirms receipt (RFC 7574 §8.7).
pub(crate) fn reack(run: Option<ChunkRange>, range: ChunkRange) -> (ChunkRange, ChunkRange) {
    let Some(run) = run else {
        return (range, range);
    };
    let touches = range.first() >= run.first() && range.first().0 <= run.last().0.saturating_add(1);
    if !touches {
        return (range, range);
    }
    let last = range.last().max(run.last());
    let merged = ChunkRange::new(run.first(), last).unwrap_or(range);
    let from = run
        .first()
        .0
        .max(range.first().0.saturating_sub(REACK_CHUNKS))
        .min(range.first().0);
    let covered = ChunkRange::new(from, range.last().0).unwrap_or(range);
    (merged, covered)
}

#[cfg(test)]
mod reack_tests {
    use super::{reack, REACK_CHUNKS};
    use crate::chunk::ChunkRange;

    fn r(a: u64, b: u64) -> ChunkRange {
        ChunkRange::new(a, b).unwrap()
    }

    #[test]
    fn an_ack_repeats_the_run_before_it() {
        // The first ACK covers only its own chunks.
        assert_eq!(reack(None, r(0, 1)), (r(0, 1), r(0, 1)));
        // The next one repeats them: had the first been lost, this one
        // acknowledges chunks 0-1 as well.
        assert_eq!(reack(Some(r(0, 1)), r(2, 2)), (r(0, 2), r(0, 2)));
        // Never more than REACK_CHUNKS back.
        let long = r(0, 999);
        let (run, covered) = reack(Some(long), r(1000, 1000));
        assert_eq!(run, r(0, 1000));
        assert_eq!(covered, r(1000 - REACK_CHUNKS, 1000));
    }

    #[test]
    fn a_gap_starts_a_new_run() {
        // Chunk 5 did not arrive (its DATA was lost): it must stay
        // unacknowledged, so the sender learns of the loss.
        assert_eq!(reack(Some(r(0, 4)), r(6, 7)), (r(6, 7), r(6, 7)));
        // An older chunk arriving late does not reach back into the run.
        assert_eq!(reack(Some(r(6, 7)), r(5, 5)), (r(5, 5), r(5, 5)));
    }
}
