//! The sender and receiver as an application's byte stream, over the test
//! pipe of `tests.rs`: records, the FIN, the receive window with its
//! persist timer, and the restart window after idle.

use super::*;

/// A pipe whose sender is a stream with nothing written yet, and whose
/// receiver has a `buffer`-byte window, read on delivery or not.
fn stream_pipe(buffer: u64, read_on_delivery: bool, drops: &[(u64, u32)]) -> Pipe {
    let mut p = Pipe::new(None, drops);
    p.s = TcpSender::stream(p.s.config().clone());
    let mut rc = TcpReceiverConfig::new(HostId(2), HostId(1), FlowId(5));
    rc.buffer = buffer;
    rc.read_on_delivery = read_on_delivery;
    p.r = TcpReceiver::new(rc);
    p
}

fn records(r: &mut TcpReceiver) -> Vec<(u64, Vec<u8>)> {
    std::iter::from_fn(|| r.take_record())
        .map(|x| (x.end, x.data))
        .collect()
}

#[test]
fn records_arrive_once_and_in_order_across_a_loss() {
    // Segment 5 (bytes 7300..8760) is lost once: the records ending in it
    // and after it wait for the retransmission.
    let mut p = stream_pipe(1 << 30, true, &[(5, 1)]);
    for i in 0..50u8 {
        p.s.write(3000, vec![i, 0xbe]);
    }
    p.run_until(ms(50));
    // The first window's data is in up to the hole: records ending before
    // byte 7300 only.
    let early = records(&mut p.r);
    assert_eq!(early, vec![(3000, vec![0, 0xbe]), (6000, vec![1, 0xbe])]);
    p.run_until(ms(5000));
    let rest = records(&mut p.r);
    let want: Vec<(u64, Vec<u8>)> = (2..50u8)
        .map(|i| (3000 * (u64::from(i) + 1), vec![i, 0xbe]))
        .collect();
    assert_eq!(rest, want);
    assert_eq!(p.s.stats().retransmits, 1);
    assert_eq!(p.r.delivered(), 150_000);
    assert!(!p.s.is_complete(), "an open stream is never complete");
    assert_eq!(p.s.unacked(), 0);
}

#[test]
fn a_closed_stream_sends_its_fin_with_the_last_data_and_completes_when_it_is_acked() {
    let mut p = stream_pipe(1 << 30, true, &[]);
    p.s.write(10_000, vec![1]);
    p.s.close();
    p.run_until(ms(1000));
    // 10 000 bytes: six full segments and one of 1240 with the FIN, one
    // window, one round trip.
    assert_eq!(p.s.stats().segments_sent, 7);
    assert_eq!(p.s.completed_at(), Some(ms(100)));
    assert!(p.r.is_finished());
    assert_eq!(p.r.delivered(), 10_000);
    assert_eq!(records(&mut p.r), vec![(10_000, vec![1])]);
}

#[test]
fn closing_an_idle_stream_sends_a_bare_fin_that_is_retransmitted_if_lost() {
    // Segment index 1 at 1460 bytes: the bare FIN at byte 1460 is the
    // second "segment" sent; its first transmission is lost.
    let mut p = stream_pipe(1 << 30, true, &[(1, 1)]);
    p.s.write(u64::from(MSS), Vec::new());
    p.run_until(ms(500));
    assert_eq!(p.r.delivered(), u64::from(MSS));
    p.s.close();
    let closed_at = ms(500);
    p.run_until(ms(10_000));
    let fins = p.sent_at(1);
    assert_eq!(fins.len(), 2, "the FIN and its retransmission");
    assert_eq!(fins[0], closed_at);
    // Retransmitted one RTO later, acknowledged a round trip after that.
    let rto_then = fins[1].saturating_since(fins[0]);
    assert!(rto_then >= Duration::from_millis(200));
    assert_eq!(
        p.s.completed_at(),
        Some(fins[1] + Duration::from_millis(100))
    );
    assert!(p.r.is_finished());
    assert_eq!(p.r.delivered(), u64::from(MSS));
    assert_eq!(p.s.stats().timeouts, 1);
}

#[test]
fn the_receive_window_limits_the_sender_until_the_application_reads() {
    let buffer = 20 * M;
    let mut p = stream_pipe(buffer, false, &[]);
    p.s.write(100 * M, Vec::new());
    p.run_until(ms(2000));
    // IW 10, then 10 more as the first ACKs come back: the buffer is full
    // and nothing more moves, however long we wait.
    assert_eq!(p.r.delivered(), buffer);
    assert_eq!(p.r.window(), 0);
    assert_eq!(p.s.send_window(), 0);
    assert_eq!(p.s.unsent(), 80 * M);
    // Nothing in flight and a zero window: the persist timer probes
    // (one byte already acknowledged), at RTO, 2·RTO, 4·RTO ...
    let probes = p.s.stats().window_probes;
    assert!(probes >= 2, "{probes} probes in 1.8 s");
    assert_eq!(p.s.stats().segments_sent, 20);
    // Reading half of it opens the window by more than one MSS: an
    // update goes out at once, and ten more segments follow it.
    p.r.read(10 * M);
    let read_at = p.wire.now;
    p.run_until(read_at + Duration::from_millis(120));
    assert_eq!(p.r.delivered(), 30 * M);
    assert_eq!(p.s.stats().window_probes, probes);
}

#[test]
fn a_small_read_is_not_advertised_and_the_persist_timer_finds_it() {
    let buffer = 20 * M;
    let mut p = stream_pipe(buffer, false, &[]);
    p.s.write(100 * M, Vec::new());
    p.run_until(ms(2000));
    assert_eq!(p.r.delivered(), buffer);
    // Less than an MSS: receiver-side silly-window avoidance keeps quiet.
    p.r.read(1000);
    p.run_until(ms(2050));
    assert_eq!(p.r.delivered(), buffer, "no update, nothing sent");
    // The persist timer probes (RTO, doubling); the answer says 1000,
    // less than half the largest window: the sender waits for the timer
    // again (sender silly-window avoidance), then sends what fits.
    p.run_until(ms(60_000));
    assert!(p.s.stats().window_probes >= 1);
    assert_eq!(p.r.delivered(), buffer + 1000);
    assert_eq!(p.s.send_window(), 0);
    // One data segment of 1000 bytes (probes are not counted as data).
    assert_eq!(p.s.stats().segments_sent, 21);
    assert_eq!(p.s.stats().bytes_sent, buffer + 1000);
}

#[test]
fn after_an_idle_spell_longer_than_the_rto_the_window_restarts_at_iw() {
    let mut p = stream_pipe(1 << 30, true, &[]);
    // Slow start sends 10, 20, 40, 80 and 150 segments at 0 ... 400 ms;
    // the last ACK is in at 500 ms, 100 ms after the last send.
    p.s.write(300 * M, Vec::new());
    p.run_until(ms(500));
    assert_eq!(p.r.delivered(), 300 * M);
    assert_eq!(p.s.cwnd(), 310 * M);
    assert!(p.s.rto() > Duration::from_millis(100));
    // Idle for less than the RTO: the grown window is used at once.
    p.s.write(100 * M, Vec::new());
    p.run_until(ms(500));
    assert_eq!(p.rounds().last(), Some(&(ms(500), 100)));
    assert_eq!(p.s.stats().idle_restarts, 0);
    // Idle for 4.4 s, far more than the RTO: one initial window goes
    // out, not the stale one.
    p.run_until(ms(5000));
    p.s.write(100 * M, Vec::new());
    p.run_until(ms(5000));
    assert_eq!(p.rounds().last(), Some(&(ms(5000), 10)));
    assert_eq!(p.s.stats().idle_restarts, 1);
}

#[test]
fn a_bulk_sender_never_idles_and_never_restarts() {
    let mut p = Pipe::new(Some(2_000_000), &[]);
    p.run_until(ms(10_000));
    assert!(p.s.is_complete());
    assert_eq!(p.s.stats().idle_restarts, 0);
    assert_eq!(p.s.stats().window_probes, 0);
}
