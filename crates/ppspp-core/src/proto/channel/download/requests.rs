//! REQUEST: what we ask the peer for, as the picker chooses within the
//! request window and the download limit (RFC 7574 §3.7, §8.8).

use super::super::Scope;
use super::Download;

use crate::pick::{PeerLink, PickView};
use crate::proto::swarm::Swarm;
use crate::proto::Ctx;
use crate::time::Instant;
use crate::wire::{ChunkSpec, DatagramWriter, Message};

/// Chunks requested per REQUEST round at most, whatever the window says.
const MAX_PICK: u64 = 256;
/// How long a channel waits after a pick that found nothing, when nothing
/// says a new pick could find more (see `Download::pick_idle_until`); a
/// safety net, not a poll.
const PICK_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

impl Download {
    /// Writes REQUESTs for what the picker chooses, unless the peer chokes
    /// us (`choked`).
    pub fn poll_requests(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        sc: &mut Scope<'_>,
        choked: bool,
        w: &mut DatagramWriter<'_>,
    ) {
        if swarm.live.is_some() {
            self.follow_live(swarm);
        }
        if choked
            || swarm.is_complete()
            || self.remote_has.is_empty()
            || ctx.now < self.picks_paused_until
        {
            return;
        }
        let cs = u64::from(swarm.chunk_size.bytes());
        let window = self.req_cc.window() / sc.peer.mss;
        let have_room = window
            .max(1)
            .min(ctx.config.max_requests_per_peer)
            .saturating_sub(self.outstanding.count())
            .min(MAX_PICK);
        // Ask for no more than the download limit pays for now: the
        // chunks come about a round trip later, at most at the limit.
        let affordable = match ctx.download.as_deref_mut() {
            Some(bucket) => have_room.min(bucket.available(ctx.now) / cs),
            None => have_room,
        };
        if affordable == 0 && have_room > 0 && ctx.download.is_some() {
            sc.out.download_blocked = Some(cs);
        }
        // Pick in batches (a quarter window at a time), and not again soon
        // after a pick that found nothing.
        let batch = (window / 4).clamp(1, 16);
        let starving = self.outstanding.count() == 0;
        let idle = ctx.now < self.pick_idle_until && swarm.releases == self.releases_seen;
        if affordable == 0 || (affordable < batch && !starving) || idle {
            return;
        }
        let mut picked = Vec::new();
        if self.releases_seen != swarm.releases {
            // Given-back chunks may lie in blocks marked dry.
            self.dry.forget();
            self.releases_seen = swarm.releases;
        }
        // Not a tentative count whose height no chunk proved: it may be a
        // forged 2^28 (see `Swarm::counted_chunk_count`).
        let chunk_count = swarm.counted_chunk_count();
        let link = PeerLink {
            fast: self.fast,
            fast_count: swarm.fast_count,
            window,
            loss: self.link.loss_ratio(),
            answer_time: self.req_rtt.srtt().unwrap_or(self.request_timeout()),
            prebuffering: swarm.player_waiting,
        };
        let view = PickView {
            now: ctx.now,
            chunk_count,
            have: &swarm.have,
            requested: &swarm.requested,
            requested_from_peer: self.outstanding.chunks(),
            peer_has: &self.remote_has,
            late: &swarm.doubled,
            availability: &swarm.availability,
            peer_counted: !self.remote_complete,
            playhead: swarm.pick_start().max(self.live_pick_floor()),
            live: swarm.live.is_some(),
            dry: chunk_count.map(|n| self.dry.view(n)),
            link,
        };
        swarm.picker.pick(&view, affordable, ctx.rng, &mut picked);
        // While the player prebuffers no chunk has a play time: playback
        // starts only when the whole prebuffer is in. Deadlines counted
        // from "plays now" were floored at one mean request round trip, so
        // a batch's later chunks went late and were asked again elsewhere,
        // adding load when the flash crowd makes it highest (E1, 96
        // viewers, seeds 1-4: mean startup 8.4 s with them, 7.0 s
        // without). A silent peer still loses its requests to the request
        // timeout.
        let deadlines: Vec<Option<Instant>> = picked
            .iter()
            .map(|&r| {
                if swarm.player_waiting {
                    None
                } else {
                    swarm.picker.deadline(&view, r)
                }
            })
            .collect();
        self.pick_idle_until = if picked.is_empty() {
            ctx.now + PICK_IDLE
        } else {
            Instant::ZERO
        };
        for (range, deadline) in picked.into_iter().zip(deadlines) {
            let Some(range) = swarm.clamp(range) else {
                continue;
            };
            let specs: Vec<ChunkSpec> = sc.specs_for(swarm, range).collect();
            if specs.is_empty() || w.remaining() < specs.len() * sc.spec_len() {
                break;
            }
            for spec in specs {
                // Room was checked above.
                let _ = w.push(&Message::Request(spec));
            }
            self.outstanding.add(range, ctx.now, deadline);
            // Per chunk range at trace level, as "chunk verified" is
            // (`bench/live_hops.py` splits a hop's time with them).
            tracing::trace!(first = range.first().0, last = range.last().0, to = %sc.peer.addr, "chunks requested");
            if !swarm.requested.is_empty_range(range) {
                // End game: asked from two peers, so whichever answers
                // second must hear CANCEL.
                swarm.doubled.set(range);
            }
            swarm.requested.set(range);
            swarm.availability.mark_taken(range);
            // The request window counts a chunk as one MSS, so that its
            // flight and its window are in the same unit.
            let unit = sc.peer.mss;
            self.req_cc
                .on_sent(ctx.now, range.len() * unit, self.outstanding.count() * unit);
            if let Some(bucket) = ctx.download.as_deref_mut() {
                bucket.take_saturating(ctx.now, range.len() * cs);
            }
        }
    }
}
