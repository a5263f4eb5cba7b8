//! A forged content size cannot stick to a download that knows only the
//! swarm id (issue 21, item 2). A hostile peer answers first with one peak
//! equal to the root at the root's layer — the padded tree's peaks of 2^h
//! chunks, which hash up to the root (RFC 7574 §5.6) — and serves real
//! chunks under it; then an honest seeder of the real content comes. The
//! download must end with the true size and content, the honest seeder kept,
//! and the liar dropped. Before the fix the size locked at 2^h after the
//! first chunk, the download stalled, and the honest seeder's short last
//! chunk failed the length check and got it banned.

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{addr, Net, Shared};
use ppspp_core::merkle::MerkleTree;
use ppspp_core::pick;
use ppspp_core::proto::{CloseReason, Endpoint, EndpointConfig, Event, SwarmSetup};
use ppspp_core::storage::MemoryStorage;
use ppspp_core::time::Instant;
use ppspp_core::wire::{
    decode_datagram, ChannelId, DatagramWriter, HandshakeOptions, Message, SwarmParams, Timestamp,
};
use ppspp_core::{Bin, ChunkIndex, ChunkRange, ChunkSize, Hash, HashFunction};

const LIAR_CHANNEL: u32 = 0x1a4e_0001;

/// A scripted peer that claims 2^h chunks with one peak equal to the root
/// and serves the real full chunks it is asked for under that claim, with
/// uncles from the zero-padded tree.
struct Liar {
    tree: Arc<MerkleTree>,
    data: Vec<u8>,
    params: SwarmParams,
    /// The downloader's channel, once it said hello.
    remote: Option<ChannelId>,
    chunks_sent: u64,
    /// The layer of the forged peak: the root's, or above it (a taller
    /// tree whose only peak hashes to the root).
    layer: u32,
}

impl Liar {
    fn height(&self) -> u32 {
        self.layer
    }

    fn node(&self, bin: Bin) -> Hash {
        self.tree
            .node(bin)
            .unwrap_or(self.tree.hash_function().zero())
    }

    fn datagram(&self, dst: ChannelId, msgs: &[Message<'_>]) -> Vec<u8> {
        let mut buf = vec![0u8; 2048];
        let mut w = DatagramWriter::new(&mut buf, dst, self.params).unwrap();
        for m in msgs {
            w.push(m).unwrap();
        }
        let n = w.finish();
        buf.truncate(n);
        buf
    }

    /// Answers one datagram from the downloader.
    fn on_datagram(&mut self, bytes: &[u8]) -> Vec<Vec<u8>> {
        let Ok((_, msgs)) = decode_datagram(bytes, self.params) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut asked = Vec::new();
        for m in msgs.flatten() {
            match m {
                Message::Handshake { source, .. } if source != ChannelId::ZERO => {
                    self.remote = Some(source);
                    let claimed = 1u64 << self.height();
                    let have = ChunkRange::new(0u64, claimed - 1).unwrap();
                    let options = HandshakeOptions {
                        version: Some(1),
                        ..HandshakeOptions::default()
                    };
                    out.push(self.datagram(
                        source,
                        &[
                            Message::Handshake {
                                source: ChannelId(LIAR_CHANNEL),
                                options,
                            },
                            Message::Have(have.into()),
                        ],
                    ));
                }
                Message::Request(spec) => {
                    if let Some(r) = spec.to_chunks(self.tree.chunk_size()) {
                        asked.push(r);
                    }
                }
                _ => {}
            }
        }
        let Some(dst) = self.remote else {
            return out;
        };
        let cs = self.tree.chunk_size().bytes_usize();
        let root = Bin::new(self.height(), 0).unwrap();
        for r in asked {
            for c in r.first().0..=r.last().0.min(r.first().0 + 64) {
                let Some(chunk) = self.data.chunks(cs).nth(c as usize) else {
                    continue; // Nothing to send past the real end.
                };
                if chunk.len() != cs {
                    continue; // The real short last chunk would expose it.
                }
                // The forged peak, then the uncles up to it, then DATA.
                let spec = |b: Bin| b.chunks().unwrap().into();
                let mut msgs = vec![Message::Integrity {
                    spec: spec(root),
                    hash: self.tree.root(),
                }];
                let mut cur = Bin::leaf(ChunkIndex(c)).unwrap();
                while cur != root {
                    let sib = cur.sibling().unwrap();
                    msgs.push(Message::Integrity {
                        spec: spec(sib),
                        hash: self.node(sib),
                    });
                    cur = cur.parent().unwrap();
                }
                msgs.push(Message::Data {
                    spec: ChunkRange::single(ChunkIndex(c)).unwrap().into(),
                    timestamp: Timestamp(0),
                    payload: chunk,
                });
                out.push(self.datagram(dst, &msgs));
                self.chunks_sent += 1;
            }
        }
        out
    }
}

/// Replays the attack on content of `len` bytes in 1 KiB chunks, the
/// forged peak `above` layers over the root's.
fn forged_root_peak_then_honest_seeder(len: usize, above: u32) {
    let data: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
    let cs = ChunkSize::DEFAULT;
    let tree = Arc::new(MerkleTree::from_bytes(&data, cs, HashFunction::Sha1).unwrap());
    assert!(
        !tree.chunk_count().is_power_of_two(),
        "the forged claim differs"
    );
    let mut honest = Endpoint::new(EndpointConfig::default(), 1);
    honest
        .add_swarm(
            Instant::ZERO,
            SwarmSetup::seed(
                tree.clone(),
                Box::new(MemoryStorage::with_content(cs, data.clone())),
                pick::by_name("sequential").unwrap(),
            ),
        )
        .unwrap();
    let store = Shared(Arc::new(Mutex::new(MemoryStorage::empty(cs))));
    let setup = SwarmSetup::download(
        tree.root(),
        HashFunction::Sha1,
        cs,
        None,
        Box::new(store.clone()),
        pick::by_name("sequential").unwrap(),
    )
    .unwrap();
    let mut leech = Endpoint::new(EndpointConfig::default(), 3);
    let h = leech.add_swarm(Instant::ZERO, setup).unwrap();

    let (liar_at, honest_at, leech_at) = (addr(2), addr(1), addr(3));
    let mut net = Net::new(Duration::from_millis(5));
    net.add(leech_at, leech);
    // Datagrams to the liar (which is not an endpoint) are taken off the
    // wire and answered by the script between steps.
    let to_liar: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
    let inbox = to_liar.clone();
    net.filter = Some(Box::new(move |f| {
        if f.to == liar_at {
            inbox.borrow_mut().push(f.bytes.clone());
            return false;
        }
        true
    }));
    let mut liar = Liar {
        tree: tree.clone(),
        data: data.clone(),
        params: SwarmParams {
            chunk_size: Some(cs.bytes()),
            ..SwarmParams::default()
        },
        remote: None,
        chunks_sent: 0,
        layer: tree.root_bin().layer() + above,
    };
    let now = net.now;
    net.node(leech_at).connect(now, h, liar_at).unwrap();
    let step = |net: &mut Net, liar: &mut Liar, d: Duration| {
        let end = net.now + d;
        while net.now < end {
            let next = net.now + Duration::from_millis(1);
            net.run_until(next, |_| false);
            // An idle network returns early: time still passes.
            net.now = net.now.max(next);
            for dgram in std::mem::take(&mut *to_liar.borrow_mut()) {
                for reply in liar.on_datagram(&dgram) {
                    net.inject(liar_at, leech_at, reply);
                }
            }
        }
    };
    // The liar alone: real chunks verify under its claim.
    step(&mut net, &mut liar, Duration::from_secs(2));
    assert!(liar.chunks_sent > 0, "the liar served chunks");
    // An unproven count costs no memory per chunk: a claim of 2^28
    // chunks would take the availability counts to most of a gigabyte.
    let counted = net.nodes[&leech_at].counted_chunks(h).unwrap();
    assert!(
        counted <= tree.chunk_count().next_power_of_two(),
        "{counted} chunks counted"
    );
    let (have, count) = net.nodes[&leech_at].progress(h).unwrap();
    if above > 0 {
        // Nothing verifies under the taller tree (its climb meets zeros).
        assert_eq!(have, 0);
    } else {
        assert!(have > 0, "chunks verified under the forged size");
        if len.is_multiple_of(cs.bytes_usize()) {
            // The real last chunk is whole, so the liar served it too:
            // under the forged count it verified with nothing but zeros to
            // its right, which proves the true count without anyone's
            // peaks.
            assert_eq!(count, Some(tree.chunk_count()), "the end found");
        } else {
            assert_eq!(count, Some(1 << tree.root_bin().layer()), "the forged size");
            assert!(!net.nodes[&leech_at].is_complete(h));
        }
    }

    // Then the honest seeder.
    net.add(honest_at, honest);
    let now = net.now;
    net.node(leech_at).connect(now, h, honest_at).unwrap();
    for _ in 0..300 {
        if net.nodes[&leech_at].is_complete(h) {
            break;
        }
        step(&mut net, &mut liar, Duration::from_millis(100));
    }
    let leech = &net.nodes[&leech_at];
    assert!(
        leech.is_complete(h),
        "the download completes: {:?}",
        leech.progress(h)
    );
    assert_eq!(leech.progress(h).unwrap().1, Some(tree.chunk_count()));
    assert_eq!(store.0.lock().unwrap().bytes(), &data[..]);
    let learned: Vec<u64> = net
        .events
        .iter()
        .filter_map(|(a, e)| match e {
            Event::ContentLength { len, .. } if *a == leech_at => Some(*len),
            _ => None,
        })
        .collect();
    assert_eq!(learned, vec![len as u64], "the true length, once");
    let closed_bad = |peer| {
        net.events.iter().any(|(a, e)| {
            *a == leech_at
                && matches!(e, Event::Closed { peer: p, reason: CloseReason::BadData, .. } if *p == peer)
        })
    };
    assert!(!closed_bad(honest_at), "the honest seeder was not dropped");
    assert!(closed_bad(liar_at), "the liar was dropped");
    let stats = net.nodes[&leech_at].swarm_stats(h).unwrap();
    assert_eq!(stats.bad_peers, 1);
    // The honest seeder can still be reached; the liar cannot.
    let now = net.now;
    assert_eq!(net.node(leech_at).connect(now, h, liar_at), None);
}

#[test]
fn a_forged_size_gives_way_when_the_last_chunk_is_short() {
    forged_root_peak_then_honest_seeder(20 * 1024 + 300, 0);
}

#[test]
fn a_forged_size_gives_way_when_the_length_is_whole_chunks() {
    forged_root_peak_then_honest_seeder(20 * 1024, 0);
}

#[test]
fn a_forged_taller_tree_costs_no_memory_and_gives_way() {
    // One peak at layer 28 whose hash is the root: a claim of 2^28 chunks.
    forged_root_peak_then_honest_seeder(20 * 1024 + 300, 28 - 5);
}
