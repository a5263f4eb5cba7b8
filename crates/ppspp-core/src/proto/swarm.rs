//! One swarm: the content's state shared by all its channels.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;

use super::channel::{check_options, our_options, Offer};
use super::checkpoint::{CheckpointError, CheckpointPolicy};
use super::chunk_log::ChunkLog;
use super::event::{PeerStats, SwarmStats};
use super::integrity::{Integrity, LiveIntegrity};
use super::IncompatibleOptions;
use crate::binmap::Binmap;
use crate::chunk::{ChunkIndex, ChunkRange, ChunkSize};
use crate::hash::{Hash, HashFunction};
use crate::live::{check_live_options, our_live_options};
use crate::live::{LiveInjector, LiveKeyError, LivePublicKey, LiveShape, LiveVerifier};
use crate::merkle::{MerkleTree, PartialTree, VerifyError};
use crate::pick::availability::Availability;
use crate::pick::fast_peers::FastPeers;
use crate::pick::Picker;
use crate::storage::{Snapshot, Storage};
use crate::time::Instant;
use crate::wire::ChannelId;
use crate::wire::{ChunkAddressing, DiscardWindow, HandshakeOptions};

/// What makes a swarm live (RFC 7574 §6.1): its id is the injector's
/// public key, and its handshake says how it is signed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveSwarm {
    /// The swarm id: the DNSSEC algorithm byte and public key (§12.1).
    pub id: Vec<u8>,
    /// Munro size, profile, algorithm, window, as the handshake says them.
    pub shape: LiveShape,
    /// A receiver hooks in this many munros before the newest one a peer
    /// announces (`live_window.rs`); libswift's 0 by default.
    pub hook_in_behind: u64,
}

/// Everything needed to start serving or fetching one piece of content.
pub struct SwarmSetup {
    /// The swarm id: the Merkle root. For a live swarm, which has none, a
    /// SHA-1 of its id ([`LiveSwarm::id`]): a stable name, nothing
    /// verifies against it.
    pub root: Hash,
    /// Set for a live swarm.
    pub live: Option<LiveSwarm>,
    /// The Merkle hash function.
    pub hash_function: HashFunction,
    /// Bytes per chunk.
    pub chunk_size: ChunkSize,
    /// The hash tree, complete or partial.
    pub integrity: Integrity,
    /// Chunks already verified and stored.
    pub have: Binmap,
    /// Where the content lives.
    pub storage: Box<dyn Storage>,
    /// How to choose chunks to request.
    pub picker: Box<dyn Picker>,
}

impl SwarmSetup {
    /// Seed complete content whose tree is `tree`.
    pub fn seed(tree: Arc<MerkleTree>, storage: Box<dyn Storage>, picker: Box<dyn Picker>) -> Self {
        let mut have = Binmap::new();
        if let Some(all) = ChunkRange::with_len(0u64, tree.chunk_count()) {
            have.set(all);
        }
        Self::download_with_tree(tree, have, storage, picker)
    }

    /// Download content known by its root; `chunk_count` when the metadata
    /// carries the content length (it pins the tree's size, RFC 7574 §5.6).
    pub fn download(
        root: Hash,
        hash_function: HashFunction,
        chunk_size: ChunkSize,
        chunk_count: Option<u64>,
        storage: Box<dyn Storage>,
        picker: Box<dyn Picker>,
    ) -> Result<Self, VerifyError> {
        let tree = match chunk_count {
            Some(n) => PartialTree::with_chunk_count(hash_function, root, chunk_size, n)?,
            None => PartialTree::new(hash_function, root, chunk_size)?,
        };
        Ok(Self::resume(tree, Binmap::new(), storage, picker))
    }

    /// Download content whose whole hash tree is known in advance (as with
    /// metadata that lists every hash; RFC 7574 §5 lets the tree come out
    /// of band). Chunks still verify against their leaves, peers still send
    /// INTEGRITY, but no per-download tree is kept: the lab's simulated
    /// peers share one tree per swarm this way.
    pub fn download_with_tree(
        tree: Arc<MerkleTree>,
        have: Binmap,
        storage: Box<dyn Storage>,
        picker: Box<dyn Picker>,
    ) -> Self {
        SwarmSetup {
            root: tree.root(),
            live: None,
            hash_function: tree.hash_function(),
            chunk_size: tree.chunk_size(),
            integrity: Integrity::Complete(tree),
            have,
            storage,
            picker,
        }
    }

    /// Continue a download from a restored tree and the chunks stored.
    pub fn resume(
        tree: PartialTree,
        have: Binmap,
        storage: Box<dyn Storage>,
        picker: Box<dyn Picker>,
    ) -> Self {
        SwarmSetup {
            root: tree.root(),
            live: None,
            hash_function: tree.hash_function(),
            chunk_size: tree.chunk_size(),
            integrity: Integrity::Partial(Box::new(tree)),
            have,
            storage,
            picker,
        }
    }
}

impl SwarmSetup {
    /// Inject a live stream: `injector` signs it, chunks of `chunk_size`
    /// are stored in `storage` (a [`crate::storage::LiveRing`] of the
    /// window) as the driver pushes them.
    pub fn live_source(
        injector: LiveInjector,
        shape: LiveShape,
        chunk_size: ChunkSize,
        storage: Box<dyn Storage>,
        picker: Box<dyn Picker>,
    ) -> Self {
        let id = injector.swarm_id();
        let integrity = Integrity::Live(Box::new(LiveIntegrity::Injector(injector)));
        Self::live(id, shape, chunk_size, integrity, storage, picker)
    }

    /// Receive the live stream of swarm id `id` (the injector's public
    /// key), keeping the chunks of `shape.window`; the munro size in
    /// `shape` is learned from the first munro unless `size_known`.
    pub fn live_receiver(
        id: &[u8],
        shape: LiveShape,
        size_known: bool,
        chunk_size: ChunkSize,
        storage: Box<dyn Storage>,
        picker: Box<dyn Picker>,
    ) -> Result<Self, LiveKeyError> {
        let key = LivePublicKey::from_swarm_id(id)?;
        let window = match shape.window {
            DiscardWindow::KeepAll => None,
            DiscardWindow::Window(w) => Some(w),
        };
        let verifier = LiveVerifier::new(key, shape.params, size_known, window);
        let integrity = Integrity::Live(Box::new(LiveIntegrity::Receiver(verifier)));
        Ok(Self::live(
            id.to_vec(),
            shape,
            chunk_size,
            integrity,
            storage,
            picker,
        ))
    }

    /// A live receiver hooks in `munros` munros before the newest one its
    /// first peer announces (a buffer for its player); no effect on other
    /// swarms.
    pub fn hook_in_behind(mut self, munros: u64) -> Self {
        if let Some(l) = &mut self.live {
            l.hook_in_behind = munros;
        }
        self
    }

    fn live(
        id: Vec<u8>,
        mut shape: LiveShape,
        chunk_size: ChunkSize,
        integrity: Integrity,
        storage: Box<dyn Storage>,
        picker: Box<dyn Picker>,
    ) -> Self {
        shape.params = shape.params.normalised();
        SwarmSetup {
            root: HashFunction::Sha1.digest(&id),
            hash_function: shape.params.hash_function,
            live: Some(LiveSwarm {
                id,
                shape,
                hook_in_behind: 0,
            }),
            chunk_size,
            integrity,
            have: Binmap::new(),
            storage,
            picker,
        }
    }
}

/// A swarm's shared state inside an endpoint.
pub(crate) struct Swarm {
    pub root: Hash,
    /// Set for a live swarm.
    pub live: Option<LiveSwarm>,
    pub hash_function: HashFunction,
    pub chunk_size: ChunkSize,
    pub integrity: Integrity,
    pub have: Binmap,
    /// Chunks verified since the swarm started, in order: channels announce
    /// (HAVE) and cancel from their own cursor into it, at a cost per new
    /// chunk rather than per set comparison.
    pub have_log: ChunkLog,
    pub storage: Box<dyn Storage>,
    pub picker: Box<dyn Picker>,
    pub availability: Availability,
    /// Chunks requested from some peer and not yet received.
    pub requested: Binmap,
    /// Chunks requested from more than one peer (end game), or released
    /// for lateness to be (`PickView::late`).
    pub doubled: Binmap,
    /// Verified chunks that another channel may still have outstanding:
    /// those that arrived unasked (a request that timed out was answered
    /// late) or were asked from two peers. Channels send CANCEL from their
    /// own cursor into it.
    pub cancel_log: ChunkLog,
    /// Times requested chunks were given back (see [`Swarm::retake`]): a
    /// channel whose pick found nothing picks again once this moved.
    pub releases: u64,
    /// Channels to wake when `have_log` grows: they had sent every HAVE.
    pub have_waiters: Vec<ChannelId>,
    /// `have_log` and `cancel_log` lengths the endpoint last acted on.
    pub have_log_seen: usize,
    pub cancel_log_seen: usize,
    /// Channels of this swarm.
    pub channels: BTreeSet<ChannelId>,
    /// Addresses of established peers (for PEX answers).
    pub peers: BTreeSet<SocketAddr>,
    /// Peers dropped for bad data: never connected to again.
    pub banned: BTreeSet<SocketAddr>,
    pub stats: SwarmStats,
    pub complete_reported: bool,
    pub content_len_reported: bool,
    pub checkpoint_dirty: bool,
    pub last_checkpoint: Instant,
    /// Payload bytes verified since the last checkpoint, and stored at it
    /// (for the progress trigger, [`CheckpointPolicy`]).
    pub verified_since_checkpoint: u64,
    pub stored_at_checkpoint: u64,
    pub closing: bool,
    /// When upload slots are next reconsidered.
    pub next_rechoke: Instant,
    /// Where playback needs chunks next, when something plays.
    pub playhead: Option<ChunkIndex>,
    /// A live receiver's first chunk to request and keep, once hooked in
    /// (`live_window.rs`).
    pub live_floor: Option<ChunkIndex>,
    /// Whether a trusted munro confirmed the hook-in: until then the floor
    /// is tentative and nothing is cut.
    pub live_hooked: bool,
    /// The fast-peer set's state (seed paper 000 eq. 2), for pickers that
    /// want one, and how many channels it holds.
    pub fast: FastPeers,
    pub fast_count: u64,
    /// The player waits for data (prebuffering or stalled): every peer
    /// may be asked for urgent data, fast or not.
    pub player_waiting: bool,
    /// When a channel was last closed to let a newcomer in
    /// (`endpoint/make_room.rs`).
    pub made_room_at: Option<Instant>,
}

impl Swarm {
    pub fn new(setup: SwarmSetup, now: Instant) -> Swarm {
        let mut availability = Availability::new();
        if let Some(n) = counted(&setup.integrity) {
            availability.set_chunk_count(n);
        }
        for run in setup.have.filled_runs() {
            availability.mark_taken(run);
        }
        // Resumed chunks count as stored at a checkpoint: they are in one.
        let stored = setup
            .have
            .count()
            .saturating_mul(setup.chunk_size.bytes_u64());
        Swarm {
            root: setup.root,
            live: setup.live,
            hash_function: setup.hash_function,
            chunk_size: setup.chunk_size,
            integrity: setup.integrity,
            have: setup.have,
            have_log: ChunkLog::new(),
            storage: setup.storage,
            picker: setup.picker,
            availability,
            requested: Binmap::new(),
            doubled: Binmap::new(),
            cancel_log: ChunkLog::new(),
            releases: 0,
            have_waiters: Vec::new(),
            have_log_seen: 0,
            cancel_log_seen: 0,
            channels: BTreeSet::new(),
            peers: BTreeSet::new(),
            banned: BTreeSet::new(),
            stats: SwarmStats::default(),
            complete_reported: false,
            content_len_reported: false,
            checkpoint_dirty: false,
            last_checkpoint: now,
            verified_since_checkpoint: 0,
            stored_at_checkpoint: stored,
            closing: false,
            next_rechoke: now,
            playhead: None,
            live_floor: None,
            live_hooked: false,
            fast: FastPeers::default(),
            fast_count: 0,
            player_waiting: false,
            made_room_at: None,
        }
    }

    /// The swarm id peers name in their HANDSHAKE: the Merkle root, or a
    /// live swarm's public key.
    pub fn id(&self) -> &[u8] {
        match &self.live {
            Some(l) => &l.id,
            None => self.root.as_bytes(),
        }
    }

    /// The options of a HANDSHAKE we send in this swarm: static or live
    /// (RFC 7574 §7); `with_id` when we initiate.
    pub fn handshake_options(
        &self,
        addressing: ChunkAddressing,
        extended: bool,
        with_id: bool,
    ) -> HandshakeOptions<'_> {
        match &self.live {
            Some(l) => our_live_options(with_id.then_some(&l.id[..]), &l.shape, addressing),
            None => our_options(
                self.root.as_bytes(),
                self.hash_function,
                self.chunk_size,
                addressing,
                extended,
                with_id,
            ),
        }
    }

    /// Checks a peer's HANDSHAKE options against this swarm.
    pub fn check_handshake(
        &self,
        opts: &HandshakeOptions<'_>,
    ) -> Result<Offer, IncompatibleOptions> {
        match &self.live {
            Some(l) => check_live_options(opts, &l.shape).map(|o| Offer {
                addressing: o.addressing,
                extended: false,
                window: match o.window {
                    DiscardWindow::KeepAll => None,
                    DiscardWindow::Window(w) => Some(w),
                },
            }),
            None => check_options(opts, self.hash_function, self.chunk_size),
        }
    }

    pub fn chunk_count(&self) -> Option<u64> {
        self.integrity.chunk_count()
    }

    /// Sizes the availability counts to [`Swarm::counted_chunk_count`]
    /// (the endpoint recounts the peers' chunks afterwards).
    pub fn size_counts(&mut self) {
        if let Some(n) = self.counted_chunk_count() {
            if self.availability.chunk_count() != n {
                self.availability.set_chunk_count(n);
            }
        }
    }

    /// The chunk count the swarm keeps per-chunk state for (availability
    /// counts, pickers' views, a peer's announced chunks): see
    /// [`counted`].
    pub fn counted_chunk_count(&self) -> Option<u64> {
        counted(&self.integrity)
    }

    /// Whether every chunk is verified and stored.
    pub fn is_complete(&self) -> bool {
        self.chunk_count()
            .is_some_and(|n| n > 0 && self.have.count() >= n)
    }

    /// Cuts `range` to the content, when its size is known; chunk ranges a
    /// peer names past the end are clamped, never acted on (libswift
    /// crashes on them, wire notes).
    pub fn clamp(&self, range: ChunkRange) -> Option<ChunkRange> {
        match self.chunk_count() {
            Some(n) => range.intersect(ChunkRange::with_len(0u64, n)?),
            None => Some(range),
        }
    }

    /// Marks in the availability the chunks of `range` we have or have
    /// requested, and only those, as taken (after requests were released,
    /// or the counts rebuilt).
    pub fn retake(&mut self, range: ChunkRange) {
        self.releases += 1;
        self.availability.unmark_taken(range);
        for run in self.have.filled_runs_in(range) {
            self.availability.mark_taken(run);
        }
        for run in self.requested.filled_runs_in(range) {
            self.availability.mark_taken(run);
        }
    }

    /// Records a verified and stored chunk.
    pub fn on_verified(&mut self, chunk: ChunkIndex, len: usize, from: SocketAddr) {
        self.have.set_chunk(chunk);
        // Usually taken already, when it was requested.
        if let Some(one) = ChunkRange::single(chunk) {
            self.availability.mark_taken(one);
        }
        self.have_log.push(chunk);
        self.bound_live_logs();
        self.requested.clear_chunk(chunk);
        self.checkpoint_dirty = true;
        self.verified_since_checkpoint += len as u64;
        self.stats.chunks_verified += 1;
        self.stats.payload_bytes_received += len as u64;
        let peer = self.peer_stats(from);
        peer.chunks_received += 1;
        peer.payload_bytes_received += len as u64;
    }

    /// Logs `chunk` for CANCEL when another channel may have it
    /// outstanding: it arrived `unasked` by the channel it came on, or it
    /// was asked from two peers.
    pub fn note_cancellable(&mut self, chunk: ChunkIndex, unasked: bool) {
        let doubled = !self.doubled.is_empty() && self.doubled.contains(chunk);
        if unasked || doubled {
            self.cancel_log.push(chunk);
        }
        if doubled {
            self.doubled.clear_chunk(chunk);
        }
    }

    pub fn peer_stats(&mut self, addr: SocketAddr) -> &mut PeerStats {
        self.stats.peers.entry(addr).or_default()
    }

    /// Whether enough verified since the last checkpoint for the next.
    pub fn checkpoint_due_by_progress(&self, policy: &CheckpointPolicy) -> bool {
        self.checkpoint_dirty
            && policy.due_by_progress(self.verified_since_checkpoint, self.stored_at_checkpoint)
    }

    /// Writes a checkpoint if the download moved on and `policy` says one
    /// is due (or `force`). Returns the storage error, if any.
    pub fn maybe_checkpoint(
        &mut self,
        now: Instant,
        policy: &CheckpointPolicy,
        force: bool,
    ) -> Option<CheckpointError> {
        let elapsed = now.saturating_since(self.last_checkpoint);
        if !self.checkpoint_dirty
            || (!force
                && !policy.due(
                    elapsed,
                    self.verified_since_checkpoint,
                    self.stored_at_checkpoint,
                ))
        {
            return None;
        }
        let tree = self.integrity.partial()?;
        self.last_checkpoint = now;
        self.checkpoint_dirty = false;
        self.stored_at_checkpoint = self
            .stored_at_checkpoint
            .saturating_add(self.verified_since_checkpoint);
        self.verified_since_checkpoint = 0;
        self.stats.checkpoints += 1;
        self.storage
            .checkpoint(&Snapshot {
                have: &self.have,
                tree,
                urgent: force,
            })
            .err()
            .map(CheckpointError)
    }

    /// Waits for the storage's checkpoints to be durable; the error of one
    /// that failed.
    pub fn wait_checkpoint(&mut self) -> Option<CheckpointError> {
        self.storage.wait_checkpoint().err().map(CheckpointError)
    }

    /// The per-peer counters, to report.
    pub fn stats(&self) -> SwarmStats {
        let mut s = self.stats.clone();
        s.peers_connected = self.peers.len();
        s
    }
}

/// The chunk count worth per-chunk state: the count, once its height is
/// proven. A count claimed by peaks that no chunk has confirmed may be a
/// forged claim of up to 2^28 chunks (one peak equal to the root, at any
/// layer, hashes up to it; `merkle/verify/claim.rs`): sized to it, the
/// availability counts of one swarm took 900 MB and 50 s of CPU from one
/// datagram. Until then the swarm picks as when the size is unknown.
fn counted(integrity: &Integrity) -> Option<u64> {
    match integrity.partial() {
        Some(t) if !t.height_proven() => None,
        _ => integrity.chunk_count(),
    }
}
