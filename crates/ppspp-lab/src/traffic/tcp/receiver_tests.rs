use super::*;

const MSS: u32 = 1460;

fn at(ms: u64) -> Instant {
    Instant::from_micros(ms * 1000)
}

fn data(k: u64) -> Packet {
    Packet {
        src: HostId(1),
        dst: HostId(2),
        flow: FlowId(9),
        size: MSS + TCP_OVERHEAD,
        body: Body::Tcp(TcpSegment {
            seq: k * u64::from(MSS),
            len: MSS,
            ack: 0,
            sack: Default::default(),
            syn: false,
            ..Default::default()
        }),
    }
}

/// Every ACK queued, as multiples of the MSS.
fn acks(r: &mut TcpReceiver, now: Instant) -> Vec<u64> {
    let mut out = Vec::new();
    while let Some(p) = r.poll_transmit(now) {
        assert_eq!(
            (p.src, p.dst, p.flow, p.size),
            (HostId(2), HostId(1), FlowId(9), 40)
        );
        match p.body {
            Body::Tcp(TcpSegment {
                seq: 0,
                len: 0,
                ack,
                ..
            }) => {
                assert_eq!(ack % u64::from(MSS), 0);
                out.push(ack / u64::from(MSS));
            }
            other => panic!("not a pure ACK: {other:?}"),
        }
    }
    out
}

fn receiver(ack_delay: Option<Duration>) -> TcpReceiver {
    let mut c = TcpReceiverConfig::new(HostId(2), HostId(1), FlowId(9));
    c.ack_delay = ack_delay;
    TcpReceiver::new(c)
}

#[test]
fn acks_every_segment_and_dup_acks_above_a_gap() {
    let mut r = receiver(None);
    for (k, want) in [
        (0, vec![1]),
        (1, vec![2]),
        (3, vec![2]),
        (5, vec![2]),
        (4, vec![2]),
    ] {
        r.on_packet(at(k), data(k));
        assert_eq!(acks(&mut r, at(k)), want, "after segment {k}");
    }
    assert_eq!(r.ranges().collect::<Vec<_>>(), vec![(3 * 1460, 6 * 1460)]);
    // The hole is filled: the ACK jumps over everything buffered.
    r.on_packet(at(10), data(2));
    assert_eq!(acks(&mut r, at(10)), vec![6]);
    assert_eq!(r.delivered(), 6 * 1460);
    assert_eq!(r.ranges().count(), 0);
    // An old segment again: an immediate ACK of where we are.
    r.on_packet(at(11), data(1));
    assert_eq!(acks(&mut r, at(11)), vec![6]);
    let s = r.stats();
    assert_eq!(
        (
            s.segments,
            s.duplicates,
            s.out_of_order,
            s.dropped,
            s.acks_sent
        ),
        (7, 1, 3, 0, 7)
    );
    assert_eq!(r.poll_timeout(), None, "no timer without delayed ACKs");
}

#[test]
fn delayed_acks_every_second_segment_or_after_the_delay() {
    let mut r = receiver(Some(DEFAULT_ACK_DELAY));
    r.on_packet(at(0), data(0));
    assert_eq!(acks(&mut r, at(0)), Vec::<u64>::new());
    assert_eq!(r.poll_timeout(), Some(at(40)));
    r.on_packet(at(1), data(1));
    assert_eq!(acks(&mut r, at(1)), vec![2], "every second segment");
    assert_eq!(r.poll_timeout(), None);
    r.on_packet(at(100), data(2));
    assert_eq!(r.poll_timeout(), Some(at(140)));
    r.on_timeout(at(139));
    assert_eq!(acks(&mut r, at(139)), Vec::<u64>::new(), "not yet due");
    r.on_timeout(at(140));
    assert_eq!(
        acks(&mut r, at(140)),
        vec![3],
        "the lone segment, 40 ms later"
    );
    // Out of order and gap filling are acknowledged at once (RFC 5681 §4.2).
    r.on_packet(at(200), data(4));
    assert_eq!(acks(&mut r, at(200)), vec![3]);
    r.on_packet(at(201), data(3));
    assert_eq!(acks(&mut r, at(201)), vec![5]);
    assert_eq!(r.poll_timeout(), None);
}

#[test]
fn out_of_order_ranges_merge_and_are_bounded() {
    let mut c = TcpReceiverConfig::new(HostId(2), HostId(1), FlowId(9));
    c.max_ranges = 2;
    let mut r = TcpReceiver::new(c);
    for k in [2, 6, 4, 7, 5] {
        r.on_packet(at(k), data(k));
    }
    // 4 would have opened a third range: dropped. 7 extended [6, 7) and 5
    // joined it from below.
    let m = 1460;
    assert_eq!(
        r.ranges().collect::<Vec<_>>(),
        vec![(2 * m, 3 * m), (5 * m, 8 * m)]
    );
    assert_eq!(r.stats().dropped, 1);
    assert_eq!(acks(&mut r, at(10)), vec![0, 0, 0, 0, 0]);
    r.on_packet(at(11), data(0));
    r.on_packet(at(12), data(1));
    assert_eq!(
        acks(&mut r, at(12)),
        vec![1, 3],
        "0, then 1 fills to the end of 2"
    );
    r.on_packet(at(13), data(3));
    r.on_packet(at(14), data(4));
    assert_eq!(acks(&mut r, at(14)), vec![4, 8]);
    assert_eq!(r.delivered(), 8 * 1460);
}

#[test]
fn partial_overlaps_count_only_new_bytes() {
    let mut r = receiver(None);
    let seg = |seq, len| Packet {
        body: Body::Tcp(TcpSegment {
            seq,
            len,
            ack: 0,
            sack: Default::default(),
            syn: false,
            ..Default::default()
        }),
        ..data(0)
    };
    r.on_packet(at(0), seg(0, 1000));
    r.on_packet(at(1), seg(500, 1000));
    r.on_packet(at(2), seg(3000, 500));
    r.on_packet(at(3), seg(2800, 300));
    assert_eq!(r.delivered(), 1500);
    assert_eq!(r.ranges().collect::<Vec<_>>(), vec![(2800, 3500)]);
    r.on_packet(at(4), seg(1500, 1300));
    assert_eq!(r.delivered(), 3500);
}

/// RFC 2018 §4: with SACK every ACK above a gap lists the ranges held,
/// the one the arriving segment joined first, then the most recently
/// reported; at most three; the option's bytes count on the wire.
#[test]
fn sack_blocks_list_the_ranges_held_most_recent_first() {
    let mut c = TcpReceiverConfig::new(HostId(2), HostId(1), FlowId(9));
    c.sack = true;
    let mut r = TcpReceiver::new(c);
    let m = u64::from(MSS);
    let last = |r: &mut TcpReceiver| {
        let mut out = None;
        while let Some(p) = r.poll_transmit(at(0)) {
            let Body::Tcp(seg) = p.body else { panic!() };
            assert_eq!(p.size, 40 + seg.sack.option_bytes());
            let blocks: Vec<(u64, u64)> = seg.sack.iter().map(|(s, e)| (s / m, e / m)).collect();
            out = Some((seg.ack / m, blocks));
        }
        out.unwrap()
    };
    for k in [0, 2, 3, 5, 7] {
        r.on_packet(at(0), data(k));
    }
    assert_eq!(last(&mut r), (1, vec![(7, 8), (5, 6), (2, 4)]));
    r.on_packet(at(0), data(9));
    assert_eq!(
        last(&mut r),
        (1, vec![(9, 10), (7, 8), (5, 6)]),
        "three at most"
    );
    r.on_packet(at(0), data(3));
    assert_eq!(
        last(&mut r),
        (1, vec![(2, 4), (9, 10), (7, 8)]),
        "a duplicate range moves first"
    );
    r.on_packet(at(0), data(1));
    assert_eq!(
        last(&mut r),
        (4, vec![(9, 10), (7, 8), (5, 6)]),
        "delivered ranges leave"
    );
    for k in [4, 6, 8] {
        r.on_packet(at(0), data(k));
    }
    assert_eq!(last(&mut r), (10, vec![]), "no option once in order");
}

/// Every SYN is answered with a SYN-ACK of 60 bytes (a repeated SYN means
/// ours was lost), one queued at most however many arrive at once.
#[test]
fn a_syn_is_answered_by_a_syn_ack_each_time() {
    let mut r = receiver(None);
    let syn = Packet {
        size: 60,
        body: Body::Tcp(TcpSegment {
            seq: 0,
            len: 0,
            ack: 0,
            sack: Default::default(),
            syn: true,
            ..Default::default()
        }),
        ..data(0)
    };
    let syn_acks = |r: &mut TcpReceiver| {
        let mut n = 0;
        while let Some(p) = r.poll_transmit(at(0)) {
            let Body::Tcp(seg) = p.body else { panic!() };
            assert!(seg.syn && seg.len == 0);
            assert_eq!(p.size, 60);
            n += 1;
        }
        n
    };
    r.on_packet(at(0), syn.clone());
    r.on_packet(at(0), syn.clone());
    assert_eq!(syn_acks(&mut r), 1);
    r.on_packet(at(1000), syn);
    assert_eq!(syn_acks(&mut r), 1);
    assert_eq!(r.delivered(), 0);
}

/// The window every queued ACK advertised.
fn windows(r: &mut TcpReceiver, now: Instant) -> Vec<u64> {
    std::iter::from_fn(|| r.poll_transmit(now))
        .map(|p| match p.body {
            Body::Tcp(seg) => seg.wnd,
            other => panic!("not TCP: {other:?}"),
        })
        .collect()
}

#[test]
fn data_beyond_the_window_is_dropped_and_the_window_advertised() {
    let m = u64::from(MSS);
    let mut c = TcpReceiverConfig::new(HostId(2), HostId(1), FlowId(9));
    c.buffer = 3 * m;
    c.read_on_delivery = false;
    let mut r = TcpReceiver::new(c);
    r.on_packet(at(0), data(0));
    r.on_packet(at(0), data(1));
    assert_eq!(windows(&mut r, at(0)), vec![2 * m, m]);
    // Segment 3 lies wholly beyond the right edge (3 MSS from byte 0).
    r.on_packet(at(1), data(3));
    assert_eq!(windows(&mut r, at(1)), vec![m]);
    assert_eq!(r.stats().beyond_window, 1);
    assert!(r.ranges().next().is_none(), "nothing of it kept");
    r.on_packet(at(2), data(2));
    assert_eq!((r.delivered(), r.window()), (3 * m, 0));
    assert_eq!(windows(&mut r, at(2)), vec![0]);
    // Reading one MSS reopens the window by min(buffer / 2, MSS): an
    // update at once.
    r.read(m);
    assert_eq!(windows(&mut r, at(3)), vec![m]);
    // Reading more than was delivered reads what was delivered.
    r.read(10 * m);
    assert_eq!((r.unread(), r.window()), (0, 3 * m));
}

#[test]
fn a_fin_above_a_hole_finishes_the_stream_only_when_the_hole_fills() {
    let m = u64::from(MSS);
    let mut r = receiver(None);
    let fin = |k: u64| Packet {
        body: Body::Tcp(TcpSegment {
            seq: k * m,
            len: MSS,
            fin: true,
            records: vec![crate::packet::StreamRecord {
                end: (k + 1) * m,
                data: vec![7],
            }],
            ..Default::default()
        }),
        ..data(k)
    };
    r.on_packet(at(0), data(0));
    r.on_packet(at(0), fin(2));
    assert!(!r.is_finished());
    assert_eq!(r.take_record(), None, "its record waits for the hole");
    assert_eq!(r.delivered(), m);
    r.on_packet(at(1), data(1));
    assert!(r.is_finished());
    // The FIN takes a sequence number, not a byte of the stream.
    assert_eq!(r.delivered(), 3 * m);
    let last = acks_raw(&mut r, at(1)).pop();
    assert_eq!(last, Some(3 * m + 1));
    assert_eq!(
        r.take_record().map(|x| (x.end, x.data)),
        Some((3 * m, vec![7]))
    );
}

/// Every cumulative ACK queued, in bytes.
fn acks_raw(r: &mut TcpReceiver, now: Instant) -> Vec<u64> {
    std::iter::from_fn(|| r.poll_transmit(now))
        .map(|p| match p.body {
            Body::Tcp(seg) => seg.ack,
            other => panic!("not TCP: {other:?}"),
        })
        .collect()
}
