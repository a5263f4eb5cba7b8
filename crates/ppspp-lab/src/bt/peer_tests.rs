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
