//! With `swarm.ack_every = 2` a downloader acknowledges every second chunk
//! (or sooner: when nothing more is asked of the peer, or 10 ms after the
//! chunk), not each chunk at once (`EndpointConfig::ack_every`, the
//! default 1; RFC 1122 §4.2.3.2 as TCP does): fewer ACKs, and on a line
//! whose uplink cannot carry an ACK per chunk, a faster download.

use ppspp_core::wire::MessageType;
use ppspp_lab::run::run;
use ppspp_lab::run::Outcome as RunOutcome;
use ppspp_lab::scenario::{apply_overrides, Override, Role};

const SMALL: &str = include_str!("small_swarm.toml");

fn run_with(text: &str, sets: &[&str]) -> RunOutcome {
    let overrides: Vec<Override> = sets.iter().map(|s| Override::parse(s).unwrap()).collect();
    let (text, _) = apply_overrides(text, "t.toml", &overrides).unwrap();
    run(&text, "t.toml", None, None, |_| {}).unwrap()
}

/// ACK messages the leechers sent, and their mean download time in s.
fn acks_and_time(o: &RunOutcome) -> (u64, f64) {
    let leechers: Vec<_> = o.peers.iter().filter(|p| p.role == Role::Leecher).collect();
    assert!(
        leechers.iter().all(|p| p.complete_s.is_some()),
        "all complete"
    );
    let acks = leechers
        .iter()
        .map(|p| p.messages_sent.messages(MessageType::Ack))
        .sum();
    let time = leechers
        .iter()
        .map(|p| p.complete_s.unwrap() - p.join_s.unwrap())
        .sum::<f64>()
        / leechers.len() as f64;
    (acks, time)
}

/// ACK messages the first leecher sent: it joins alone, so it downloads
/// from the seeder only.
fn first_leechers_acks(o: &RunOutcome) -> u64 {
    let first = o
        .peers
        .iter()
        .filter(|p| p.role == Role::Leecher)
        .min_by(|a, b| a.join_s.partial_cmp(&b.join_s).unwrap())
        .unwrap();
    first.messages_sent.messages(MessageType::Ack)
}

#[test]
fn every_second_chunk_is_acknowledged() {
    let text = SMALL.replace("size = \"200KB\"", "size = \"1MB\"");
    let each = run_with(&text, &[]);
    let second = run_with(&text, &["swarm.ack_every=2"]);
    let (a, b) = (first_leechers_acks(&each), first_leechers_acks(&second));
    // 977 chunks (1 MB in 1 KiB chunks), each in an ACK of its own.
    assert!(a >= 977, "{a}");
    assert!(b * 10 <= a * 6, "every second chunk: {b} ACKs against {a}");
    // The later leechers download from several peers at once, and an ACK
    // goes when a peer has nothing more asked of it: fewer saved, but
    // still some.
    let (a, b) = (acks_and_time(&each).0, acks_and_time(&second).0);
    assert!(b * 10 <= a * 9, "{b} ACKs against {a}");
}

#[test]
fn a_thin_uplink_downloads_faster() {
    // 0.2 Mbit/s up, 8 Mbit/s down: an ACK datagram per 1 KiB chunk (about
    // 49 bytes with UDP/IP) at 8 Mbit/s would be 0.38 Mbit/s.
    let thin = SMALL
        .replace("up = \"1Mbit/s\"", "up = \"200kbit/s\"")
        .replace("size = \"200KB\"", "size = \"1MB\"");
    let (_, each) = acks_and_time(&run_with(&thin, &[]));
    let (_, second) = acks_and_time(&run_with(&thin, &["swarm.ack_every=2"]));
    assert!(
        second < each * 0.8,
        "mean download {second:.2} s against {each:.2} s acknowledging each chunk"
    );
}
