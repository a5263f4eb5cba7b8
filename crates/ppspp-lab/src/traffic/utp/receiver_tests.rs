//! The receiver alone: what it acknowledges, holds, drops and delivers.

use super::*;
use crate::agent::Agent;
use crate::packet::{Body, FlowId, HostId, Packet, SelectiveAck, StreamRecord, UtpPacket, UtpType};
use ppspp_core::time::Instant;

use super::super::tests::{ms, utp};

fn receiver() -> UtpReceiver {
    UtpReceiver::new(UtpReceiverConfig::new(HostId(2), HostId(1), FlowId(5)))
}

/// Data packet `seq` of 100 bytes (the stream's bytes `(seq − 1)·100..`),
/// sent at 1 ms, carrying a record ending with it.
fn data(kind: UtpType, seq: u64) -> Packet {
    let len = if kind == UtpType::Fin { 0 } else { 100 };
    let body = UtpPacket {
        kind,
        seq_nr: seq,
        ack_nr: 0,
        timestamp: 1000,
        timestamp_difference: 0,
        wnd_size: 0,
        sack: None,
        offset: seq.saturating_sub(1) * 100,
        len,
        records: if len > 0 {
            vec![StreamRecord {
                end: seq * 100,
                data: vec![seq as u8],
            }]
        } else {
            Vec::new()
        },
        conn: 0,
    };
    Packet {
        src: HostId(1),
        dst: HostId(2),
        flow: FlowId(5),
        size: body.wire_size(),
        body: Body::Utp(body),
    }
}

/// Feeds `seqs` at `now`; returns the ST_STATEs sent.
fn feed(r: &mut UtpReceiver, now: Instant, kind: UtpType, seqs: &[u64]) -> Vec<Packet> {
    let mut acks = Vec::new();
    for seq in seqs {
        r.on_packet(now, data(kind, *seq));
        acks.extend(std::iter::from_fn(|| r.poll_transmit(now)));
    }
    acks
}

#[test]
fn the_receiver_selective_ack_marks_what_it_holds() {
    let mut r = receiver();
    let acks = feed(&mut r, ms(10), UtpType::Data, &[1, 3, 4, 6, 34, 35, 4]);
    // The duplicate of held packet 4 is not answered (libutp).
    assert_eq!(acks.len(), 6);
    let last = utp(&acks[5]);
    assert_eq!(last.ack_nr, 1);
    // Bit i is packet ack_nr + 2 + i = 3 + i: 3, 4, 6 and 34 (bit 31);
    // 35 lies beyond the 32 bits.
    assert_eq!(last.sack, Some(SelectiveAck(0b1011 | 1 << 31)));
    assert_eq!(acks[5].size, 28 + 20 + 6, "the extension's 6 bytes");
    // The one-way delay of the last packet: 10 ms − 1 ms.
    assert_eq!(last.timestamp_difference, 9000);
    assert_eq!(utp(&acks[0]).sack, None, "nothing held: no extension");
    assert_eq!(acks[0].size, 48);
    let a = feed(&mut r, ms(11), UtpType::Data, &[2]).remove(0);
    assert_eq!(utp(&a).ack_nr, 4, "2 fills the gap up to 4");
    // Now bit i is packet 6 + i: 6, 34 and 35.
    assert_eq!(utp(&a).sack, Some(SelectiveAck(1 | 1 << 28 | 1 << 29)));
    assert_eq!(r.delivered(), 400);
    assert_eq!(r.held().collect::<Vec<_>>(), vec![6, 34, 35]);
}

#[test]
fn old_packets_are_acked_far_ones_dropped() {
    let mut r = receiver();
    feed(&mut r, ms(10), UtpType::Data, &[1, 2]);
    // A resend of what is in is answered (the sender learns ack_nr)…
    let a = feed(&mut r, ms(20), UtpType::Data, &[1]);
    assert_eq!(a.len(), 1);
    assert_eq!(utp(&a[0]).ack_nr, 2);
    assert_eq!(r.stats().duplicates, 1);
    // …a packet 1023 or more beyond ack_nr + 1 is not (libutp's reorder
    // buffer bound); one just inside is held.
    assert!(feed(&mut r, ms(20), UtpType::Data, &[3 + 1023]).is_empty());
    assert_eq!(r.stats().dropped, 1);
    assert_eq!(feed(&mut r, ms(20), UtpType::Data, &[3 + 1022]).len(), 1);
    assert_eq!(r.held().collect::<Vec<_>>(), vec![1025]);
}

#[test]
fn the_fin_finishes_once_everything_before_it_is_in_and_records_come_in_order() {
    let mut r = receiver();
    feed(&mut r, ms(10), UtpType::Data, &[2, 1, 4]);
    assert_eq!(r.take_record().map(|x| x.end), Some(100));
    assert_eq!(r.take_record().map(|x| x.end), Some(200));
    assert_eq!(r.take_record(), None, "400 waits for 300");
    let a = feed(&mut r, ms(10), UtpType::Fin, &[5]);
    assert!(!r.is_finished(), "packet 3 is missing");
    assert!(utp(&a[0]).sack.is_some());
    // Nothing past the FIN is taken.
    assert!(feed(&mut r, ms(10), UtpType::Data, &[6]).is_empty());
    let a = feed(&mut r, ms(12), UtpType::Data, &[3]);
    assert!(r.is_finished());
    assert_eq!(utp(&a[0]).ack_nr, 5);
    assert_eq!(utp(&a[0]).sack, None, "complete: no selective ACK");
    assert_eq!(r.delivered(), 400);
    let rest: Vec<u64> = std::iter::from_fn(|| r.take_record())
        .map(|x| x.end)
        .collect();
    assert_eq!(rest, vec![300, 400]);
    // The delay echoed is the last packet's: 12 ms − 1 ms.
    assert_eq!(utp(&a[0]).timestamp_difference, 11_000);
}

#[test]
fn a_syn_is_answered_every_time_and_gives_the_first_delay() {
    let mut r = receiver();
    for _ in 0..2 {
        let a = feed(&mut r, ms(30), UtpType::Syn, &[0]);
        assert_eq!(a.len(), 1);
        let s = utp(&a[0]);
        assert_eq!(
            (s.kind, s.ack_nr, s.timestamp_difference),
            (UtpType::State, 0, 29_000)
        );
        assert_eq!(s.wnd_size, 1 << 20, "libutp's 1 MiB receive buffer");
    }
    assert_eq!(r.stats().syns, 2);
}
