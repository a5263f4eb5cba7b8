use super::*;
use rand::SeedableRng;

const MBIT: u64 = 1_000_000;

fn link(config: LinkConfig) -> Link {
    Link::new(config, Xoshiro256PlusPlus::seed_from_u64(1))
}

fn at(us: u64) -> Instant {
    Instant::from_micros(us)
}

fn forward(o: Offer) -> u64 {
    match o {
        Offer::Forward(t) => t.as_micros(),
        other => panic!("expected forward, got {other:?}"),
    }
}

#[test]
fn delivers_at_capacity() {
    // Offered twice as fast as 10 Mbit/s for 10 s of traffic.
    let mut l = link(LinkConfig::new(
        Some(10 * MBIT),
        QueueLimit::Unlimited,
        Duration::from_millis(20),
    ));
    let n = 8_000u64;
    let mut last = 0;
    for i in 0..n {
        last = forward(l.offer(at(i * 600), 1500, FlowId(0)));
    }
    // n packets of 1500 B at 10 Mbit/s take n × 1200 µs, then 20 ms.
    let busy = last - 20_000;
    let rate = (n * 1500 * 8) as f64 / (busy as f64 / 1e6);
    assert!(
        (rate / (10 * MBIT) as f64 - 1.0).abs() < 0.01,
        "rate {rate}"
    );
    assert_eq!(busy, n * 1200);
}

#[test]
fn odd_rates_do_not_drift() {
    // 1 Mbit/s with 1052-byte packets: 8416 µs each; 3 Mbit/s with 1000 B:
    // 2666.67 µs each, rounded per packet only at the exit.
    let mut l = link(LinkConfig::new(
        Some(3 * MBIT),
        QueueLimit::Unlimited,
        Duration::ZERO,
    ));
    let mut last = 0;
    for _ in 0..3000 {
        last = forward(l.offer(at(0), 1000, FlowId(0)));
    }
    assert_eq!(last, 8_000_000);
}

#[test]
fn queueing_delay_is_backlog_over_capacity() {
    let c = 8 * MBIT; // one byte per µs
    let mut l = link(LinkConfig::new(
        Some(c),
        QueueLimit::Unlimited,
        Duration::ZERO,
    ));
    l.trace_flow(FlowId(7));
    for _ in 0..10 {
        l.offer(at(0), 1000, FlowId(7));
    }
    // At 2500 µs two packets have left, the third is half sent.
    assert_eq!(l.backlog_at(at(2500)), 8000);
    l.offer(at(2500), 1000, FlowId(7));
    let waits: Vec<u64> = l
        .flow_waits(FlowId(7))
        .unwrap()
        .iter()
        .map(|w| w.wait_us)
        .collect();
    // The k-th packet waits for the k − 1 before it: 1000 B = 1000 µs each.
    let expect: Vec<u64> = (0..10).map(|k| k * 1000).chain([7500]).collect();
    assert_eq!(waits, expect);
    // The last arrival waited for the residual backlog: 7500 B at 1 B/µs.
    assert_eq!(l.stats().sum_wait_us, expect.iter().sum::<u64>());
}

#[test]
fn drop_tail_drops_exactly_when_full() {
    let c = 8 * MBIT;
    let mut l = link(LinkConfig::new(
        Some(c),
        QueueLimit::Bytes(10_000),
        Duration::ZERO,
    ));
    let results: Vec<Offer> = (0..15).map(|_| l.offer(at(0), 1000, FlowId(0))).collect();
    let dropped = results.iter().filter(|o| **o == Offer::QueueDrop).count();
    assert_eq!(dropped, 5);
    assert!(results[..10].iter().all(|o| matches!(o, Offer::Forward(_))));
    // One packet left at 1000 µs: room for exactly one more.
    assert!(matches!(
        l.offer(at(1000), 1000, FlowId(0)),
        Offer::Forward(_)
    ));
    assert_eq!(l.offer(at(1000), 1000, FlowId(0)), Offer::QueueDrop);
    // Just before the next departure there is still no room.
    assert_eq!(l.offer(at(1999), 1000, FlowId(0)), Offer::QueueDrop);
    assert_eq!(l.stats().drops_queue, 7);
    assert_eq!(l.stats().packets_out, 11);
}

#[test]
fn a_packet_limit_counts_packets_not_bytes() {
    // 3 packets, whatever their size: 40-byte ACKs fill it as 1500-byte
    // segments do.
    let c = 8 * MBIT;
    let mut l = link(LinkConfig::new(
        Some(c),
        QueueLimit::Packets(3),
        Duration::ZERO,
    ));
    let sizes = [40, 1500, 40, 40, 1500];
    let results: Vec<Offer> = sizes
        .iter()
        .map(|&s| l.offer(at(0), s, FlowId(0)))
        .collect();
    assert!(results[..3].iter().all(|o| matches!(o, Offer::Forward(_))));
    assert!(results[3..].iter().all(|o| *o == Offer::QueueDrop));
    // The first (40 µs) has left by 40 µs: room for one, of any size.
    assert!(matches!(
        l.offer(at(40), 1500, FlowId(0)),
        Offer::Forward(_)
    ));
    assert_eq!(l.offer(at(40), 40, FlowId(0)), Offer::QueueDrop);
    assert_eq!(l.stats().drops_queue, 3);
}

#[test]
fn time_limit_converts_at_capacity() {
    let cfg = LinkConfig::new(
        Some(8 * MBIT),
        QueueLimit::Time(Duration::from_millis(100)),
        Duration::ZERO,
    );
    assert_eq!(cfg.limit_bytes(), 100_000);
    let mut l = link(cfg);
    let accepted = (0..200)
        .filter(|_| matches!(l.offer(at(0), 1000, FlowId(0)), Offer::Forward(_)))
        .count();
    assert_eq!(accepted, 100);
}

#[test]
fn occupancy_sampled_after_each_dequeue() {
    let mut l = link(LinkConfig::new(
        Some(8 * MBIT),
        QueueLimit::Unlimited,
        Duration::ZERO,
    ));
    l.record_samples();
    for _ in 0..4 {
        l.offer(at(0), 1000, FlowId(0));
    }
    l.backlog_at(at(10_000));
    let s: Vec<(u64, u64)> = l
        .samples()
        .unwrap()
        .iter()
        .map(|s| (s.at_us, s.backlog_bytes))
        .collect();
    assert_eq!(s, vec![(1000, 3000), (2000, 2000), (3000, 1000), (4000, 0)]);
    assert_eq!(l.stats().max_backlog_bytes, 3000);
}

#[test]
fn jitter_never_reorders() {
    let mut cfg = LinkConfig::new(None, QueueLimit::Unlimited, Duration::from_millis(10));
    cfg.jitter = Duration::from_millis(20);
    let mut l = link(cfg);
    let mut prev = 0;
    let mut extra = 0u64;
    let n = 10_000u64;
    for i in 0..n {
        let t = forward(l.offer(at(i * 100_000), 100, FlowId(0)));
        assert!(t >= prev);
        prev = t;
        extra += t - i * 100_000 - 10_000;
    }
    // Spaced far apart, so no clamping: mean extra delay ≈ 10 ms.
    let mean = extra as f64 / n as f64;
    assert!((mean - 10_000.0).abs() < 300.0, "mean jitter {mean}");
    // Packets closer than the jitter would overtake: they are held back.
    let mut l = link(LinkConfig {
        jitter: Duration::from_millis(20),
        ..LinkConfig::new(None, QueueLimit::Unlimited, Duration::ZERO)
    });
    let mut prev = 0;
    for i in 0..1000 {
        let t = forward(l.offer(at(i * 10), 100, FlowId(0)));
        assert!(t >= prev);
        prev = t;
    }
}

#[test]
fn random_loss_on_entry() {
    let mut cfg = LinkConfig::new(Some(100 * MBIT), QueueLimit::Unlimited, Duration::ZERO);
    cfg.loss = LossModel::Bernoulli { p: 0.02 };
    let mut l = link(cfg);
    let n = 100_000u64;
    for i in 0..n {
        l.offer(at(i * 1000), 1000, FlowId(0));
    }
    let lost = l.stats().drops_loss as f64;
    let sd = (n as f64 * 0.02 * 0.98).sqrt();
    assert!((lost - 2000.0).abs() < 5.0 * sd, "lost {lost}");
    assert_eq!(l.stats().packets_out + l.stats().drops_loss, n);
}

#[test]
fn traced_flows_count_their_own_drops_and_waits() {
    // A 3-packet queue shared by a traced "video" flow (1), a traced
    // "bulk" flow (2) and an untraced one (3), every packet at t = 0.
    let mut l = link(LinkConfig::new(
        Some(8 * MBIT),
        QueueLimit::Packets(3),
        Duration::ZERO,
    ));
    l.trace_flow(FlowId(1));
    l.trace_flow(FlowId(2));
    for flow in [2, 2, 1, 1, 3, 2] {
        l.offer(at(0), 1000, FlowId(flow));
    }
    // The first three are queued (waits 0, 1000 and 2000 µs), the rest
    // dropped: one of flow 1's, one of flow 2's and flow 3's.
    let video = l.flow_counts(FlowId(1)).unwrap();
    let bulk = l.flow_counts(FlowId(2)).unwrap();
    assert_eq!(
        (video.packets_in, video.drops_queue, video.sum_wait_us),
        (2, 1, 2000)
    );
    assert_eq!(
        (bulk.packets_in, bulk.drops_queue, bulk.sum_wait_us),
        (3, 1, 1000)
    );
    assert_eq!(l.stats().drops_queue, 3);
    assert_eq!(l.flow_counts(FlowId(3)), None);
    assert_eq!(l.flow_waits(FlowId(1)).unwrap().len(), 1);
}

#[test]
fn traced_flows_count_random_losses() {
    let mut cfg = LinkConfig::new(Some(8 * MBIT), QueueLimit::Unlimited, Duration::ZERO);
    cfg.loss = LossModel::Bernoulli { p: 0.1 };
    let mut l = link(cfg);
    l.trace_flow(FlowId(1));
    for k in 0..2000u32 {
        l.offer(at(u64::from(k) * 1000), 1000, FlowId(1 + k % 2));
    }
    let c = l.flow_counts(FlowId(1)).unwrap();
    assert_eq!(c.packets_in, 1000);
    assert!(c.drops_loss > 50 && c.drops_loss < 150, "{c:?}");
    assert!(c.drops_loss < l.stats().drops_loss);
    assert_eq!(c.drops_queue, 0);
}
