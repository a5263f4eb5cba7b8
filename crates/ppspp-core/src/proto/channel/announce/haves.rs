//! HAVE and PEX: what we tell the peer we have (RFC 7574 §3.2: a first
//! sweep over what we had when the channel opened, then each chunk as it
//! verifies), and the addresses of other peers (§3.10).

use super::super::Scope;
use super::{spread, Announce};
use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::proto::pex::sample_shareable;
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::time::Instant;
use crate::wire::{DatagramWriter, Message};

/// Most chunks of the have-log sorted into runs at once (a control datagram
/// holds fewer HAVEs than this).
const HAVE_BLOCK: usize = 192;

impl Announce {
    /// PEX_REQ once, if we look for peers, and the answer to the peer's
    /// PEX_REQ (RFC 7574 §3.10).
    pub fn poll_pex(
        &mut self,
        swarm: &Swarm,
        ctx: &mut Ctx<'_>,
        sc: &Scope<'_>,
        w: &mut DatagramWriter<'_>,
    ) {
        if !self.pex_requested && ctx.config.pex_auto_connect && w.push(&Message::PexReq).is_ok() {
            self.pex_requested = true;
        }
        if self.pex_reply_due {
            self.pex_reply_due = false;
            let n = ctx.config.pex_max_addresses;
            for addr in sample_shareable(&swarm.peers, sc.peer.addr, n, ctx.rng) {
                let m = match addr {
                    std::net::SocketAddr::V4(a) => Message::PexResV4(a),
                    std::net::SocketAddr::V6(a) => Message::PexResV6(a),
                };
                if w.push(&m).is_err() {
                    break;
                }
            }
        }
    }

    /// HAVE for what we have: first a sweep over what we had when the
    /// channel opened, then each chunk as it verifies. Never to a peer that
    /// has everything (RFC 7574 §3.2: it does not need them).
    /// `remote_has` is what the peer has; `remote_complete`, whether it
    /// has everything.
    pub fn poll_haves(
        &mut self,
        now: Instant,
        swarm: &Swarm,
        sc: &Scope<'_>,
        (remote_has, remote_complete): (&Binmap, bool),
        w: &mut DatagramWriter<'_>,
    ) {
        if remote_complete {
            self.have_sweep = None;
            self.have_cursor = swarm.have_log.len();
            self.held.clear();
            return;
        }
        // A live swarm's HAVEs go with the newest munro's hash and
        // signature while the peer holds no chunk under it: a joining
        // libswift peer hooks in on that munro before it asks for anything
        // (libswift's source does the same, `docs/libswift-live.md`), and
        // ours confirms its hook-in with it.
        // Looked up before the first HAVE only, not on every poll.
        let mut munro_due = true;
        let mut first_have = |w: &mut DatagramWriter<'_>| {
            if !std::mem::take(&mut munro_due) {
                return true;
            }
            match newest_unheld_munro(swarm, remote_has) {
                Some(m) => super::super::upload::push_signed_munro(swarm, sc, m, w),
                None => true,
            }
        };
        if let Some(from) = self.have_sweep {
            let rest = ChunkRange::new(from, crate::chunk::MAX_CHUNK_INDEX);
            let runs: Vec<ChunkRange> = rest
                .map(|r| swarm.have.filled_runs_in(r).take(64).collect())
                .unwrap_or_default();
            for r in &runs {
                if !first_have(w) || !push_have_range(swarm, sc, w, *r) {
                    return;
                }
                self.have_sweep = Some(r.last().0 + 1);
            }
            if runs.len() < 64 {
                self.have_sweep = None;
            }
            return;
        }
        // A live source's chunks held back from this peer (`spread.rs`),
        // once due, less what left the window or the peer has meanwhile.
        while let Some(&(due, range)) = self.held.front() {
            if due > now {
                break;
            }
            let news: Vec<ChunkRange> = swarm
                .have
                .filled_runs_in(range)
                .filter(|r| !remote_has.is_filled(*r))
                .collect();
            for r in news {
                if !first_have(w) || !push_have_range(swarm, sc, w, r) {
                    return;
                }
            }
            self.held.pop_front();
        }
        // New chunks, a block of the log at a time, sorted into runs: chunks
        // arrive from several peers at once and rarest-first scatters them,
        // so a HAVE per logged chunk was most of the control bytes a viewer
        // uploads (E1, 176 viewers: 105 M HAVEs, a quarter of all bytes
        // sent). With chunk ranges, two new chunks with only chunks we had
        // between them go in one HAVE (announcing those again is harmless;
        // a bin spec would cost a message per bin of the gap). A run the
        // peer has entirely is left out: it will not ask us for it (as with
        // a complete peer, RFC 7574 §3.2). A block never holds more chunks
        // than the datagram has room for HAVEs of single chunks, so it
        // always fits: a run holding n new chunks takes at most n specs.
        let per_spec = sc.spec_len();
        let ranges = sc.params.addressing.is_chunk_ranges();
        let mut block = [ChunkIndex(0); HAVE_BLOCK];
        // A live swarm's log forgets its oldest chunks: a peer that far
        // behind no longer needs them (they left the discard window).
        self.have_cursor = swarm.have_log.resume(self.have_cursor);
        while self.have_cursor < swarm.have_log.len() {
            let n = (w.remaining() / per_spec)
                .min(HAVE_BLOCK)
                .min(swarm.have_log.len() - self.have_cursor);
            if n == 0 {
                return;
            }
            let block = &mut block[..n];
            for (slot, c) in block.iter_mut().zip(swarm.have_log.since(self.have_cursor)) {
                *slot = c;
            }
            block.sort_unstable();
            let reach = |c: ChunkIndex| match ranges {
                true => swarm.have.first_empty_from(c).map_or(u64::MAX, |e| e.0),
                false => c.0,
            };
            for range in runs(block, reach) {
                if remote_has.is_filled(range) {
                    continue;
                }
                if let Some(spread) = self.spread {
                    // Reaching back would announce the held chunks below.
                    let (first, later) = spread.split(range);
                    for r in later {
                        if !self.hold(now + spread::HOLD, r)
                            && (!first_have(w) || !push_have_range(swarm, sc, w, r))
                        {
                            return;
                        }
                    }
                    for r in first {
                        if !first_have(w) || !push_have_range(swarm, sc, w, r) {
                            return;
                        }
                    }
                    continue;
                }
                let range = match swarm.live.is_some() && ranges {
                    true => reach_back(swarm, remote_has, range),
                    false => range,
                };
                if !first_have(w) || !push_have_range(swarm, sc, w, range) {
                    return;
                }
            }
            self.have_cursor += n;
        }
    }
}

/// A live swarm's HAVE for `range`, reaching back over the chunks we hold
/// right below it that the peer lacks (down to the newest chunk it holds,
/// and not below our floor). A HAVE is sent once and never acknowledged
/// (RFC 7574 §3.2), so one lost with its datagram left those chunks
/// unannounced to the peer for good: a receiver cut off for two seconds
/// came back to see only the chunks made after, and let the window take
/// the rest (`proto_live_window.rs`). With chunk ranges the wider HAVE
/// costs nothing more; a peer that heard everything sees no change.
fn reach_back(swarm: &Swarm, remote_has: &Binmap, range: ChunkRange) -> ChunkRange {
    let Some(below) = range.first().0.checked_sub(1) else {
        return range;
    };
    let lo = remote_has
        .last_filled_to(ChunkIndex(below))
        .map_or(0, |c| c.0 + 1)
        .max(swarm.live_floor.map_or(0, |f| f.0));
    let ours = ChunkRange::new(lo, below).and_then(|r| swarm.have.filled_runs_in(r).last());
    match ours {
        Some(run) if run.last().0 == below => {
            ChunkRange::new(run.first(), range.last()).unwrap_or(range)
        }
        _ => range,
    }
}

/// Munros back from the newest within which a peer holding a chunk needs
/// no signed munro with our HAVEs: it follows the stream, and DATA bring
/// it each munro's signature (RFC 7574 §6.1.2.3); a peer further behind
/// (a cut-off one) hears the edge from the HAVE and hooks in again near
/// it (`live_window.rs`). Chosen by a scan of continuity (mean over
/// viewers, then over seeds 1-4; 1 is the rule before, a signature while
/// the peer held nothing under the newest munro):
///
/// | munros | `live-small` | `live-500`'s links, 40 viewers, 60 s |
/// |---|---|---|
/// | 1 | 0.993 | 0.791 |
/// | 2 | 0.995 | 0.921 |
/// | 8 | 0.994 | 0.916 |
/// | 32 | 0.998 | 0.928 |
/// | 1000 | — | 0.917 |
///
/// Anything from 2 on does about as well (single seeds swing by 0.2);
/// 32 is best on both, 8 s of a 1 Mbit/s stream in 1 KiB chunks.
const FOLLOWING_MUNROS: u64 = 32;

/// The newest signed munro of a live swarm, to go with a HAVE: while the
/// peer holds no chunk under the newest [`FOLLOWING_MUNROS`] munros (a
/// joining libswift peer hooks in on it before it asks for anything, and
/// ours confirms its hook-in with it). Sent while the peer held no chunk
/// under the newest munro alone, as before, a signature went with nearly
/// every HAVE datagram to every neighbour: the peer was being told of
/// that munro's chunks just then. That was 3 % of all bytes in
/// `live-500`'s links at 40 viewers, three quarters of the signatures
/// sent.
fn newest_unheld_munro<'a>(
    swarm: &'a Swarm,
    remote_has: &Binmap,
) -> Option<&'a crate::live::SignedMunro> {
    let live = swarm.live.as_ref()?;
    if live.shape.params.method == crate::live::LiveMethod::SignAll {
        // A chunk's signature is of no use without the chunk.
        return None;
    }
    let m = swarm.integrity.live()?.newest()?;
    let range = m.bin.chunks()?;
    let recent = range
        .first()
        .0
        .saturating_sub((FOLLOWING_MUNROS - 1).saturating_mul(range.len()));
    let recent = ChunkRange::new(recent, range.last().0)?;
    remote_has.is_empty_range(recent).then_some(m)
}

/// Writes HAVE for `range` if all of it fits.
fn push_have_range(
    swarm: &Swarm,
    sc: &Scope<'_>,
    w: &mut DatagramWriter<'_>,
    range: ChunkRange,
) -> bool {
    // Counted first, then written: no allocation for the common case of
    // one spec.
    let n = sc.specs_for(swarm, range).count();
    if w.remaining() < n * sc.spec_len() {
        return false;
    }
    sc.specs_for(swarm, range)
        .all(|spec| w.push(&Message::Have(spec)).is_ok())
}

/// The runs that hold the chunks of `sorted` (ascending; repeats allowed).
/// `reach(x)` is the first chunk
/// from `x` on that a run cannot cover unless it is one of `sorted` (the
/// first chunk not had, or `x` itself when only consecutive chunks may
/// join): a run ending at `c` takes in the next chunk of `sorted` if it is
/// at most `reach(c + 1)`. A run covers everything up to its bound, so
/// `reach` is asked about once per run, and again only when a chunk at
/// the bound joins.
pub(in crate::proto::channel) fn runs<'a>(
    sorted: &'a [ChunkIndex],
    reach: impl Fn(ChunkIndex) -> u64 + 'a,
) -> impl Iterator<Item = ChunkRange> + 'a {
    let mut i = 0;
    std::iter::from_fn(move || {
        let first = *sorted.get(i)?;
        let mut last = first;
        let mut bound = reach(ChunkIndex(first.0 + 1));
        i += 1;
        while let Some(&c) = sorted.get(i) {
            if c.0 > bound {
                break;
            }
            if c > last {
                last = c;
                if c.0 >= bound {
                    bound = reach(ChunkIndex(c.0 + 1));
                }
            }
            i += 1;
        }
        ChunkRange::new(first, last)
    })
}

#[cfg(test)]
mod runs_tests {
    use super::runs;
    use crate::binmap::Binmap;
    use crate::chunk::{ChunkIndex, ChunkRange};

    fn of(chunks: &[u64], had: &Binmap) -> Vec<(u64, u64)> {
        let v: Vec<ChunkIndex> = chunks.iter().map(|&c| ChunkIndex(c)).collect();
        let reach = |c: ChunkIndex| had.first_empty_from(c).map_or(u64::MAX, |e| e.0);
        let out: Vec<ChunkRange> = runs(&v, reach).collect();
        // Every chunk is in a run, and runs are apart and in order.
        assert!(v.iter().all(|&c| out.iter().any(|r| r.contains(c))));
        assert!(out.windows(2).all(|w| w[0].last().0 + 1 < w[1].first().0));
        out.iter().map(|r| (r.first().0, r.last().0)).collect()
    }

    /// The chunks of `v` as had, the rest not.
    fn had(v: &[u64]) -> Binmap {
        let mut b = Binmap::new();
        for &c in v {
            b.set_chunk(ChunkIndex(c));
        }
        b
    }

    #[test]
    fn consecutive_chunks_make_one_run() {
        assert_eq!(of(&[], &had(&[])), vec![]);
        assert_eq!(of(&[7], &had(&[7])), vec![(7, 7)]);
        let v = [3, 4, 5, 9, 10, 12];
        assert_eq!(of(&v, &had(&v)), vec![(3, 5), (9, 10), (12, 12)]);
    }

    #[test]
    fn repeats_do_not_split_a_run() {
        let v = [1, 1, 2, 2, 3, 5, 5];
        assert_eq!(of(&v, &had(&v)), vec![(1, 3), (5, 5)]);
    }

    #[test]
    fn a_gap_of_chunks_had_is_bridged() {
        // New: 5, 9, 10, 12, 13. Had before: 6-8 and 11. Not had: 14 on.
        let new = [5, 9, 10, 12, 13];
        let h = had(&[5, 6, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(of(&new, &h), vec![(5, 13)]);
        // Only a gap wholly had is bridged: 3 is missing.
        let h = had(&[2, 4, 5]);
        assert_eq!(of(&[2, 4, 5], &h), vec![(2, 2), (4, 5)]);
    }

    #[test]
    fn only_consecutive_chunks_join_without_bridging() {
        let v = [5, 6, 8, 9, 9, 11];
        let out: Vec<(u64, u64)> = runs(&v.map(ChunkIndex), |c: ChunkIndex| c.0)
            .map(|r| (r.first().0, r.last().0))
            .collect();
        assert_eq!(out, vec![(5, 6), (8, 9), (11, 11)]);
    }
}
