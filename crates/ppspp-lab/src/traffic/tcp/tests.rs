//! Sender and receiver together over a test pipe: a fixed delay each way,
//! chosen data transmissions dropped, optionally a drop-tail bottleneck on
//! the data direction. Times below are in ms; with no bottleneck a whole
//! window leaves at one instant, so every round trip is exactly 100 ms and
//! the counts are exact.

use std::collections::BTreeMap;

use super::*;
use crate::agent::Agent;
use crate::packet::{Body, FlowId, HostId, Packet};
use crate::traffic::test_wire::Wire;
use ppspp_core::time::Instant;
use std::time::Duration;

const M: u64 = MSS as u64;

fn ms(n: u64) -> Instant {
    Instant::from_micros(n * 1000)
}

struct Pipe {
    s: TcpSender,
    r: TcpReceiver,
    wire: Wire,
    /// (segment index, transmission number from 1) to drop.
    drops: Vec<(u64, u32)>,
    transmissions: BTreeMap<u64, u32>,
    /// Every data segment sent: (time, segment index).
    sent: Vec<(Instant, u64)>,
    dropped: u64,
    /// SYNs to drop, the first ones sent.
    syn_drops: u32,
    /// When each SYN was sent.
    syns: Vec<Instant>,
}

impl Pipe {
    fn new(total: Option<u64>, drops: &[(u64, u32)]) -> Pipe {
        Pipe::with_cc(total, drops, TcpCc::Newreno)
    }

    fn with_cc(total: Option<u64>, drops: &[(u64, u32)], cc: TcpCc) -> Pipe {
        Pipe::build(total, drops, cc, false)
    }

    /// Both ends with SACK (RFC 2018, RFC 6675).
    fn sack(total: Option<u64>, drops: &[(u64, u32)]) -> Pipe {
        Pipe::build(total, drops, TcpCc::Newreno, true)
    }

    /// With the SYN / SYN-ACK handshake; the first `syn_drops` SYNs lost.
    fn handshake(total: Option<u64>, syn_drops: u32) -> Pipe {
        let mut p = Pipe::new(total, &[]);
        let mut sc = p.s.config().clone();
        sc.handshake = true;
        p.s = TcpSender::new(sc);
        p.syn_drops = syn_drops;
        p
    }

    fn build(total: Option<u64>, drops: &[(u64, u32)], cc: TcpCc, sack: bool) -> Pipe {
        let mut sc = TcpSenderConfig::new(HostId(1), HostId(2), FlowId(5), Instant::ZERO);
        sc.total_bytes = total;
        sc.cc = cc;
        sc.sack = sack;
        let mut rc = TcpReceiverConfig::new(HostId(2), HostId(1), FlowId(5));
        rc.sack = sack;
        Pipe {
            s: TcpSender::new(sc),
            r: TcpReceiver::new(rc),
            wire: Wire::new(Duration::from_millis(50)),
            drops: drops.to_vec(),
            transmissions: BTreeMap::new(),
            sent: Vec::new(),
            dropped: 0,
            syn_drops: 0,
            syns: Vec::new(),
        }
    }

    /// Runs every event up to and including `end`: data segments are
    /// checked, counted and dropped as listed; SYNs as `syn_drops` says.
    fn run_until(&mut self, end: Instant) {
        let Pipe {
            s,
            r,
            wire,
            drops,
            transmissions,
            sent,
            dropped,
            syn_drops,
            syns,
        } = self;
        let mut data = |w: &mut Wire, p: Packet| {
            let Body::Tcp(seg) = p.body.clone() else {
                panic!("not TCP")
            };
            if seg.syn {
                assert_eq!(p.size, 60, "a SYN with its options");
                syns.push(w.now);
                if syns.len() as u32 > *syn_drops {
                    w.travel(w.now + w.delay, true, p);
                }
                return;
            }
            assert_eq!(p.size, seg.len + 40);
            assert!(seg.sack.is_empty(), "data carries no SACK");
            let k = seg.seq / M;
            let n = transmissions.entry(k).or_insert(0);
            *n += 1;
            sent.push((w.now, k));
            if drops.contains(&(k, *n)) || !w.send_data(p) {
                *dropped += 1;
            }
        };
        wire.run_until(s, r, end, &mut data, &|_| {});
    }

    /// When segment `k` was sent, every time.
    fn sent_at(&self, k: u64) -> Vec<Instant> {
        self.sent.iter().filter(|s| s.1 == k).map(|s| s.0).collect()
    }

    /// Runs to 20 s and checks that a transfer of `total` bytes completed
    /// with these (fast retransmits, retransmits, timeouts).
    fn completes(&mut self, total: u64, losses: (u64, u64, u64)) {
        self.run_until(ms(20_000));
        let st = self.s.stats();
        assert_eq!((st.fast_retransmits, st.retransmits, st.timeouts), losses);
        assert!(self.s.is_complete());
        assert_eq!(self.r.delivered(), total);
    }

    /// Data segments sent at each instant, in order.
    fn rounds(&self) -> Vec<(Instant, usize)> {
        let mut out: Vec<(Instant, usize)> = Vec::new();
        for (t, _) in &self.sent {
            match out.last_mut() {
                Some((u, n)) if u == t => *n += 1,
                _ => out.push((*t, 1)),
            }
        }
        out
    }
}

#[test]
fn slow_start_doubles_cwnd_every_round_trip() {
    let mut p = Pipe::new(None, &[]);
    for (round, segments) in [10u64, 20, 40, 80, 160].into_iter().enumerate() {
        p.run_until(ms(100 * round as u64));
        assert_eq!(p.s.cwnd(), segments * M, "cwnd after round {round}");
    }
    let want: Vec<_> = [10, 20, 40, 80, 160]
        .iter()
        .enumerate()
        .map(|(i, n)| (ms(100 * i as u64), *n))
        .collect();
    assert_eq!(p.rounds(), want);
    assert_eq!(p.s.srtt(), Some(Duration::from_millis(100)));
    let st = p.s.stats();
    assert_eq!(
        (
            st.retransmits,
            st.fast_retransmits,
            st.timeouts,
            st.dup_acks
        ),
        (0, 0, 0, 0)
    );
    assert_eq!(st.bytes_acked, 150 * M);
    assert_eq!(p.s.ssthresh(), u64::MAX);
}

#[test]
fn a_transfer_completes_with_goodput_equal_to_its_size() {
    let total = 1_000_000;
    let mut p = Pipe::new(Some(total), &[]);
    p.run_until(ms(10_000));
    // 10 + 20 + 40 + 80 + 160 + 320 segments, then the last 55 (684 full
    // and one of 1360 bytes), acknowledged at the end of round 7.
    assert_eq!(p.s.completed_at(), Some(ms(700)));
    assert_eq!(p.s.stats().bytes_acked, total);
    assert_eq!(p.s.stats().bytes_sent, total);
    assert_eq!(p.s.stats().segments_sent, 685);
    assert_eq!(p.r.delivered(), total);
    assert_eq!((p.s.poll_timeout(), p.r.poll_timeout()), (None, None));
    assert_eq!(p.s.poll_transmit(ms(10_000)), None);
}

#[test]
fn with_delayed_acks_a_transfer_completes_on_half_the_acks() {
    let total = 100_000;
    let mut p = Pipe::new(Some(total), &[(30, 1)]);
    let mut rc = TcpReceiverConfig::new(HostId(2), HostId(1), FlowId(5));
    rc.ack_delay = Some(DEFAULT_ACK_DELAY);
    p.r = TcpReceiver::new(rc);
    p.run_until(ms(100));
    // Five ACKs of two segments each: cwnd grows by one MSS per ACK.
    assert_eq!(p.s.cwnd(), 15 * M);
    p.run_until(ms(10_000));
    assert!(p.s.is_complete());
    assert_eq!(p.s.stats().bytes_acked, total);
    assert_eq!(p.r.delivered(), total);
    // The loss of 30 was still repaired by a fast retransmit: out-of-order
    // segments are acknowledged at once.
    assert_eq!((p.s.stats().fast_retransmits, p.s.stats().timeouts), (1, 0));
    let (acks, segments) = (p.r.stats().acks_sent, p.s.stats().segments_sent);
    // An ACK per segment would make 70; the duplicate ACKs around the
    // loss are immediate too.
    assert_eq!(segments, 70);
    assert!(
        acks * 4 < segments * 3,
        "{acks} ACKs for {segments} segments"
    );
}

/// Segment 15 is lost in round 2 (segments 10-29, sent at 100 ms). At
/// 200 ms the ACKs of 10-14 raise cwnd to 25 MSS and send 30-39; the third
/// duplicate ACK then finds FlightSize = 40 - 15 = 25 MSS.
#[test]
fn a_single_loss_is_one_fast_retransmit_and_halves_the_window() {
    let total = 300_000;
    let mut p = Pipe::new(Some(total), &[(15, 1)]);
    p.run_until(ms(199));
    assert_eq!(p.s.cwnd(), 20 * M);
    p.run_until(ms(200));
    assert!(p.s.in_recovery());
    assert_eq!(p.s.ssthresh(), 25 * M / 2);
    p.run_until(ms(300));
    // The retransmission filled the hole at 250 ms; its ACK covers all
    // of 15-39 (full ACK). cwnd = min(ssthresh, FlightSize + MSS) with 11
    // segments (40-50) out: 12 MSS; then the ACK of 40 adds one in slow
    // start (12 < 12.5 MSS).
    assert!(!p.s.in_recovery());
    assert_eq!(p.s.cwnd(), 13 * M);
    p.run_until(ms(10_000));
    let st = p.s.stats();
    assert_eq!(
        (st.fast_retransmits, st.retransmits, st.timeouts),
        (1, 1, 0)
    );
    // 14 duplicates from 16-29, 10 from 30-39.
    assert_eq!(st.dup_acks, 24);
    assert_eq!(p.s.ssthresh(), 25 * M / 2, "one cut only");
    assert!(p.s.is_complete());
    assert_eq!(st.bytes_acked, total);
    assert_eq!(p.r.delivered(), total);
    assert_eq!(st.segments_sent, 206 + 1);
}

/// The fast retransmission of 15 is lost too. Samples gave SRTT 100 ms and
/// RTTVAR 37.5 ms, so RTO = 250 ms from the last new ACK at 200 ms.
#[test]
fn losing_the_retransmission_leads_to_a_timeout() {
    let total = 300_000;
    let mut p = Pipe::new(Some(total), &[(15, 1), (15, 2)]);
    p.run_until(ms(200));
    assert_eq!(p.s.rto(), Duration::from_millis(250));
    p.run_until(ms(449));
    assert_eq!(p.s.stats().timeouts, 0);
    assert!(p.s.in_recovery());
    assert!(
        p.s.flight_size() > 40 * M,
        "the inflated window let more out"
    );
    p.run_until(ms(450));
    let st = p.s.stats().clone();
    assert_eq!(
        (st.timeouts, st.fast_retransmits, st.retransmits),
        (1, 1, 2)
    );
    assert!(!p.s.in_recovery());
    assert_eq!(p.s.cwnd(), M, "loss window");
    assert_eq!(p.s.ssthresh(), 25 * M / 2, "no second cut in one episode");
    assert_eq!(p.s.rto(), Duration::from_millis(500), "backed off");
    assert_eq!(*p.sent.last().unwrap(), (ms(450), 15), "go back to 15");
    p.run_until(ms(20_000));
    let st = p.s.stats();
    assert_eq!((st.timeouts, st.fast_retransmits), (1, 1));
    assert!(p.s.is_complete());
    assert_eq!(st.bytes_acked, total);
    assert_eq!(p.r.delivered(), total);
}

/// After a timeout, going back N resends segments the receiver holds; its
/// duplicate ACKs of exactly the recovery point must not start a second
/// fast retransmit (RFC 6582 §3.2 step 1). Here 15 is lost twice and 17,
/// 20 and 25 once: after the timeout the window grows 1, 2, 3, 4 as each
/// hole fills, and the last round's 26-28 come back as three duplicates.
#[test]
fn duplicates_of_a_go_back_n_resend_are_not_a_new_loss() {
    let total = 300_000;
    let mut p = Pipe::new(Some(total), &[(15, 1), (15, 2), (17, 1), (20, 1), (25, 1)]);
    p.run_until(ms(20_000));
    let st = p.s.stats();
    assert_eq!((st.timeouts, st.fast_retransmits), (1, 1));
    let resent: Vec<u64> = p
        .sent
        .iter()
        .filter(|s| s.0 >= ms(450))
        .map(|s| s.1)
        .take(10)
        .collect();
    assert_eq!(resent, vec![15, 17, 18, 20, 21, 22, 25, 26, 27, 28]);
    assert_eq!(p.r.stats().duplicates, 1 + 2 + 3);
    assert_eq!(p.s.ssthresh(), 25 * M / 2);
    assert!(p.s.is_complete());
    assert_eq!(st.bytes_acked, total);
}

/// Three losses in one window (15, 18, 22): NewReno cuts once and repairs
/// the later holes on partial ACKs, one per round trip.
#[test]
fn several_losses_in_a_window_are_one_cut() {
    let total = 300_000;
    let mut p = Pipe::new(Some(total), &[(15, 1), (18, 1), (22, 1)]);
    p.run_until(ms(200));
    assert_eq!(p.s.ssthresh(), 25 * M / 2);
    p.run_until(ms(450));
    assert!(p.s.in_recovery(), "still repairing");
    assert_eq!(p.sent_at(15), vec![ms(100), ms(200)]);
    assert_eq!(
        p.sent_at(18),
        vec![ms(100), ms(300)],
        "on the first partial ACK"
    );
    assert_eq!(p.sent_at(22), vec![ms(100), ms(400)], "on the second");
    p.run_until(ms(500));
    assert!(
        !p.s.in_recovery(),
        "the ACK of 22 covers the recovery point"
    );
    p.run_until(ms(20_000));
    let st = p.s.stats();
    assert_eq!(
        (st.fast_retransmits, st.retransmits, st.timeouts),
        (1, 3, 0)
    );
    assert_eq!(p.s.ssthresh(), 25 * M / 2, "one cut for three losses");
    assert!(p.s.is_complete());
    assert_eq!(st.bytes_acked, total);
}

#[test]
fn karn_no_rtt_sample_from_a_retransmitted_segment() {
    let config = |total| {
        let mut c = TcpSenderConfig::new(HostId(1), HostId(2), FlowId(5), ms(0));
        c.total_bytes = Some(total);
        c
    };
    let ack = |n| Packet {
        src: HostId(2),
        dst: HostId(1),
        flow: FlowId(5),
        size: 40,
        body: Body::Tcp(crate::packet::TcpSegment {
            seq: 0,
            len: 0,
            ack: n,
            sack: Default::default(),
            syn: false,
            wnd: 1 << 30,
            ..Default::default()
        }),
    };
    // Timed and acknowledged after 50 ms: a sample.
    let mut s = TcpSender::new(config(1000));
    assert!(s.poll_transmit(ms(0)).is_some());
    s.on_packet(ms(50), ack(1000));
    assert_eq!(s.srtt(), Some(Duration::from_millis(50)));
    // Retransmitted at the 1 s initial RTO, then acknowledged: no sample,
    // and the backed-off RTO stays.
    let mut s = TcpSender::new(config(1000));
    assert!(s.poll_transmit(ms(0)).is_some());
    assert_eq!(s.poll_timeout(), Some(ms(1000)));
    s.on_timeout(ms(1000));
    assert!(s.poll_transmit(ms(1000)).is_some());
    s.on_packet(ms(1050), ack(1000));
    assert!(s.is_complete());
    assert_eq!(s.srtt(), None);
    assert_eq!(s.rto(), Duration::from_secs(2));
    assert_eq!(s.stats().retransmits, 1);
}

#[test]
fn a_black_hole_backs_off_exponentially() {
    let mut p = Pipe::new(None, &[]);
    p.drops = (0..10).flat_map(|k| (1..10).map(move |n| (k, n))).collect();
    p.run_until(ms(40_000));
    // IW of 10 at 0, then segment 0 alone at 1, 3, 7, 15 and 31 s.
    let times: Vec<_> = p.sent.iter().skip(10).map(|s| (s.0, s.1)).collect();
    assert_eq!(
        times,
        vec![
            (ms(1000), 0),
            (ms(3000), 0),
            (ms(7000), 0),
            (ms(15_000), 0),
            (ms(31_000), 0)
        ]
    );
    assert_eq!(p.s.stats().timeouts, 5);
    assert_eq!(p.s.ssthresh(), 5 * M);
    assert_eq!(p.s.rto(), Duration::from_secs(32));
    assert_eq!(p.s.cwnd(), M);
}

#[test]
fn before_its_start_a_sender_is_silent() {
    let mut c = TcpSenderConfig::new(HostId(1), HostId(2), FlowId(5), ms(500));
    c.total_bytes = Some(100);
    let mut s = TcpSender::new(c);
    assert_eq!(s.poll_transmit(ms(499)), None);
    assert_eq!(s.poll_timeout(), Some(ms(500)));
    s.on_timeout(ms(500));
    let p = s.poll_transmit(ms(500)).expect("starts");
    assert_eq!(p.size, 140, "100 bytes and the headers");
    assert_eq!(s.poll_transmit(ms(500)), None, "all sent");
    assert_eq!(s.poll_timeout(), Some(ms(1500)), "initial RTO running");
}

/// A 10 Mb/s bottleneck with 20 ms each way and a 50-packet drop-tail
/// queue (1.5 BDP). Slow start overshoots and may need timeouts; after
/// that the window saws between about 42 and 84 segments, never below the
/// 33-segment BDP, so the link stays busy and every loss is a single drop
/// repaired by one fast retransmit.
#[test]
fn a_bottleneck_is_filled() {
    bottleneck_filled(TcpCc::Newreno, false);
}

/// The same with CUBIC: its cuts are shallower (β 0.7), so the queue
/// never drains either.
#[test]
fn cubic_fills_a_bottleneck() {
    bottleneck_filled(TcpCc::Cubic, false);
}

/// And with SACK recovery.
#[test]
fn with_sack_a_bottleneck_is_filled() {
    bottleneck_filled(TcpCc::Newreno, true);
    bottleneck_filled(TcpCc::Cubic, true);
}

fn bottleneck_filled(cc: TcpCc, sack: bool) {
    let mut p = Pipe::build(None, &[], cc, sack);
    p.wire.delay = Duration::from_millis(20);
    p.wire.bottleneck = Some((10_000_000, 50));
    p.run_until(ms(6_000));
    let before = p.s.stats().clone();
    let dropped = p.dropped;
    p.run_until(ms(20_000));
    let st = p.s.stats();
    // Payload at 10 Mb/s of 1500-byte packets over 14 s.
    let capacity = 10_000_000.0 / 8.0 * 1460.0 / 1500.0 * 14.0;
    let share = (st.bytes_acked - before.bytes_acked) as f64 / capacity;
    // What sits in the queue at either end shifts this by up to 50 packets
    // (0.4 %) either way.
    assert!(
        share > 0.98 && share < 1.01,
        "{cc:?}: goodput {share:.4} of capacity"
    );
    assert_eq!(st.timeouts, before.timeouts, "no timeout in steady state");
    let drops = p.dropped - dropped;
    let cuts = st.fast_retransmits - before.fast_retransmits;
    assert!(cuts >= 3, "{cuts} cuts");
    assert_eq!(drops, cuts, "one drop per cycle");
    assert_eq!(st.retransmits - before.retransmits, drops);
}

/// CUBIC's cut, through the sender: the same loss as
/// `a_single_loss_is_one_fast_retransmit_and_halves_the_window`, with
/// FlightSize 25 MSS at the third duplicate, sets ssthresh to 0.7 of it,
/// not half; recovery and the retransmission are NewReno's.
#[test]
fn cubic_cuts_to_seven_tenths_of_the_flight() {
    let total = 300_000;
    let mut p = Pipe::with_cc(Some(total), &[(15, 1)], TcpCc::Cubic);
    p.run_until(ms(200));
    assert!(p.s.in_recovery());
    assert_eq!(p.s.ssthresh(), 25 * M * 7 / 10);
    p.completes(total, (1, 1, 0));
}

/// The same three losses with SACK (RFC 6675): 15 is retransmitted at the
/// third duplicate and 18 in the same burst of ACKs, as soon as the pipe
/// estimate lets; 22 goes with the next ACKs. One cut; the whole repair
/// takes a round trip less than NewReno's one hole per round trip.
#[test]
fn with_sack_several_holes_are_repaired_in_one_round_trip() {
    let total = 300_000;
    let mut p = Pipe::sack(Some(total), &[(15, 1), (18, 1), (22, 1)]);
    p.run_until(ms(200));
    assert!(p.s.in_recovery());
    assert_eq!(p.s.ssthresh(), 25 * M / 2);
    assert_eq!(p.s.cwnd(), 25 * M / 2, "cwnd = ssthresh, no inflation");
    p.run_until(ms(350));
    assert!(p.s.in_recovery());
    assert_eq!(p.sent_at(15), vec![ms(100), ms(200)]);
    assert_eq!(p.sent_at(18), vec![ms(100), ms(200)], "in the same burst");
    assert_eq!(p.sent_at(22), vec![ms(100), ms(300)]);
    p.run_until(ms(400));
    assert!(!p.s.in_recovery(), "NewReno needs till 500 ms");
    p.completes(total, (1, 3, 0));
}

/// After a timeout, going back N skips what the receiver SACKed: 15 is
/// lost twice (timeout), 25 once. The resend of 15 is answered by an ACK
/// of 25 that SACKs 26-39, so the next round sends 25 and not 26; without
/// SACK 26 goes again needlessly.
#[test]
fn with_sack_going_back_n_skips_what_the_receiver_holds() {
    let drops = [(15, 1), (15, 2), (25, 1)];
    let mut times = Vec::new();
    for sack in [false, true] {
        let mut p = Pipe::build(Some(300_000), &drops, TcpCc::Newreno, sack);
        p.run_until(ms(20_000));
        assert!(p.s.is_complete());
        assert_eq!(p.s.stats().timeouts, 1);
        let n26 = p.sent.iter().filter(|s| s.1 == 26).count();
        times.push(n26);
    }
    assert_eq!(times, vec![2, 1]);
}

/// The handshake costs a round trip before the first byte: the SYN at 0,
/// the SYN-ACK back at 100 ms, the first window then; everything after is
/// the same transfer 100 ms later. Its round trip is the first RTT sample.
#[test]
fn a_handshake_delays_the_transfer_by_one_round_trip() {
    let total = 300_000;
    let mut plain = Pipe::new(Some(total), &[]);
    plain.run_until(ms(20_000));
    let mut p = Pipe::handshake(Some(total), 0);
    p.run_until(ms(99));
    assert!(!p.s.is_open());
    assert!(p.sent.is_empty(), "no data before the SYN-ACK");
    p.run_until(ms(100));
    assert!(p.s.is_open());
    assert_eq!(p.s.srtt(), Some(Duration::from_millis(100)));
    assert_eq!(p.rounds()[0], (ms(100), 10), "the initial window");
    p.run_until(ms(20_000));
    assert_eq!(p.syns, vec![ms(0)]);
    assert_eq!(p.s.stats().syns_sent, 1);
    let done = p.s.completed_at().unwrap();
    assert_eq!(
        done,
        plain.s.completed_at().unwrap() + Duration::from_millis(100)
    );
    assert_eq!(p.r.delivered(), total);
}

/// A lost SYN is sent again when the initial RTO (1 s) expires, and the
/// first window after it is one segment (RFC 5681 §3.1); no RTT sample
/// comes from the retried exchange (Karn).
#[test]
fn a_lost_syn_is_resent_after_a_second_and_opens_with_one_segment() {
    let mut p = Pipe::handshake(Some(300_000), 1);
    p.run_until(ms(1_100));
    assert_eq!(p.syns, vec![ms(0), ms(1_000)]);
    assert!(p.s.is_open());
    assert_eq!(p.s.srtt(), None);
    assert_eq!(p.rounds()[0], (ms(1_100), 1), "one segment");
    p.run_until(ms(20_000));
    assert!(p.s.is_complete());
    assert_eq!(p.s.stats().syns_sent, 2);
    assert_eq!(
        p.s.stats().timeouts,
        0,
        "a SYN timeout is not a data timeout"
    );
}

#[path = "stream_tests.rs"]
mod stream_tests;
