use super::*;
use crate::packet::{Body, FlowId};

const MBIT: u64 = 1_000_000;

fn access(mbit: u64, delay_ms: u64) -> LinkConfig {
    LinkConfig::new(
        Some(mbit * MBIT),
        QueueLimit::Bytes(64_000),
        Duration::from_millis(delay_ms),
    )
}

fn packet(src: HostId, dst: HostId, size: u32) -> Packet {
    Packet {
        src,
        dst,
        flow: FlowId(1),
        size,
        body: Body::Probe {
            seq: 0,
            sent: Instant::ZERO,
        },
    }
}

/// Runs the network until nothing is in flight; returns (time, packet).
fn drain(net: &mut Network) -> Vec<(u64, Packet)> {
    let mut out = Vec::new();
    while let Some(t) = net.poll_timeout() {
        net.handle_timeout(t);
        while let Some(p) = net.poll_delivery() {
            out.push((t.as_micros(), p));
        }
    }
    out
}

#[test]
fn end_to_end_time_adds_transmissions_and_delays() {
    let mut net = Network::new(1);
    // 8 Mbit/s: 1000 B take 1 ms; 1 ms access delays; 10 ms core.
    let a = net.add_host(access(8, 1), access(8, 1), None, 0);
    let b = net.add_host(access(8, 1), access(8, 1), None, 1);
    net.set_group_delays(vec![
        vec![Duration::ZERO, Duration::from_millis(10)],
        vec![Duration::from_millis(20), Duration::ZERO],
    ]);
    net.send(Instant::ZERO, packet(a, b, 1000));
    net.send(Instant::ZERO, packet(b, a, 1000));
    let got = drain(&mut net);
    // a→b: 1 + 1 (up) + 10 (core) + 1 + 1 (down) = 14 ms; b→a has 20 ms.
    assert_eq!(got[0].0, 14_000);
    assert_eq!(got[0].1.dst, b);
    assert_eq!(got[1].0, 24_000);
    assert_eq!(net.stats().delivered, 2);
}

#[test]
fn pair_delay_overrides_groups() {
    let mut net = Network::new(1);
    let a = net.add_host(access(8, 0), access(8, 0), None, 0);
    let b = net.add_host(access(8, 0), access(8, 0), None, 0);
    net.set_group_delays(vec![vec![Duration::from_millis(5)]]);
    net.set_pair_delay(a, b, Duration::from_millis(50));
    assert_eq!(net.core_delay(a, b), Duration::from_millis(50));
    assert_eq!(net.core_delay(b, a), Duration::from_millis(5));
}

#[test]
fn site_uplink_is_shared_and_skipped_inside_the_site() {
    let mut net = Network::new(1);
    // A site with a 1 Mbit/s uplink and a 10-packet queue.
    let site = net.add_site(
        LinkConfig::new(Some(MBIT), QueueLimit::Bytes(15_000), Duration::ZERO),
        access(100, 0),
    );
    let l1 = net.add_host(access(100, 0), access(100, 0), Some(site), 0);
    let l2 = net.add_host(access(100, 0), access(100, 0), Some(site), 0);
    let l3 = net.add_host(access(100, 0), access(100, 0), Some(site), 0);
    let remote = net.add_host(access(100, 0), access(100, 0), None, 0);
    // Two local hosts each push 20 packets out: the shared uplink holds 10.
    for _ in 0..20 {
        net.send(Instant::ZERO, packet(l1, remote, 1500));
        net.send(Instant::ZERO, packet(l2, remote, 1500));
    }
    // Local traffic does not touch the uplink.
    net.send(Instant::ZERO, packet(l3, l2, 1500));
    let got = drain(&mut net);
    let (up, _) = net.site_links(site).unwrap();
    let s = net.link(up).stats();
    assert_eq!(s.packets_in, 40);
    assert_eq!(s.drops_queue, 30);
    assert_eq!(got.iter().filter(|(_, p)| p.dst == remote).count(), 10);
    // The local packet arrives long before the uplink's 10 × 12 ms.
    let local = got.iter().find(|(_, p)| p.dst == l2).unwrap();
    assert!(local.0 < 1_000, "local at {}", local.0);
    let last_remote = got.iter().rev().find(|(_, p)| p.dst == remote).unwrap();
    assert!(last_remote.0 >= 10 * 12_000);
}

#[test]
fn unknown_hosts_are_ignored() {
    let mut net = Network::new(1);
    let a = net.add_host(access(8, 0), access(8, 0), None, 0);
    net.send(Instant::ZERO, packet(a, HostId(9), 100));
    assert_eq!(net.poll_timeout(), None);
    assert_eq!(net.stats().sent, 0);
}

#[test]
fn same_seed_same_losses() {
    let run = |seed| {
        let mut net = Network::new(seed);
        let mut lossy = access(100, 1);
        lossy.loss = LossModel::Bernoulli { p: 0.3 };
        let a = net.add_host(lossy, access(100, 1), None, 0);
        let b = net.add_host(access(100, 1), access(100, 1), None, 0);
        for i in 0..200u64 {
            net.send(Instant::from_micros(i * 1000), packet(a, b, 500));
        }
        drain(&mut net)
            .iter()
            .map(|(t, _)| *t)
            .collect::<Vec<u64>>()
    };
    assert_eq!(run(3), run(3));
    assert_ne!(run(3), run(4));
}

#[test]
fn nested_sites_are_climbed_only_as_far_as_needed() {
    let mut net = Network::new(1);
    // An ISP site holding two access sites; one host in each, one outside.
    let isp = net.add_site(access(100, 0), access(100, 0));
    let home1 = net.add_site(access(100, 0), access(100, 0));
    let home2 = net.add_site(access(100, 0), access(100, 0));
    assert!(net.set_site_parent(home1, isp));
    assert!(net.set_site_parent(home2, isp));
    let a = net.add_host(access(100, 0), access(100, 0), Some(home1), 0);
    let b = net.add_host(access(100, 0), access(100, 0), Some(home2), 0);
    let c = net.add_host(access(100, 0), access(100, 0), Some(isp), 0);
    let far = net.add_host(access(100, 0), access(100, 0), None, 0);
    let sends = [(a, b, 1), (a, far, 2), (far, b, 4), (a, c, 8), (c, far, 16)];
    for (src, dst, n) in sends {
        for _ in 0..n {
            net.send(Instant::ZERO, packet(src, dst, 100));
        }
    }
    assert_eq!(drain(&mut net).len(), 31);
    let count = |site: SiteId| {
        let (up, down) = net.site_links(site).unwrap();
        (
            net.link(up).stats().packets_in,
            net.link(down).stats().packets_in,
        )
    };
    // home1 up: a→b, a→far, a→c. home2 down: a→b, far→b.
    assert_eq!(count(home1), (1 + 2 + 8, 0));
    assert_eq!(count(home2), (0, 1 + 4));
    // The ISP's links carry only what leaves or enters it: a→far and
    // c→far up, far→b down; a→b and a→c stay inside.
    assert_eq!(count(isp), (2 + 16, 4));
}

#[test]
fn site_cycles_and_deep_nesting_are_refused() {
    let mut net = Network::new(1);
    let sites: Vec<SiteId> = (0..6)
        .map(|_| net.add_site(access(100, 0), access(100, 0)))
        .collect();
    assert!(net.set_site_parent(sites[1], sites[0]));
    assert!(!net.set_site_parent(sites[0], sites[1]), "a cycle");
    assert!(!net.set_site_parent(sites[2], sites[2]), "its own parent");
    assert!(net.set_site_parent(sites[2], sites[1]));
    assert!(net.set_site_parent(sites[3], sites[2]));
    // Five deep is one too many.
    assert!(!net.set_site_parent(sites[4], sites[3]));
    assert!(!net.set_site_parent(sites[0], SiteId(99)));
}

#[test]
fn lookahead_is_the_least_uplink_plus_core_delay() {
    let mut net = Network::new(1);
    let a = net.add_host(access(8, 3), access(8, 1), None, 0);
    let b = net.add_host(access(8, 2), access(8, 1), None, 1);
    net.set_group_delays(vec![
        vec![Duration::from_millis(30), Duration::from_millis(10)],
        vec![Duration::from_millis(20), Duration::from_millis(40)],
    ]);
    assert_eq!(net.lookahead(), Duration::from_millis(2 + 10));
    // A shorter pair delay counts.
    net.set_pair_delay(a, b, Duration::from_millis(4));
    assert_eq!(net.lookahead(), Duration::from_millis(2 + 4));
    // A host in a group the matrix lacks has no core delay.
    net.add_host(access(8, 5), access(8, 1), None, 2);
    assert_eq!(net.lookahead(), Duration::from_millis(2));
}

#[test]
fn a_packet_for_another_partition_is_handed_over_and_arrives_as_in_one() {
    let build = || {
        let mut net = Network::new(1);
        let a = net.add_host(access(8, 1), access(8, 1), None, 0);
        let b = net.add_host(access(8, 1), access(8, 1), None, 1);
        net.set_group_delays(vec![
            vec![Duration::ZERO, Duration::from_millis(10)],
            vec![Duration::from_millis(20), Duration::ZERO],
        ]);
        (net, a, b)
    };
    let (mut whole, a, b) = build();
    whole.send(Instant::ZERO, packet(a, b, 1000));
    let want = drain(&mut whole);
    // Host a in partition 0, host b in partition 1.
    let (mut p0, _, _) = build();
    let (mut p1, _, _) = build();
    p0.set_partitioning(Partitioning { part: 0, parts: 2 });
    p1.set_partitioning(Partitioning { part: 1, parts: 2 });
    p0.send(Instant::ZERO, packet(a, b, 1000));
    // Partition 0 moves it over a's uplink and no further.
    assert!(drain(&mut p0).is_empty());
    let out = p0.take_outbox();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].dst(), b);
    for h in out {
        p1.inject(h);
    }
    let got = drain(&mut p1);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, want[0].0);
    // Each partition counted its own links; together they make the whole.
    p0.absorb(&mut p1);
    assert_eq!(p0.stats().sent, 1);
    assert_eq!(p0.stats().delivered, 1);
    let (_, down_b) = p0.access_links(b).unwrap();
    assert_eq!(p0.link(down_b).stats().packets_out, 1);
}
