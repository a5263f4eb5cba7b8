//! Sender and receiver together over a test pipe (a fixed delay each way,
//! chosen data transmissions dropped, optionally a drop-tail bottleneck on
//! the data direction), and the sender alone fed crafted ST_STATEs. Times
//! are in ms; without a bottleneck a whole window leaves at one instant, so
//! every round trip is exactly 100 ms.

use std::collections::BTreeMap;
use std::time::Duration;

use super::*;
use crate::agent::Agent;
use crate::packet::{Body, FlowId, HostId, Packet, SelectiveAck, UtpPacket, UtpType};
use crate::traffic::test_wire::Wire;
use ppspp_core::time::Instant;

const P: u64 = UTP_PACKET_SIZE as u64;

pub(super) fn ms(n: u64) -> Instant {
    Instant::from_micros(n * 1000)
}

pub(super) fn utp(p: &Packet) -> &UtpPacket {
    match &p.body {
        Body::Utp(u) => u,
        _ => panic!("not uTP"),
    }
}

struct Pipe {
    s: UtpSender,
    r: UtpReceiver,
    wire: Wire,
    /// (sequence number, transmission number from 1) to drop.
    drops: Vec<(u64, u32)>,
    /// Drop every data packet sent in `[a, b)`.
    blackout: Option<(Instant, Instant)>,
    transmissions: BTreeMap<u64, u32>,
    /// Every packet the sender sent: (time, seq_nr, type).
    sent: Vec<(Instant, u64, UtpType)>,
}

impl Pipe {
    fn new(total: Option<u64>, drops: &[(u64, u32)]) -> Pipe {
        let mut c = UtpSenderConfig::new(HostId(1), HostId(2), FlowId(5), Instant::ZERO);
        c.total_bytes = total;
        Pipe::with(UtpSender::new(c), drops)
    }

    fn with(s: UtpSender, drops: &[(u64, u32)]) -> Pipe {
        Pipe {
            s,
            r: UtpReceiver::new(UtpReceiverConfig::new(HostId(2), HostId(1), FlowId(5))),
            wire: Wire::new(Duration::from_millis(50)),
            drops: drops.to_vec(),
            blackout: None,
            transmissions: BTreeMap::new(),
            sent: Vec::new(),
        }
    }

    fn config(handshake: bool) -> UtpSenderConfig {
        let mut c = UtpSenderConfig::new(HostId(1), HostId(2), FlowId(5), Instant::ZERO);
        c.handshake = handshake;
        c
    }

    /// Runs every event up to and including `end`: data packets are
    /// checked, recorded and dropped as listed (or in the blackout); the
    /// receiver sends only ST_STATEs.
    fn run_until(&mut self, end: Instant) {
        let Pipe {
            s,
            r,
            wire,
            drops,
            blackout,
            transmissions,
            sent,
        } = self;
        let mut data = |w: &mut Wire, p: Packet| {
            let u = utp(&p).clone();
            assert_eq!(p.size, 28 + 20 + u.len, "no extension on data");
            sent.push((w.now, u.seq_nr, u.kind));
            let n = transmissions.entry(u.seq_nr).or_insert(0);
            *n += 1;
            let dark = blackout.is_some_and(|(a, b)| w.now >= a && w.now < b);
            if !drops.contains(&(u.seq_nr, *n)) && !dark {
                w.send_data(p);
            }
        };
        let ack = |p: &Packet| assert_eq!(utp(p).kind, UtpType::State);
        wire.run_until(s, r, end, &mut data, &ack);
    }

    /// When packet `seq` was sent, every time.
    fn sent_at(&self, seq: u64) -> Vec<Instant> {
        self.sent
            .iter()
            .filter(|s| s.1 == seq)
            .map(|s| s.0)
            .collect()
    }
}

/// An ST_STATE acking up to `ack_nr` with a delay sample of `delay_ms`.
fn state(ack_nr: u64, delay_ms: u64, sack: Option<u32>) -> Packet {
    let body = UtpPacket {
        kind: UtpType::State,
        seq_nr: 0,
        ack_nr,
        timestamp: 0,
        timestamp_difference: delay_ms * 1000,
        wnd_size: 1 << 20,
        sack: sack.map(SelectiveAck),
        offset: 0,
        len: 0,
        records: Vec::new(),
        conn: 0,
    };
    Packet {
        src: HostId(2),
        dst: HostId(1),
        flow: FlowId(5),
        size: body.wire_size(),
        body: Body::Utp(body),
    }
}

/// Everything the sender sends at `now`.
fn burst(s: &mut UtpSender, now: Instant) -> Vec<UtpPacket> {
    std::iter::from_fn(|| s.poll_transmit(now))
        .map(|p| utp(&p).clone())
        .collect()
}

/// libutp's step, written out from the formula independently of the
/// sender: `max_window + 3000 · window_factor · off_target / target`,
/// truncated, for a sender out of slow start.
fn expected_step(max_window: u64, acked: u64, our_delay_us: u64, target_us: u64) -> u64 {
    let (w, a) = (max_window as f64, acked as f64);
    let window_factor = a.min(w) / a.max(w);
    let off_target = (target_us as f64 - our_delay_us as f64) / target_us as f64;
    (w + 3000.0 * window_factor * off_target) as u64
}

#[test]
fn the_window_step_per_ack_is_libutps_formula() {
    let mut s = UtpSender::new(UtpSenderConfig::new(
        HostId(1),
        HostId(2),
        FlowId(5),
        Instant::ZERO,
    ));
    s.slow_start = false;
    s.max_window = 20 * P;
    let sent = burst(&mut s, ms(0));
    assert_eq!(sent.len(), 20, "a window of 20 packets");
    assert_eq!(sent[0].seq_nr, 1);
    // Delay samples against a 50 ms base (the first). The filter is the
    // minimum of the last three excesses, starting from libutp's zeros:
    // 80, 90, 85 ms give 0, 0, then min(35, 30, 40) = 30 ms; then three of
    // 200 ms (150 above the base) push it to 35, 35, 150 ms. Round trips
    // are 200 ms or more, so min_rtt does not bind. Each ACK acks one
    // packet, the last three three packets each (cumulatively).
    let steps = [
        (50, 0, 1),
        (80, 0, 1),
        (90, 0, 1),
        (85, 30_000, 1),
        (200, 35_000, 3),
        (200, 35_000, 3),
        (200, 150_000, 3),
    ];
    let mut ack = 0;
    for (i, (d, our_delay, n)) in steps.into_iter().enumerate() {
        let before = s.max_window();
        ack += n;
        let now = ms(200 + i as u64);
        s.on_packet(now, state(ack, d, None));
        assert_eq!(
            s.delay_history().value().min(200_000),
            our_delay,
            "ack {ack}: the filter"
        );
        assert_eq!(
            s.max_window(),
            expected_step(before, n * P, our_delay, 100_000),
            "ack {ack}"
        );
        if our_delay > 100_000 {
            assert!(s.max_window() < before, "above target it shrinks");
        } else {
            assert!(s.max_window() > before, "below target it grows");
        }
        burst(&mut s, now);
    }
}

#[test]
fn a_target_of_25ms_scales_the_step() {
    let mut c = UtpSenderConfig::new(HostId(1), HostId(2), FlowId(5), Instant::ZERO);
    c.target = Duration::from_millis(25);
    let mut s = UtpSender::new(c);
    s.slow_start = false;
    s.max_window = 10 * P;
    burst(&mut s, ms(0));
    // Against a 40 ms base, 10 ms excess samples reach the filter's
    // minimum only once its three initial zeros are gone.
    for (i, d) in [40, 50, 50, 50].into_iter().enumerate() {
        let before = s.max_window();
        s.on_packet(ms(100), state(i as u64 + 1, d, None));
        let our_delay = [0, 0, 0, 10_000][i];
        assert_eq!(s.max_window(), expected_step(before, P, our_delay, 25_000));
    }
}

#[test]
fn slow_start_grows_by_a_packet_per_window_and_ends_near_the_target() {
    let mut s = UtpSender::new(Pipe::config(false));
    assert_eq!(s.max_window(), P, "libutp starts with one packet");
    burst(&mut s, ms(0));
    // First ACK, no delay yet: window_factor 1, so slow start adds a
    // packet, but LEDBAT's step at zero delay adds 3000 bytes: the larger.
    s.on_packet(ms(100), state(1, 30, None));
    assert_eq!(s.max_window(), P + 3000);
    assert!(s.in_slow_start());
    burst(&mut s, ms(100));
    // A delay of 95 ms above the base (> 90 % of 100 ms) ends slow start.
    for (n, d) in [(2, 125), (3, 125), (4, 125)] {
        s.on_packet(ms(200), state(n, d, None));
    }
    assert!(!s.in_slow_start());
}

#[test]
fn a_loss_halves_the_window_at_most_once_per_100ms() {
    let mut p = Pipe::new(None, &[(30, 1), (32, 1)]);
    p.run_until(ms(5000));
    // Both went in one round, so both are found lost at one instant.
    assert_eq!(p.sent_at(30)[0], p.sent_at(32)[0]);
    assert_eq!(p.s.stats().fast_resends, 2);
    assert_eq!(p.s.stats().decays, 1, "two losses of one window: one cut");
    assert_eq!(p.s.stats().timeouts, 0);
    // A loss well after the last cut is cut for again.
    let later = p.s.seq_nr + 20;
    p.drops.push((later, 1));
    p.run_until(ms(10_000));
    assert_eq!(p.s.stats().decays, 2);
}

#[test]
fn the_window_halves_on_loss() {
    let mut s = UtpSender::new(Pipe::config(false));
    s.slow_start = false;
    s.max_window = 40 * P;
    burst(&mut s, ms(0));
    // Packet 1 lost: packets 2, 3, 4 are acked selectively (bits 0-2 of
    // a mask based at ack_nr + 2 = 2). libutp runs the controller on what
    // the ACK acknowledged (three packets, no queueing delay yet), then
    // halves for the loss.
    let before = s.max_window();
    s.on_packet(ms(100), state(0, 50, Some(0b111)));
    assert_eq!(s.max_window(), expected_step(before, 3 * P, 0, 100_000) / 2);
    assert!(!s.in_slow_start());
    let resent = burst(&mut s, ms(100));
    assert_eq!(resent[0].seq_nr, 1, "the missing packet first");
    // Within 100 ms a further ACK (of packet 5) only steps the window.
    let before = s.max_window();
    s.on_packet(ms(150), state(0, 50, Some(0b1111)));
    assert_eq!(s.max_window(), expected_step(before, P, 0, 100_000));
    assert_eq!(s.stats().decays, 1);
    // Packet 6 lost too, found at 200 ms: 1 (resent) is acked, and 7, 8,
    // 9 selectively. A new cut.
    let before = s.max_window();
    s.on_packet(ms(200), state(5, 50, Some(0b111)));
    assert_eq!(s.max_window(), expected_step(before, 4 * P, 0, 100_000) / 2);
    assert_eq!(s.stats().decays, 2);
}

#[test]
fn sack_resends_exactly_the_missing_packet_after_three_later_ones() {
    let mut p = Pipe::new(Some(60 * P), &[(5, 1)]);
    p.run_until(ms(10_000));
    assert!(p.s.is_complete());
    assert_eq!(p.r.delivered(), 60 * P);
    let again: Vec<u64> = p
        .transmissions
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(again, vec![5], "only packet 5 went twice");
    assert_eq!(p.s.stats().fast_resends, 1);
    assert_eq!(p.s.stats().timeouts, 0);
    // It went again when the ACK showing 6, 7 and 8 held came back.
    let at = p.sent_at(5);
    let eighth = p.sent_at(8)[0];
    assert_eq!(at[1], eighth + Duration::from_millis(100));
}

#[test]
fn three_duplicate_acks_resend_when_the_mask_shows_nothing() {
    let mut s = UtpSender::new(Pipe::config(false));
    s.slow_start = false;
    s.max_window = 60 * P;
    burst(&mut s, ms(0));
    // Packet 1 lost; the receiver holds packets beyond the mask's 32 only.
    for i in 0..2 {
        s.on_packet(ms(100 + i), state(0, 50, Some(0)));
        assert!(burst(&mut s, ms(100 + i)).is_empty());
    }
    s.on_packet(ms(102), state(0, 50, Some(0)));
    let resent = burst(&mut s, ms(102));
    assert_eq!(resent.iter().map(|u| u.seq_nr).collect::<Vec<_>>(), vec![1]);
    assert_eq!(s.stats().fast_resends, 1);
}

#[test]
fn a_timeout_drops_the_window_to_one_packet_and_the_timer_doubles() {
    let mut p = Pipe::new(None, &[]);
    p.run_until(ms(3000));
    let rto = p.s.rto.rto();
    assert_eq!(rto, Duration::from_secs(1), "libutp's floor");
    let rtt = p.s.rtt();
    assert!(p.s.max_window() > 10 * P);
    // Everything sent from 3 s to 6.5 s is lost.
    p.blackout = Some((ms(3000), ms(6500)));
    p.run_until(ms(6500));
    assert_eq!(p.s.stats().timeouts, 2);
    assert_eq!(p.s.max_window(), P, "one packet");
    assert!(p.s.in_slow_start());
    assert_eq!(p.s.timeout(), rto * 4, "doubled twice");
    // The oldest packet went again at each expiry: one RTO after the last
    // ACK, then two RTOs later.
    let oldest = p.s.oldest();
    let at = p.sent_at(oldest);
    assert_eq!(at.len(), 3);
    assert_eq!(at[2] - at[1], rto * 2);
    // The third expiry, 4 RTOs after the second, gets through. The ACKs of resent packets
    // give no RTT sample (Karn's rule), but end the back-off.
    p.run_until(at[2] + rto * 4 + Duration::from_millis(150));
    assert_eq!(p.s.stats().timeouts, 3);
    assert_eq!(p.sent_at(oldest).last(), Some(&(at[2] + rto * 4)));
    assert_eq!(p.s.rtt(), rtt);
    assert_eq!(p.s.timeout(), rto, "an ACK ends the back-off");
}

#[test]
fn the_syn_handshake_costs_one_round_trip_before_data() {
    let mut p = Pipe::with(UtpSender::new(Pipe::config(true)), &[]);
    p.run_until(ms(1000));
    assert_eq!(p.s.stats().syns_sent, 1);
    assert!(p.s.is_open());
    assert_eq!(p.sent[0], (ms(0), 0, UtpType::Syn));
    assert_eq!(p.sent[1], (ms(100), 1, UtpType::Data), "data one RTT later");
    assert_eq!(p.s.rtt(), Some(Duration::from_millis(100)));
}

#[test]
fn a_lost_syn_is_retried_at_the_backed_off_timer() {
    let mut p = Pipe::with(UtpSender::new(Pipe::config(true)), &[(0, 1), (0, 2)]);
    p.run_until(ms(9150));
    // libutp times the ST_SYN by 3 s, doubling.
    assert_eq!(p.sent_at(0), vec![ms(0), ms(3000), ms(9000)]);
    assert_eq!(p.s.stats().syns_sent, 3);
    assert!(p.s.is_open());
    assert_eq!(p.s.rtt(), None, "no sample from a resent ST_SYN");
    assert_eq!(p.sent_at(1), vec![ms(9100)]);
    p.run_until(ms(9250));
    assert_eq!(p.s.rtt(), Some(Duration::from_millis(100)), "data's is");
}

#[test]
fn stream_records_arrive_in_order_across_a_loss_and_the_fin_closes() {
    let mut s = UtpSender::stream(Pipe::config(true));
    let mut ends = Vec::new();
    for i in 0..40u8 {
        ends.push(s.write(1000 + u64::from(i) * 37, vec![i; 13]));
    }
    s.close();
    assert_eq!(s.unsent(), *ends.last().unwrap());
    let mut p = Pipe::with(s, &[(3, 1), (4, 1), (9, 1)]);
    p.run_until(ms(20_000));
    assert!(p.s.is_complete());
    assert_eq!(p.s.unsent(), 0);
    assert!(p.r.is_finished());
    assert_eq!(p.r.delivered(), *ends.last().unwrap());
    let got: Vec<_> = std::iter::from_fn(|| p.r.take_record()).collect();
    assert_eq!(got.iter().map(|r| r.end).collect::<Vec<_>>(), ends);
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r.data, vec![i as u8; 13]);
    }
    assert!(p.s.stats().retransmits >= 3);
    let fin = p.sent.iter().filter(|x| x.2 == UtpType::Fin).count();
    assert_eq!(fin, 1);
}

#[test]
fn the_receiver_window_limits_the_sender() {
    let mut c = UtpReceiverConfig::new(HostId(2), HostId(1), FlowId(5));
    c.buffer = 4 * P;
    c.read_on_delivery = false;
    let mut s = UtpSender::stream(Pipe::config(false));
    s.write(40 * P, Vec::new());
    let mut p = Pipe::with(s, &[]);
    p.r = UtpReceiver::new(c);
    p.run_until(ms(2000));
    assert_eq!(p.r.delivered(), 4 * P, "a full buffer stops the sender");
    assert_eq!(p.r.window(), 0);
    p.r.read(4 * P);
    p.run_until(ms(4000));
    assert_eq!(p.r.delivered(), 8 * P, "a read opens the window again");
}

#[test]
fn alone_on_a_bottleneck_the_queue_settles_at_the_target() {
    // 10 Mbit/s, 50 ms each way, room for 300 ms of queue.
    let mut p = Pipe::new(None, &[]);
    p.wire.bottleneck = Some((10_000_000, 270));
    p.run_until(ms(60_000));
    let q = p.s.queuing_delay().as_secs_f64() * 1000.0;
    assert!((85.0..=115.0).contains(&q), "queueing delay {q} ms");
    assert_eq!(p.s.stats().timeouts, 0);
}
