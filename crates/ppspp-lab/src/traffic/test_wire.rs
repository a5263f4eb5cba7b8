//! The test wire the TCP and uTP models' unit tests run a sender and a
//! receiver over: a fixed delay each way and, optionally, a drop-tail
//! bottleneck on the data direction. Which data packets are lost is the
//! caller's (each model's pipe keeps its own drop list).

use std::time::Duration;

use ppspp_core::time::Instant;

use crate::agent::Agent;
use crate::packet::Packet;

/// Packets in flight between a sender and a receiver, and the clock.
pub struct Wire {
    /// Virtual time now.
    pub now: Instant,
    /// One-way delay.
    pub delay: Duration,
    /// (bits/s, queue limit in packets) of the data direction.
    pub bottleneck: Option<(u64, usize)>,
    /// Transmission ends of the packets in the bottleneck, oldest first.
    queue: Vec<Instant>,
    /// Packets travelling: (arrival, order, to the receiver?, packet).
    flight: Vec<(Instant, u64, bool, Packet)>,
    order: u64,
}

impl Wire {
    /// An empty wire of `delay` each way at time zero.
    pub fn new(delay: Duration) -> Wire {
        Wire {
            now: Instant::ZERO,
            delay,
            bottleneck: None,
            queue: Vec::new(),
            flight: Vec::new(),
            order: 0,
        }
    }

    /// `p` arrives at `at`, at the receiver or back at the sender.
    pub fn travel(&mut self, at: Instant, to_receiver: bool, p: Packet) {
        self.order += 1;
        self.flight.push((at, self.order, to_receiver, p));
    }

    /// A data packet through the bottleneck, if any, then the delay;
    /// false if the bottleneck's queue was full.
    pub fn send_data(&mut self, p: Packet) -> bool {
        let mut at = self.now + self.delay;
        if let Some((bps, limit)) = self.bottleneck {
            let now = self.now;
            self.queue.retain(|end| *end > now);
            if self.queue.len() >= limit {
                return false;
            }
            let begin = self.queue.last().copied().unwrap_or(now).max(now);
            let end = begin + Duration::from_micros(u64::from(p.size) * 8_000_000 / bps);
            self.queue.push(end);
            at = end + self.delay;
        }
        self.travel(at, true, p);
        true
    }

    /// Runs `s` and `r` up to and including `end`. Each packet the sender
    /// sends goes to `data` (which decides its fate, usually through
    /// [`Wire::send_data`]); each the receiver sends is checked by `ack`
    /// and travels back after the delay.
    pub fn run_until(
        &mut self,
        s: &mut dyn Agent,
        r: &mut dyn Agent,
        end: Instant,
        data: &mut dyn FnMut(&mut Wire, Packet),
        ack: &dyn Fn(&Packet),
    ) {
        loop {
            self.drain(s, r, data, ack);
            let packet = self
                .flight
                .iter()
                .enumerate()
                .min_by_key(|(_, f)| (f.0, f.1))
                .map(|(i, f)| (f.0, i));
            let timer = [s.poll_timeout(), r.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let next = match (packet, timer) {
                (Some((t, _)), Some(u)) => t.min(u),
                (Some((t, _)), None) => t,
                (None, Some(u)) => u,
                (None, None) => break,
            };
            if next > end {
                break;
            }
            self.now = next;
            match packet {
                Some((t, i)) if t == next => {
                    let (_, _, to_receiver, p) = self.flight.swap_remove(i);
                    if to_receiver {
                        r.on_packet(next, p);
                    } else {
                        s.on_packet(next, p);
                    }
                }
                _ => {
                    s.on_timeout(next);
                    r.on_timeout(next);
                }
            }
        }
        self.now = self.now.max(end);
    }

    fn drain(
        &mut self,
        s: &mut dyn Agent,
        r: &mut dyn Agent,
        data: &mut dyn FnMut(&mut Wire, Packet),
        ack: &dyn Fn(&Packet),
    ) {
        loop {
            let mut any = false;
            while let Some(p) = s.poll_transmit(self.now) {
                data(self, p);
                any = true;
            }
            while let Some(p) = r.poll_transmit(self.now) {
                ack(&p);
                self.travel(self.now + self.delay, false, p);
                any = true;
            }
            if !any {
                return;
            }
        }
    }
}
