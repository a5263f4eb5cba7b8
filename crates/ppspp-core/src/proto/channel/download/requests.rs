//! REQUEST: what we ask the peer for, as the picker chooses within the
//! request window and the download limit (RFC 7574 §3.7, §8.8).

use crate::pick::{PeerLink, PickView};
use crate::proto::channel::Channel;
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

impl Channel {
    pub(in crate::proto::channel) fn push_requests(
        &mut self,
        swarm: &mut Swarm,
        ctx: &mut Ctx<'_>,
        w: &mut DatagramWriter<'_>,
    ) {
        if self.choke.choked_by_remote()
            || swarm.is_complete()
            || self.down.remote_has.is_empty()
            || ctx.now < self.down.picks_paused_until
        {
            return;
        }
        let cs = u64::from(swarm.chunk_size.bytes());
        let window = self.down.req_cc.window() / self.mss;
        let have_room = window
            .max(1)
            .min(ctx.config.max_requests_per_peer)
            .saturating_sub(self.down.outstanding.count())
            .min(MAX_PICK);
        // Ask for no more than the download limit pays for now: the
        // chunks come about a round trip later, at most at the limit.
        let affordable = match ctx.download.as_deref_mut() {
            Some(bucket) => have_room.min(bucket.available(ctx.now) / cs),
            None => have_room,
        };
        if affordable == 0 && have_room > 0 && ctx.download.is_some() {
            self.out.download_blocked = Some(cs);
        }
        // Pick in batches (a quarter window at a time), and not again soon
        // after a pick that found nothing.
        let batch = (window / 4).clamp(1, 16);
        let starving = self.down.outstanding.count() == 0;
        let idle = ctx.now < self.down.pick_idle_until && swarm.releases == self.down.releases_seen;
        if affordable == 0 || (affordable < batch && !starving) || idle {
            return;
        }
        let mut picked = Vec::new();
        if self.down.releases_seen != swarm.releases {
            // Given-back chunks may lie in blocks marked dry.
            self.down.dry.forget();
            self.down.releases_seen = swarm.releases;
        }
        // Not a tentative count whose height no chunk proved: it may be a
        // forged 2^28 (see `Swarm::counted_chunk_count`).
        let chunk_count = swarm.counted_chunk_count();
        let link = PeerLink {
            fast: self.down.fast,
            fast_count: swarm.fast_count,
            window,
            loss: self.down.link.loss_ratio(),
            answer_time: self
                .down
                .req_rtt
                .srtt()
                .unwrap_or(self.down.request_timeout()),
            prebuffering: swarm.player_waiting,
        };
        let view = PickView {
            now: ctx.now,
            chunk_count,
            have: &swarm.have,
            requested: &swarm.requested,
            requested_from_peer: self.down.outstanding.chunks(),
            peer_has: &self.down.remote_has,
            late: &swarm.doubled,
            availability: &swarm.availability,
            peer_counted: !self.down.remote_complete,
            playhead: swarm.playhead,
            dry: chunk_count.map(|n| self.down.dry.view(n)),
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
        self.down.pick_idle_until = if picked.is_empty() {
            ctx.now + PICK_IDLE
        } else {
            Instant::ZERO
        };
        for (range, deadline) in picked.into_iter().zip(deadlines) {
            let Some(range) = swarm.clamp(range) else {
                continue;
            };
            let specs: Vec<ChunkSpec> = self.specs_for(swarm, range).collect();
            if specs.is_empty()
                || w.remaining() < specs.len() * (1 + self.hs.params().addressing.spec_len())
            {
                break;
            }
            for spec in specs {
                // Room was checked above.
                let _ = w.push(&Message::Request(spec));
            }
            self.down.outstanding.add(range, ctx.now, deadline);
            if !swarm.requested.is_empty_range(range) {
                // End game: asked from two peers, so whichever answers
                // second must hear CANCEL.
                swarm.doubled.set(range);
            }
            swarm.requested.set(range);
            swarm.availability.mark_taken(range);
            // The request window counts a chunk as one MSS, so that its
            // flight and its window are in the same unit.
            let unit = self.mss;
            self.down.req_cc.on_sent(
                ctx.now,
                range.len() * unit,
                self.down.outstanding.count() * unit,
            );
            if let Some(bucket) = ctx.download.as_deref_mut() {
                bucket.take_saturating(ctx.now, range.len() * cs);
            }
        }
    }
}
