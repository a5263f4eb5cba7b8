//! A channel as the rest of the protocol core sees it: small reads, and
//! the few inputs the endpoint, the choking policy (`proto/choke`) and the
//! fast-peer set (`proto/fast.rs`) give it. Nothing outside the channel
//! module sets a channel's fields.

use std::net::SocketAddr;

use super::{Channel, Offer, State};
use crate::binmap::Binmap;
use crate::proto::event::CloseReason;
use crate::proto::requests::Outstanding;
use crate::proto::swarm::Swarm;
use crate::proto::{Compat, SwarmHandle};
use crate::time::Instant;
use crate::wire::{ChannelId, SwarmParams};

/// What the endpoint, the choking policy and the fast-peer set read of a
/// channel, and the few inputs they give it. Nothing outside this module
/// sets a channel's fields.
impl Channel {
    /// Our channel id.
    pub fn local(&self) -> ChannelId {
        self.local
    }

    /// The peer's channel id (zero until it answered).
    pub fn remote(&self) -> ChannelId {
        self.remote
    }

    /// The peer's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer.addr
    }

    /// The swarm the channel belongs to.
    pub fn swarm(&self) -> SwarmHandle {
        self.peer.swarm
    }

    /// Where the handshake stands.
    pub fn state(&self) -> State {
        self.hs.state()
    }

    /// How the peer's datagrams are read.
    pub fn params(&self) -> SwarmParams {
        self.hs.params()
    }

    /// When the channel was opened.
    pub fn created(&self) -> Instant {
        self.hs.created()
    }

    /// Whether the channel is to end.
    pub fn is_closing(&self) -> bool {
        self.close.is_some()
    }

    /// Whether a closing HANDSHAKE still has to go out.
    pub fn close_notify(&self) -> bool {
        self.close_notify
    }

    /// Why the channel ends, taken once by the reaper.
    pub fn take_close_reason(&mut self) -> Option<CloseReason> {
        self.close.take()
    }

    /// Where the endpoint's schedule has the channel filed.
    pub fn filed(&self) -> Option<Instant> {
        self.filed
    }

    /// Where the endpoint's schedule has the channel filed; the schedule
    /// updates it (`Schedule::settle`).
    pub fn filed_mut(&mut self) -> &mut Option<Instant> {
        &mut self.filed
    }

    /// Whether the channel waits on its swarm's list for new chunks.
    pub fn awaits_haves(&self) -> bool {
        self.awaits_haves
    }

    /// Puts the channel on (or takes it off) its swarm's waiting list.
    pub fn set_awaits_haves(&mut self, waits: bool) {
        self.awaits_haves = waits;
    }

    /// The chunks we asked the peer for and wait for.
    pub fn outstanding(&self) -> &Outstanding {
        self.down.outstanding()
    }

    /// Forgets every outstanding request (the channel is removed) and
    /// returns their chunks, to be asked elsewhere.
    pub fn clear_outstanding(&mut self) -> Binmap {
        self.down.clear_outstanding()
    }

    /// The peer's chunks.
    pub fn remote_has(&self) -> &Binmap {
        self.down.remote_has()
    }

    /// Whether the peer has every chunk.
    pub fn remote_complete(&self) -> bool {
        self.down.remote_complete()
    }

    /// The chunk count the peer's peaks claimed.
    pub fn claimed(&self) -> Option<u64> {
        self.down.claimed()
    }

    /// Whether the swarm ranked the peer fast (`None`: no set).
    pub fn fast(&self) -> Option<bool> {
        self.down.fast()
    }

    /// The fast-peer set ranked the peer.
    pub fn set_fast(&mut self, fast: Option<bool>) {
        self.down.handle_fast(fast);
    }

    /// The peer's expected bandwidth for the fast-peer set, updating its
    /// link estimate's stability first (seed paper 000 eq. 1).
    pub fn poll_expected_bandwidth(&mut self) -> Option<f64> {
        self.down.poll_expected_bandwidth()
    }

    /// The next pick may find more than the last (the player's state
    /// changed): no pick pause.
    pub fn handle_pick_news(&mut self) {
        self.down.handle_pick_news();
    }

    /// Chunks queued for upload to the peer.
    pub fn queued_chunks(&self) -> u64 {
        self.up.queued_chunks()
    }

    /// Bytes of DATA in flight to the peer, and the queuing delay our
    /// upload's congestion controller measures on the way (`None` before
    /// its first delay sample, or for a controller that measures none).
    pub fn upload_path(&self) -> (u64, Option<std::time::Duration>) {
        self.up.path()
    }

    /// Whether we choke the peer.
    pub fn choking_remote(&self) -> bool {
        self.choke.choking_remote()
    }

    /// Sets the peer's place among a live source's unchoked peers, which
    /// hear of fresh chunks in turns (`announce/spread.rs`): its `rank` of
    /// `of`, hearing `share` of each segment first; `None` (or a rank that
    /// spreads nothing): every chunk at once.
    pub fn set_announce_spread(&mut self, place: Option<(usize, usize)>, share: f64) {
        let spread = place.and_then(|(rank, of)| super::announce::Spread::new(rank, of, share));
        self.ann.set_spread(spread);
    }

    /// Whether a choke change waits to be sent.
    pub fn choke_dirty(&self) -> bool {
        self.choke.dirty()
    }

    /// When we last choked or unchoked the peer.
    pub fn choke_changed(&self) -> Instant {
        self.choke.changed()
    }

    /// Whether the peer held a slot since it became interested.
    pub fn had_slot(&self) -> bool {
        self.choke.had_slot()
    }

    /// When the peer last requested something from us.
    pub fn requested_at(&self) -> Option<Instant> {
        self.choke.requested_at()
    }

    /// The peer let its slot go idle: it is a newcomer when it asks again.
    pub fn forget_slot(&mut self) {
        self.choke.handle_slot_forgotten();
    }

    /// The peer holds a slot if unchoked.
    pub fn note_slot(&mut self) {
        self.choke.handle_slot_held();
    }

    /// Chokes or unchokes the peer (RFC 7574 §3.9), marking the change to
    /// be sent. A choked peer's requests are dropped; it asks again once
    /// unchoked.
    pub fn set_choke(&mut self, choke: bool, now: Instant) {
        if self.choke.handle_set(choke, now) && choke {
            self.up.handle_void();
        }
    }

    /// (Responder) the peer's HANDSHAKE from `source` opened the channel
    /// with `offer`: our answer is due.
    pub fn handle_opening(&mut self, source: ChannelId, offer: &Offer, compat: Compat) {
        self.remote = source;
        self.hs.handle_opening(offer, compat);
        self.down.handle_peer_window(offer.window);
    }

    /// (Responder) the opening HANDSHAKE came again with `len` bytes: our
    /// answer was lost, and the HAVEs that rode on it; both are sent again
    /// (else a complete seeder, which announces nothing else, stays
    /// unknown).
    pub fn handle_retransmitted_opening(&mut self, len: usize) {
        if self.hs.handle_retransmission(len) {
            self.ann.handle_resweep();
        }
    }

    /// The swarm's chunk count is `n` now (learned, or changed): the
    /// peer's chunks are counted again in the fresh availability.
    pub fn handle_recount(&mut self, swarm: &mut Swarm, n: u64) {
        self.down.handle_recount(swarm, n);
    }

    /// The channel is gone: its peer's chunks leave the availability.
    pub fn forget_availability(&self, swarm: &mut Swarm) {
        self.down.forget_availability(swarm);
    }

    /// The peer's peaks claimed a size that what verified shows false
    /// (`PartialTree::refutes`): counted, and the channel closes (which
    /// bans the peer).
    pub fn handle_refuted(&mut self, swarm: &mut Swarm) {
        self.peer.stats.chunks_rejected += 1;
        swarm.stats.bad_peers += 1;
        swarm.peer_stats(self.peer.addr).chunks_rejected += 1;
        self.close(CloseReason::BadData, true);
    }
}
