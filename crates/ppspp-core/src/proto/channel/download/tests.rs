//! The download side on its own: its state, and its inputs and outputs
//! against small swarms (`../fixture.rs`).

use std::collections::VecDeque;
use std::io;

use super::*;
use crate::cc::CongestionControl;
use crate::chunk::ChunkIndex;
use crate::proto::channel::fixture::{
    self, downloader, downloader_into, peer, scope, tree, with_ctx, with_ctx_events, written,
};
use crate::proto::channel::scope::Peer;
use crate::proto::event::{CloseReason, Event};
use crate::proto::swarm::Swarm;
use crate::proto::EndpointConfig;
use crate::proto::{StorageFailure, StorageOp};
use crate::storage::Storage;
use crate::wire::Timestamp;

fn fresh() -> Download {
    Download::new(Instant::ZERO, CongestionControl::default().build(1088), 0)
}

#[test]
fn a_fresh_download_owes_nothing_and_waits_for_nothing() {
    let d = fresh();
    assert!(!d.poll_due(Instant::ZERO, &EndpointConfig::default()));
    assert_eq!(d.next_deadline(Instant::ZERO), None);
    assert!(d.remote_has().is_empty() && !d.remote_complete());
    assert_eq!((d.fast(), d.claimed()), (None, None));
    assert!(d.request_timeout() >= Duration::from_millis(500));
}

#[test]
fn a_pick_pause_is_a_deadline_until_it_passes() {
    let mut d = fresh();
    let t = Instant::ZERO + Duration::from_secs(2);
    d.picks_paused_until = t;
    assert_eq!(d.next_deadline(Instant::ZERO), Some(t));
    assert_eq!(d.next_deadline(t), None);
    // An ACK owed while nothing is asked of the peer is due at once.
    d.queue_ack(crate::chunk::ChunkIndex(3), 0, t);
    assert!(d.poll_due(t, &EndpointConfig::default()));
    d.handle_fast(Some(true));
    assert_eq!(d.fast(), Some(true));
}

fn r(a: u64, b: u64) -> ChunkRange {
    ChunkRange::new(a, b).unwrap()
}

#[test]
fn a_peer_is_counted_once_per_chunk_and_once_when_complete() {
    let mut swarm = downloader();
    let (mut d, mut p, mut out) = (fresh(), peer(), Outcome::default());
    let sc = &mut scope(&mut p, &mut out);
    d.handle_have(&mut swarm, sc, r(0, 2)).unwrap();
    d.handle_have(&mut swarm, sc, r(1, 2)).unwrap();
    assert!(d.remote_has().is_filled(r(0, 2)) && !d.remote_complete());
    assert_eq!(swarm.availability.count(ChunkIndex(1)), 1);
    assert_eq!(swarm.availability.count(ChunkIndex(3)), 0);
    d.handle_have(&mut swarm, sc, r(0, fixture::CHUNKS - 1))
        .unwrap();
    assert!(d.remote_complete());
    assert_eq!(swarm.availability.complete_peers(), 1);
    assert_eq!(swarm.availability.count(ChunkIndex(1)), 1, "counted once");
    d.forget_availability(&mut swarm);
    assert_eq!(swarm.availability.count(ChunkIndex(1)), 0);
}

#[test]
fn requests_go_out_for_what_the_peer_has_unless_it_chokes_us() {
    let cfg = EndpointConfig::default();
    let mut swarm = downloader();
    let (mut d, mut p, mut out) = (fresh(), peer(), Outcome::default());
    let sc = &mut scope(&mut p, &mut out);
    with_ctx(&cfg, Instant::ZERO, |ctx| {
        let none = written(|w| d.poll_requests(&mut swarm, ctx, sc, false, w));
        assert!(none.is_empty(), "the peer has nothing: {none:?}");
        d.handle_have(&mut swarm, sc, r(0, 3)).unwrap();
        let choked = written(|w| d.poll_requests(&mut swarm, ctx, sc, true, w));
        assert!(choked.is_empty());
        let asked = written(|w| d.poll_requests(&mut swarm, ctx, sc, false, w));
        assert!(
            !asked.is_empty() && asked.iter().all(|m| m.starts_with("REQUEST")),
            "{asked:?}"
        );
        assert!(d.outstanding().count() > 0);
        assert!(d.outstanding().chunks().contains(ChunkIndex(0)));
        assert!(swarm.requested.contains(ChunkIndex(0)));
        assert!(
            !swarm.requested.contains(ChunkIndex(4)),
            "the peer lacks it"
        );
    });
}

/// A download after one DATA, its swarm, peer and outcome, and the verdict.
type Received = (Download, Swarm, Peer, Outcome, Result<(), CloseReason>);

/// Asks the peer for what it has, then hands `handle_data` chunk 0 with
/// the hashes a seeder sends to a peer that has nothing, the payload
/// changed by `corrupt`.
fn receive_chunk_0(corrupt: bool) -> Received {
    receive_chunk_0_into(downloader(), corrupt).0
}

/// [`receive_chunk_0`] into `swarm`, and the events it left.
fn receive_chunk_0_into(mut swarm: Swarm, corrupt: bool) -> (Received, VecDeque<Event>) {
    let cfg = EndpointConfig::default();
    let (mut d, mut p, mut out) = (fresh(), peer(), Outcome::default());
    let t = tree();
    let mut hashes = t.peaks();
    hashes.extend(t.uncles(ChunkIndex(0), |_| false));
    let mut payload = fixture::content()[..fixture::CHUNK as usize].to_vec();
    if corrupt {
        payload[10] ^= 1;
    }
    let (verdict, events) =
        with_ctx_events(&cfg, Instant::ZERO + Duration::from_millis(40), |ctx| {
            let sc = &mut scope(&mut p, &mut out);
            d.handle_have(&mut swarm, sc, r(0, fixture::CHUNKS - 1))
                .unwrap();
            written(|w| d.poll_requests(&mut swarm, ctx, sc, false, w));
            let spec = sc.spec_for_chunk(&swarm, ChunkIndex(0)).unwrap();
            let data = (spec, Timestamp(ctx.wire_now()), &payload[..]);
            d.handle_data(&mut swarm, ctx, sc, data, &hashes)
        });
    ((d, swarm, p, out, verdict), events)
}

#[test]
fn a_verified_chunk_is_stored_counted_and_acknowledged() {
    let (mut d, mut swarm, mut p, mut out, verdict) = receive_chunk_0(false);
    assert_eq!(verdict, Ok(()));
    assert!(swarm.have.contains(ChunkIndex(0)));
    assert_eq!(p.stats.chunks_received, 1);
    assert_eq!(p.stats.payload_bytes_received, u64::from(fixture::CHUNK));
    assert!(!d.outstanding().chunks().contains(ChunkIndex(0)));
    assert!(out.released.is_empty());
    let sc = &mut scope(&mut p, &mut out);
    let acks = written(|w| d.poll_acks(&swarm, sc, w));
    assert_eq!(acks.len(), 1, "{acks:?}");
    assert!(acks[0].starts_with("ACK(chunks 0..=0"), "{acks:?}");
    assert!(
        written(|w| d.poll_acks(&swarm, sc, w)).is_empty(),
        "sent once"
    );
    // A duplicate is acknowledged again, not stored or counted again.
    let payload = fixture::content()[..fixture::CHUNK as usize].to_vec();
    let cfg = EndpointConfig::default();
    with_ctx(&cfg, Instant::ZERO, |ctx| {
        let spec = sc.spec_for_chunk(&swarm, ChunkIndex(0)).unwrap();
        let data = (spec, Timestamp(ctx.wire_now()), &payload[..]);
        d.handle_data(&mut swarm, ctx, sc, data, &[]).unwrap();
    });
    assert_eq!(sc.peer.stats.chunks_received, 1);
    assert_eq!(swarm.stats.chunks_duplicate, 1);
    assert_eq!(written(|w| d.poll_acks(&swarm, sc, w)).len(), 1);
}

#[test]
fn a_chunk_that_fails_verification_closes_and_gives_back_the_requests() {
    let (d, swarm, p, out, verdict) = receive_chunk_0(true);
    assert_eq!(verdict, Err(CloseReason::BadData));
    assert!(!swarm.have.contains(ChunkIndex(0)));
    assert_eq!(p.stats.chunks_rejected, 1);
    assert_eq!(swarm.stats.bad_peers, 1);
    assert_eq!(d.outstanding().count(), 0);
    assert!(out.released.iter().any(|r| r.first() == ChunkIndex(0)));
}

/// A disk that is full: nothing can be written.
#[derive(Debug)]
struct FullDisk;

impl Storage for FullDisk {
    fn read_chunk(&mut self, _: ChunkIndex, _: &mut [u8]) -> io::Result<usize> {
        Err(io::Error::from(io::ErrorKind::NotFound))
    }

    fn write_chunk(&mut self, _: ChunkIndex, _: &[u8]) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
    }
}

#[test]
fn a_chunk_that_cannot_be_stored_is_reported_and_asked_again() {
    let ((d, swarm, p, out, verdict), events) =
        receive_chunk_0_into(downloader_into(Box::new(FullDisk)), false);
    assert_eq!(verdict, Ok(()), "not the peer's fault");
    assert!(!swarm.have.contains(ChunkIndex(0)));
    assert_eq!((p.stats.chunks_received, p.stats.chunks_rejected), (0, 0));
    assert!(!d.outstanding().chunks().contains(ChunkIndex(0)));
    assert!(out.released.iter().any(|r| r.first() == ChunkIndex(0)));
    let expected = StorageFailure {
        op: StorageOp::WriteChunk(ChunkIndex(0)),
        kind: io::ErrorKind::StorageFull,
        message: "disk full".into(),
    };
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::StorageError { error, .. } if *error == expected)),
        "{events:?}"
    );
}

#[test]
fn live_picks_skip_only_the_quarter_of_a_full_window_about_to_leave_it() {
    let mut d = fresh();
    d.handle_peer_window(Some(100));
    // A stream younger than the peer's window: the peer keeps every
    // chunk, none is about to leave, so picks may start at 0. (They
    // started a quarter window in, and a receiver hooked in below that
    // asked nobody for its next chunks until the stream was 3/4 of a
    // window old: 20 live viewers stalled for seconds in the lab.)
    d.remote_has.set(r(0, 49));
    assert_eq!(d.live_pick_floor(), Some(ChunkIndex(0)));
    d.remote_has.set(r(50, 74));
    assert_eq!(d.live_pick_floor(), Some(ChunkIndex(0)));
    // Chunk c leaves the window when the peer's newest reaches c + 100:
    // with 75 ..= 199 announced, 100 ..= 124 leave within 25 chunks.
    d.remote_has.set(r(75, 199));
    assert_eq!(d.live_pick_floor(), Some(ChunkIndex(125)));
    // No window said: no floor of the peer's.
    d.handle_peer_window(None);
    assert_eq!(d.live_pick_floor(), None);
}

/// Hands `d` chunk `c` of the content at `now`, with all its uncles.
fn deliver(d: &mut Download, swarm: &mut Swarm, p: &mut Peer, c: u64, now: Instant) {
    let cfg = EndpointConfig::default();
    let mut out = Outcome::default();
    let t = tree();
    let hashes = t.uncles(ChunkIndex(c), |_| false);
    let cs = fixture::CHUNK as usize;
    let payload = fixture::content()[c as usize * cs..(c as usize + 1) * cs].to_vec();
    with_ctx(&cfg, now, |ctx| {
        let sc = &mut scope(p, &mut out);
        let spec = sc.spec_for_chunk(swarm, ChunkIndex(c)).unwrap();
        let data = (spec, Timestamp(ctx.wire_now()), &payload[..]);
        d.handle_data(swarm, ctx, sc, data, &hashes).unwrap();
    });
}

#[test]
fn an_ack_waits_for_a_second_chunk_or_its_delay_while_more_is_asked() {
    let (mut d, mut swarm, mut p, _, verdict) = receive_chunk_0(false);
    assert_eq!(verdict, Ok(()));
    // More asked of the peer than the one chunk still due.
    d.outstanding.add(r(4, 7), Instant::ZERO, None);
    let cfg = EndpointConfig {
        ack_every: 2,
        ..EndpointConfig::default()
    };
    let arrived = Instant::ZERO + Duration::from_millis(40);
    // One chunk in, more to come: the ACK waits.
    assert!(!d.acks_due(arrived, &cfg) && !d.poll_due(arrived, &cfg));
    assert_eq!(d.ack_deadline(&cfg), Some(arrived + cfg.ack_delay));
    assert!(d.acks_due(arrived + cfg.ack_delay, &cfg));
    // Acknowledging every chunk, it is due at once.
    let every = EndpointConfig {
        ack_every: 1,
        ..cfg.clone()
    };
    assert!(d.acks_due(arrived, &every));
    // The second chunk makes it due, and one ACK covers both.
    let second = arrived + Duration::from_millis(1);
    deliver(&mut d, &mut swarm, &mut p, 1, second);
    assert!(d.outstanding().count() > 0);
    assert!(d.acks_due(second, &cfg));
    let mut out = Outcome::default();
    let sc = &mut scope(&mut p, &mut out);
    let acks = written(|w| d.poll_acks(&swarm, sc, w));
    assert_eq!(acks.len(), 1, "{acks:?}");
    assert!(acks[0].starts_with("ACK(chunks 0..=1"), "{acks:?}");
    // Sent: nothing is owed, and no timer is left.
    assert!(!d.acks_due(second + cfg.ack_delay, &cfg));
    assert_eq!(d.ack_deadline(&cfg), None);
}

#[test]
fn an_ack_is_due_at_once_when_nothing_more_is_asked() {
    let (mut d, mut swarm, mut p, _, _) = receive_chunk_0(false);
    let cfg = EndpointConfig {
        ack_every: 100,
        ..EndpointConfig::default()
    };
    let mut now = Instant::ZERO + Duration::from_millis(40);
    d.outstanding.add(r(2, 4), Instant::ZERO, None);
    let asked: Vec<u64> = (1..fixture::CHUNKS)
        .filter(|&c| d.outstanding().chunks().contains(ChunkIndex(c)))
        .collect();
    assert!(asked.len() >= 4, "{asked:?}");
    let (last, rest) = asked.split_last().unwrap();
    for &c in rest {
        now += Duration::from_millis(1);
        deliver(&mut d, &mut swarm, &mut p, c, now);
        assert!(!d.acks_due(now, &cfg), "chunk {c}: more is asked");
    }
    now += Duration::from_millis(1);
    deliver(&mut d, &mut swarm, &mut p, *last, now);
    assert_eq!(d.outstanding().count(), 0);
    assert!(
        d.acks_due(now, &cfg),
        "the last chunk asked is acknowledged at once"
    );
}
