//! What a channel keeps to upload to its peer: the requests queued, the
//! DATA in flight with the congestion window and round trip that steer
//! it (RFC 6817 LEDBAT by default), the pacer, and the chunks whose hashes
//! went out ahead of their DATA (RFC 7574 §5.3).

use std::collections::BTreeSet;

use crate::cc::{AckSample, CongestionController, RttEstimator};
use crate::chunk::{ChunkIndex, ChunkRange};
use crate::proto::pacer::Pacer;
use crate::proto::sent::InFlight;
use crate::proto::upload::{QueueFull, UploadQueue};
use crate::time::Instant;

mod data;
pub(in crate::proto::channel) use data::push_signed_munro;

/// One channel's upload side: inputs `handle_request`, `handle_cancel`,
/// `handle_ack`, `handle_have`, `handle_timeout`; output `poll_data`
/// (`data.rs`).
pub(crate) struct Upload {
    queue: UploadQueue,
    inflight: InFlight,
    cc: Box<dyn CongestionController>,
    rtt: RttEstimator,
    pacer: Pacer,
    /// Chunks whose hashes went out ahead of their DATA.
    ahead: BTreeSet<ChunkIndex>,
    /// When the pacer lets the next DATA go (for the timer).
    next_data_at: Instant,
    /// When the peer last acknowledged DATA: while its ACKs keep coming,
    /// the DATA in flight counts as held when choosing hashes (`data.rs`).
    last_ack: Option<Instant>,
}

impl Upload {
    /// Nothing asked yet; DATA steered by `cc`.
    pub fn new(now: Instant, cc: Box<dyn CongestionController>) -> Upload {
        Upload {
            queue: UploadQueue::default(),
            inflight: InFlight::default(),
            cc,
            rtt: RttEstimator::default(),
            pacer: Pacer::new(now),
            ahead: BTreeSet::new(),
            next_data_at: now,
            last_ack: None,
        }
    }

    /// Chunks queued for the peer.
    pub fn queued_chunks(&self) -> u64 {
        self.queue.chunks()
    }

    /// Bytes of DATA in flight.
    pub fn flight_bytes(&self) -> u64 {
        self.inflight.bytes()
    }

    /// Bytes of DATA in flight and the queuing delay the controller
    /// measures (see `Channel::upload_path`).
    pub fn path(&self) -> (u64, Option<std::time::Duration>) {
        (self.inflight.bytes(), self.cc.queuing_delay())
    }

    /// Queues `range`, requested by the peer.
    pub fn handle_request(
        &mut self,
        range: ChunkRange,
        max_ranges: usize,
    ) -> Result<u64, QueueFull> {
        self.queue.push(range, max_ranges)
    }

    /// Drops every queued request (the peer is choked, or its requests
    /// overflowed the queue and are voided, RFC 7574 §3.9).
    pub fn handle_void(&mut self) {
        self.queue.clear();
    }

    /// The peer has `range` (HAVE) or does not want it (CANCEL): it leaves
    /// the queue.
    pub fn handle_cancel(&mut self, range: ChunkRange) {
        self.queue.cancel(range);
    }

    /// The peer announced `range`: DATA of it in flight arrived.
    pub fn handle_have(&mut self, range: ChunkRange) {
        self.inflight.on_have(range);
    }

    /// The peer acknowledged `range` at `now` with one-way `delay`
    /// (RFC 7574 §8.7): the round trip, the window and losses follow.
    pub fn handle_ack(&mut self, now: Instant, range: ChunkRange, delay: i64) {
        let flight = self.inflight.bytes();
        let out = self.inflight.on_ack(range, now);
        if let Some(rtt) = out.rtt {
            self.rtt.on_sample(rtt);
        }
        if out.acked_bytes > 0 {
            self.last_ack = Some(now);
            let sample = AckSample {
                bytes: out.acked_bytes,
                one_way_delay: Some(delay),
                rtt: out.rtt,
                flight,
            };
            self.cc.on_ack(now, &sample);
        }
        if out.lost_bytes > 0 {
            self.cc.on_loss(now, out.lost_bytes);
        }
    }

    /// The retransmission timer: the whole flight at once (see
    /// `InFlight::on_rto`) restarts the window and backs the timer off.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.inflight.on_rto(now, self.rtt.rto()) > 0 {
            self.cc.on_timeout(now);
            self.rtt.on_timeout();
        }
    }

    /// The upload side's timers as seen at `now`: the flight's timeout, and
    /// paced DATA waiting for its time (not when the window or the upload
    /// limit holds it: an ACK or the limiter wakes us then).
    pub fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let mut t = Instant::MAX;
        if let Some(o) = self.inflight.oldest() {
            t = t.min(o + self.rtt.rto());
        }
        if !self.queue.is_empty() && self.next_data_at > now {
            t = t.min(self.next_data_at);
        }
        (t != Instant::MAX).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binmap::Binmap;
    use crate::cc::CongestionControl;
    use crate::proto::channel::fixture::{self, peer, scope, seeder, with_ctx, written};
    use crate::proto::channel::scope::Peer;
    use crate::proto::channel::Outcome;
    use crate::proto::swarm::Swarm;
    use crate::proto::EndpointConfig;
    use std::time::Duration;

    const MSS: u64 = 1088;

    fn fresh() -> Upload {
        Upload::new(Instant::ZERO, CongestionControl::default().build(MSS))
    }

    fn r(a: u64, b: u64) -> ChunkRange {
        ChunkRange::new(a, b).unwrap()
    }

    #[test]
    fn requests_queue_until_voided_or_cancelled() {
        let mut u = fresh();
        u.handle_request(r(0, 9), 16).unwrap();
        assert_eq!(u.queued_chunks(), 10);
        u.handle_cancel(r(0, 4));
        assert_eq!(u.queued_chunks(), 5);
        u.handle_void();
        assert_eq!(u.queued_chunks(), 0);
        assert_eq!(u.next_deadline(Instant::ZERO), None);
    }

    #[test]
    fn an_ack_empties_the_flight_and_a_timeout_backs_off() {
        let t0 = Instant::ZERO;
        let mut u = fresh();
        u.inflight.on_sent(0, MSS, t0);
        u.inflight.on_sent(1, MSS, t0);
        assert_eq!(u.flight_bytes(), 2 * MSS);
        let rto = u.next_deadline(t0).unwrap();
        assert!(rto > t0);
        let t1 = t0 + Duration::from_millis(50);
        u.handle_ack(t1, r(0, 0), 10_000);
        assert_eq!(u.flight_bytes(), MSS);
        assert!(u.rtt.srtt().is_some());
        u.handle_have(r(1, 1));
        assert_eq!(u.flight_bytes(), 0);
        u.inflight.on_sent(2, MSS, t1);
        let due = u.next_deadline(t1).unwrap();
        u.handle_timeout(due);
        assert_eq!(u.flight_bytes(), 0, "the flight is taken for lost");
    }

    /// What a seeder's upload writes after the peer, which has `has`,
    /// asked for `request`: with us choking it, then not. Returns the
    /// upload, the swarm and the peer after.
    fn serve(request: ChunkRange, has: &Binmap) -> (Vec<String>, Upload, Swarm, Peer) {
        let cfg = EndpointConfig::default();
        let mut swarm = seeder();
        let (mut u, mut p, mut out) = (fresh(), peer(), Outcome::default());
        let sc = &mut scope(&mut p, &mut out);
        u.handle_request(request, 16).unwrap();
        let sent = with_ctx(&cfg, Instant::ZERO, |ctx| {
            let choked = written(|w| u.poll_data(&mut swarm, ctx, sc, (true, has), w));
            assert!(choked.is_empty(), "nothing while we choke the peer");
            assert_eq!(u.queued_chunks(), request.len());
            written(|w| u.poll_data(&mut swarm, ctx, sc, (false, has), w))
        });
        (sent, u, swarm, p)
    }

    #[test]
    fn a_requested_chunk_goes_out_with_the_hashes_the_peer_lacks() {
        let (sent, u, swarm, p) = serve(r(0, 0), &Binmap::new());
        // The peak of the 8-chunk tree and chunk 0's three uncles (RFC 7574
        // §5.4, §5.6.2), then the chunk.
        assert_eq!(sent.len(), 5, "{sent:?}");
        assert!(
            sent[..4].iter().all(|m| m.starts_with("INTEGRITY")),
            "{sent:?}"
        );
        assert_eq!(
            sent[4],
            format!("DATA(chunks 0..=0, {} bytes)", fixture::CHUNK)
        );
        assert_eq!(u.queued_chunks(), 0);
        assert!(u.flight_bytes() > fixture::CHUNK.into());
        assert_eq!(p.stats.chunks_sent, 1);
        assert_eq!(swarm.stats.payload_bytes_sent, u64::from(fixture::CHUNK));
    }

    #[test]
    fn a_peer_that_has_the_sibling_gets_no_hashes_it_can_compute() {
        let mut has = Binmap::new();
        has.set(r(0, 0));
        let (sent, ..) = serve(r(1, 1), &has);
        // It verified chunk 0, so holds the peak and chunk 1's uncles above
        // their parent: only the DATA goes.
        assert_eq!(sent.len(), 1, "{sent:?}");
        assert!(sent[0].starts_with("DATA(chunks 1..=1,"), "{sent:?}");
    }

    /// What a seeder writes for chunks 0 and 1 to a peer that acknowledged
    /// chunks 4..=7 (so the round trip is known and the window has room
    /// for two), the second DATA `gap` after the first.
    fn burst_of_two(gap: Duration) -> (Vec<String>, Vec<String>) {
        // Hashes sent ahead of a burst (§5.3) would cover both chunks in
        // one datagram; a live swarm and libswift's profile send none.
        let cfg = EndpointConfig {
            integrity_ahead: false,
            ..EndpointConfig::default()
        };
        let mut swarm = seeder();
        let (mut u, mut p, mut out) = (fresh(), peer(), Outcome::default());
        let sc = &mut scope(&mut p, &mut out);
        let t0 = Instant::ZERO;
        let t1 = t0 + Duration::from_millis(40);
        for c in 4..=7 {
            u.inflight.on_sent(c, MSS, t0);
        }
        u.handle_ack(t1, r(4, 7), 0);
        let mut has = Binmap::new();
        has.set(r(4, 7));
        u.handle_request(r(0, 1), 16).unwrap();
        let first = with_ctx(&cfg, t1, |ctx| {
            written(|w| u.poll_data(&mut swarm, ctx, sc, (false, &has), w))
        });
        let second = with_ctx(&cfg, t1 + gap, |ctx| {
            written(|w| u.poll_data(&mut swarm, ctx, sc, (false, &has), w))
        });
        (first, second)
    }

    #[test]
    fn data_in_flight_counts_as_held_only_while_acks_flow() {
        // Chunk 0 needs chunk 1's hash and bin 2..=3's; the peer holds
        // bin 4..=7's side already (RFC 7574 §5.4).
        let (first, second) = burst_of_two(Duration::from_millis(5));
        assert_eq!(first.len(), 3, "{first:?}");
        // Chunk 0 is in flight and ACKs come: its sibling's hash and bin
        // 2..=3's reach the peer with it, so chunk 1 goes alone.
        assert_eq!(second.len(), 1, "{second:?}");
        assert!(second[0].starts_with("DATA(chunks 1..=1,"), "{second:?}");
        // Two round trips without an ACK: chunk 0 may have gone into a
        // hole, so chunk 1 carries what it needs again.
        let (_, second) = burst_of_two(Duration::from_millis(200));
        assert_eq!(second.len(), 3, "{second:?}");
        assert!(second[2].starts_with("DATA(chunks 1..=1,"), "{second:?}");
    }
}
