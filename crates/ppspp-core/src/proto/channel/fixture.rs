//! What the sub-states' unit tests share: a small content and its tree, a
//! seeding and a downloading swarm of it, a context, and the channel as a
//! sub-state sees it.

use std::collections::VecDeque;
use std::sync::Arc;

use rand::rngs::Xoshiro256PlusPlus;
use rand::SeedableRng;

use super::scope::{Peer, Scope};
use super::{mss, Outcome};
use crate::chunk::ChunkSize;
use crate::hash::HashFunction;
use crate::merkle::MerkleTree;
use crate::pick::Sequential;
use crate::proto::event::{Event, PeerStats};
use crate::proto::swarm::{Swarm, SwarmSetup};
use crate::proto::{Ctx, EndpointConfig, SwarmHandle};
use crate::storage::{MemoryStorage, Storage};
use crate::time::Instant;
use crate::wire::{decode_datagram, ChannelId, DatagramWriter, MessageTally, SwarmParams};

/// Bytes per chunk of the test content.
pub const CHUNK: u32 = 1024;
/// Chunks of the test content.
pub const CHUNKS: u64 = 8;

/// Runs `f` with a context at `now` and no rate limits.
pub fn with_ctx<T>(cfg: &EndpointConfig, now: Instant, f: impl FnOnce(&mut Ctx<'_>) -> T) -> T {
    with_ctx_events(cfg, now, f).0
}

/// [`with_ctx`], and the events `f` left.
pub fn with_ctx_events<T>(
    cfg: &EndpointConfig,
    now: Instant,
    f: impl FnOnce(&mut Ctx<'_>) -> T,
) -> (T, VecDeque<Event>) {
    let mut events = VecDeque::new();
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let mut sent = MessageTally::default();
    let mut ctx = Ctx {
        now,
        config: cfg,
        events: &mut events,
        rng: &mut rng,
        upload: None,
        download: None,
        sent: &mut sent,
    };
    let t = f(&mut ctx);
    (t, events)
}

fn size() -> ChunkSize {
    ChunkSize::new(u64::from(CHUNK)).unwrap()
}

/// The test content: `CHUNKS` chunks, no two alike.
pub fn content() -> Vec<u8> {
    (0..CHUNK as usize * CHUNKS as usize)
        .map(|i| (i / 3 % 251) as u8 ^ (i / CHUNK as usize) as u8)
        .collect()
}

pub fn tree() -> Arc<MerkleTree> {
    Arc::new(MerkleTree::from_bytes(&content(), size(), HashFunction::Sha1).unwrap())
}

/// A swarm that has all of the content.
pub fn seeder() -> Swarm {
    let storage = MemoryStorage::with_content(size(), content());
    let setup = SwarmSetup::seed(tree(), Box::new(storage), Box::new(Sequential));
    Swarm::new(setup, Instant::ZERO)
}

/// A swarm that has none of it and knows its root and chunk count, so
/// chunks verify with the hashes that come with them.
pub fn downloader() -> Swarm {
    downloader_into(Box::new(MemoryStorage::empty(size())))
}

/// [`downloader`], storing into `storage`.
pub fn downloader_into(storage: Box<dyn Storage>) -> Swarm {
    let setup = SwarmSetup::download(
        tree().root(),
        HashFunction::Sha1,
        size(),
        Some(CHUNKS),
        storage,
        Box::new(Sequential),
    )
    .unwrap();
    Swarm::new(setup, Instant::ZERO)
}

pub fn peer() -> Peer {
    Peer {
        addr: "192.0.2.1:7000".parse().unwrap(),
        swarm: SwarmHandle(0),
        mss: mss(CHUNK),
        stats: PeerStats::default(),
    }
}

/// The parameters both ends use: the defaults, with the chunk size known.
pub fn params() -> SwarmParams {
    SwarmParams {
        chunk_size: Some(CHUNK),
        ..SwarmParams::default()
    }
}

pub fn scope<'a>(peer: &'a mut Peer, out: &'a mut Outcome) -> Scope<'a> {
    Scope {
        peer,
        params: params(),
        out,
    }
}

/// The messages `f` writes into one datagram, as their debug strings
/// (DATA payloads shortened to their length).
pub fn written(f: impl FnOnce(&mut DatagramWriter<'_>)) -> Vec<String> {
    let mut buf = vec![0u8; 4 * CHUNK as usize];
    let mut w = DatagramWriter::new(&mut buf, ChannelId(1), params()).unwrap();
    w.set_limit(1400);
    f(&mut w);
    let len = w.finish();
    let (_, msgs) = decode_datagram(&buf[..len], params()).unwrap();
    msgs.map(|m| match m.unwrap() {
        crate::wire::Message::Data { spec, payload, .. } => {
            format!("DATA({spec:?}, {} bytes)", payload.len())
        }
        m => format!("{m:?}"),
    })
    .collect()
}
