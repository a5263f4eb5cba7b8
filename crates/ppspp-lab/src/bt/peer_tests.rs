//! BitTorrent peers over a test network: a fixed one-way delay, and
//! optionally an uplink per host of a given rate (a FIFO without loss).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Duration;

use ppspp_core::time::Instant;
use rand::SeedableRng;

use super::*;
use crate::packet::{HostId, Packet};

struct Net {
    peers: Vec<BtPeer>,
    delay: Duration,
    /// Uplink rate in bit/s, if limited; when each uplink is next free.
    uplink: Option<u64>,
    free_at: Vec<Instant>,
    flight: BinaryHeap<Reverse<(Instant, u64, usize)>>,
    packets: Vec<Option<Packet>>,
    order: u64,
    now: Instant,
}

impl Net {
    fn new(seeds: usize, leechers: usize, total: u64, config: &BtConfig) -> Net {
        let n = seeds + leechers;
        let peers = (0..n)
            .map(|i| {
                let rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(i as u64);
                BtPeer::new(
                    HostId(i as u32),
                    config.clone(),
                    total,
                    i < seeds,
                    Instant::ZERO,
                    rng,
                )
            })
            .collect();
        Net {
            peers,
            delay: Duration::from_millis(20),
            uplink: None,
            free_at: vec![Instant::ZERO; n],
            flight: BinaryHeap::new(),
            packets: Vec::new(),
            order: 0,
            now: Instant::ZERO,
        }
    }

    fn drain(&mut self, i: usize) {
        while let Some(p) = self.peers[i].poll_transmit(self.now) {
            let mut at = self.now;
            if let Some(bps) = self.uplink {
                let start = self.free_at[i].max(self.now);
                let end = start + Duration::from_micros(u64::from(p.size) * 8_000_000 / bps);
                self.free_at[i] = end;
                at = end;
            }
            self.order += 1;
            self.packets.push(Some(p));
            self.flight.push(Reverse((
                at + self.delay,
                self.order,
                self.packets.len() - 1,
            )));
        }
    }

    fn run_until(&mut self, end: Instant) {
        for i in 0..self.peers.len() {
            self.drain(i);
        }
        loop {
            let tp = self.flight.peek().map(|r| r.0 .0);
            let tt = (0..self.peers.len())
                .filter_map(|i| self.peers[i].poll_timeout().map(|t| (t, i)))
                .min();
            let next = match (tp, tt) {
                (Some(a), Some((b, _))) => a.min(b),
                (Some(a), None) => a,
                (None, Some((b, _))) => b,
                (None, None) => break,
            };
            if next > end {
                break;
            }
            self.now = next;
            if tp == Some(next) {
                let Reverse((_, _, k)) = self.flight.pop().unwrap();
                let p = self.packets[k].take().unwrap();
                let i = p.dst.0 as usize;
                self.peers[i].on_packet(next, p);
                self.drain(i);
            } else if let Some((_, i)) = tt {
                self.peers[i].on_timeout(next);
                self.drain(i);
            }
        }
        self.now = end;
    }
}

fn secs(s: u64) -> Instant {
    Instant::from_micros(s * 1_000_000)
}

#[test]
fn a_seed_and_three_leechers_all_complete_and_bytes_are_conserved() {
    let total = 20 * 256 * 1024 + 5000;
    let config = BtConfig {
        disposition: Disposition(5),
        ..BtConfig::default()
    };
    let mut net = Net::new(1, 3, total, &config);
    net.uplink = Some(2_000_000);
    for i in 1..4 {
        for j in 0..4 {
            net.peers[i].connect(Instant::ZERO, HostId(j));
        }
    }
    net.run_until(secs(600));
    for p in &net.peers[1..] {
        eprintln!("completed at {:?}: {:?}", p.completed_at(), p.stats());
        assert!(
            p.completed_at().is_some(),
            "{:?} {:?}",
            p.progress(),
            p.stats()
        );
        assert_eq!(p.stats().bytes_down, total);
        assert_eq!(p.stats().bytes_down_tcp, total);
    }
    let up: u64 = net.peers.iter().map(|p| p.stats().bytes_up).sum();
    let dup: u64 = net.peers.iter().map(|p| p.stats().duplicate_blocks).sum();
    assert!(up >= 3 * total);
    assert!(up <= 3 * total + dup * 16 * 1024);
    // Each pair of peers ends with one connection: three leechers opened
    // to each other both ways, and the duplicates were closed.
    for p in &net.peers {
        assert_eq!(p.connections(), 3, "{:?}", p.stats());
    }
    // Exactly: each leecher opened 3 (the seed and the other two) and
    // accepted 2; of each leecher pair's two connections one was closed,
    // counted at both ends; the seed accepted 3 and closed none.
    for p in &net.peers[1..] {
        let s = p.stats();
        assert_eq!((s.connects, s.accepts, s.duplicates_closed), (3, 2, 2));
        assert_eq!((s.connect_failures, s.stray_packets), (0, 0));
    }
    let s = net.peers[0].stats();
    assert_eq!((s.connects, s.accepts, s.duplicates_closed), (0, 3, 0));
    // Leechers traded among themselves, not only with the seed.
    let from_peers: u64 = net.peers[1..]
        .iter()
        .map(|p| {
            p.stats()
                .down_from
                .iter()
                .filter(|(h, _)| **h != 0)
                .map(|(_, b)| *b)
                .sum::<u64>()
        })
        .sum();
    assert!(from_peers > 0);
}

#[test]
fn a_peer_that_takes_no_tcp_is_not_reached_over_tcp() {
    let total = 256 * 1024;
    let mut net = Net::new(1, 1, total, &BtConfig::default());
    // The seed accepts nothing.
    net.peers[0].config.disposition = Disposition(0);
    net.peers[1].config.disposition = Disposition(5);
    net.peers[1].connect(Instant::ZERO, HostId(0));
    net.run_until(secs(60));
    let s = net.peers[1].stats();
    assert_eq!((s.connects, s.connect_failures), (1, 1));
    assert_eq!(net.peers[0].stats().stray_packets, s.connects * 4);
    assert_eq!(net.peers[1].progress().0, 0);
}

#[test]
fn with_fewer_connection_slots_than_peers_everyone_still_connects_and_completes() {
    // Twelve peers told of every other, room for four connections each and
    // two opening at a time: attempts queue behind the half-open limit,
    // so nobody fills its slots with attempts and refuses everyone.
    let total = 8 * 256 * 1024;
    let config = BtConfig {
        disposition: Disposition(5),
        max_peers: 4,
        max_half_open: 2,
        ..BtConfig::default()
    };
    let mut net = Net::new(1, 11, total, &config);
    net.uplink = Some(4_000_000);
    for i in 0..12 {
        for j in 0..12 {
            net.peers[i].connect(Instant::ZERO, HostId(j));
        }
    }
    net.run_until(secs(900));
    for p in &net.peers {
        assert!(p.connections() <= 4);
        assert!(p.connections() >= 1, "{:?}", p.stats());
    }
    for p in &net.peers[1..] {
        assert!(
            p.completed_at().is_some(),
            "{:?} {:?}",
            p.progress(),
            p.stats()
        );
    }
}

/// A seed and one leecher of the given dispositions, run to the end.
fn pair(seed: u8, leecher: u8) -> Net {
    let total = 4 * 256 * 1024;
    let mut net = Net::new(1, 1, total, &BtConfig::default());
    net.peers[0].config.disposition = Disposition(seed);
    net.peers[1].config.disposition = Disposition(leecher);
    net.uplink = Some(4_000_000);
    net.peers[1].connect(Instant::ZERO, HostId(0));
    net.run_until(secs(120));
    net
}

#[test]
fn with_both_transports_the_tcp_connection_is_dropped_for_utp() {
    let net = pair(31, 31);
    let s = net.peers[1].stats();
    assert!(net.peers[1].completed_at().is_some());
    assert_eq!(s.connects, 2, "uTP and TCP at once");
    assert_eq!(s.duplicates_closed, 1);
    assert_eq!(s.bytes_down_utp, s.bytes_down);
    assert_eq!(net.peers[0].connections(), 1);
}

#[test]
fn a_utp_connection_opened_by_the_other_side_carries_a_tcp_preferring_peers_data() {
    // Seed 001's case 1: A (13) opens TCP only, B (14) uTP only, both
    // accept either. Each opens its own connection to the other; the uTP
    // one is kept, and A sends B its data over uTP.
    let total = 16 * 256 * 1024;
    let mut net = Net::new(1, 2, total, &BtConfig::default());
    net.peers[1].config.disposition = Disposition(13);
    net.peers[2].config.disposition = Disposition(14);
    net.uplink = Some(1_000_000);
    for (i, j) in [(1, 0), (2, 0), (1, 2), (2, 1)] {
        net.peers[i].connect(Instant::ZERO, HostId(j));
    }
    net.run_until(secs(300));
    let (a, b) = (net.peers[1].stats(), net.peers[2].stats());
    assert!(net.peers[1].completed_at().is_some(), "{a:?}");
    assert!(net.peers[2].completed_at().is_some(), "{b:?}");
    // A's link to the seed is TCP (A opened it); everything of B's is uTP.
    assert_eq!(a.bytes_down_tcp, a.down_from[&0], "{a:?}");
    assert_eq!(b.bytes_down_tcp, 0, "{b:?}");
    // A uploaded to B, all of it over uTP.
    assert!(b.down_from[&1] > 0, "{b:?}");
    assert_eq!(a.bytes_up_tcp, 0, "{a:?}");
    assert_eq!(a.duplicates_closed, 1);
    assert_eq!(b.duplicates_closed, 1);
}

#[test]
fn a_tcp_only_peer_and_a_default_peer_talk_tcp() {
    // Case 2: A is 5 (TCP only both ways), the seed 31.
    let net = pair(31, 5);
    let s = net.peers[1].stats();
    assert!(net.peers[1].completed_at().is_some());
    assert_eq!(s.bytes_down_tcp, s.bytes_down);
    // A uTP-only peer cannot reach a TCP-only one.
    let net = pair(5, 10);
    let s = net.peers[1].stats();
    assert_eq!((s.connects, s.connect_failures, s.bytes_down), (1, 1, 0));
}
