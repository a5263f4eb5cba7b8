//! A live receiver follows the stream (RFC 7574 §6.1, §6.1.3): it hooks
//! in near the live edge, a set number of munros behind; a receiver slower
//! than the stream skips forward with the discard window instead of
//! asking for what left it; HAVEs far beyond the live edge are refused and
//! counted; and over a day-long stream its memory stays bounded by the
//! window.

mod common;

use std::time::Duration;

use common::live::{chunk, push, receiver_of, receiver_setup, source, MUNRO};
use common::{addr, datagram, Net};
use ppspp_core::proto::{Endpoint, EndpointConfig, SwarmHandle};
use ppspp_core::time::Instant;
use ppspp_core::wire::{
    decode_datagram, ChannelId, ChunkAddressing, ChunkSpec, LiveSignatureAlgorithm, Message,
    SwarmParams, Timestamp,
};
use ppspp_core::HashFunction;
use ppspp_core::{ChunkIndex, ChunkRange};

fn receiver(
    id: &[u8],
    window: u64,
    algorithm: LiveSignatureAlgorithm,
    behind: u64,
    config: EndpointConfig,
    now: Instant,
) -> (Endpoint, SwarmHandle) {
    let setup = receiver_setup(id, window, algorithm, behind);
    receiver_of(setup, config, 2, now, &[1])
}

const P256: LiveSignatureAlgorithm = LiveSignatureAlgorithm::ECDSAP256SHA256;

#[test]
fn a_late_receiver_hooks_in_the_set_number_of_munros_behind_the_newest() {
    for behind in [0u64, 2, 5] {
        let (src, h, id) = source(1024, P256);
        let mut net = Net::new(Duration::from_millis(10));
        net.add(addr(1), src);
        // 20 munros before anyone joins.
        push(&mut net, h, 0..20 * MUNRO);
        let (rx, rh) = receiver(&id, 1024, P256, behind, EndpointConfig::default(), net.now);
        net.add(addr(2), rx);
        let hook = (19 - behind) * MUNRO;
        net.run_for(Duration::from_secs(5), |n| {
            let ep = &n.nodes[&addr(2)];
            ep.has_chunk(rh, ChunkIndex(20 * MUNRO - 1))
        });
        let ep = net.node(addr(2));
        let stats = ep.swarm_stats(rh).unwrap();
        assert_eq!(
            stats.live_hook_in,
            Some(ChunkIndex(hook)),
            "{behind} behind"
        );
        let have = ep.have(rh).unwrap();
        let ours = ChunkRange::new(hook, 20 * MUNRO - 1).unwrap();
        assert!(
            have.is_filled(ours),
            "{behind} behind: all from the hook-in"
        );
        assert_eq!(
            have.count(),
            ours.len(),
            "{behind} behind: nothing before it"
        );
        let log: Vec<ChunkIndex> = ep.verified_log(rh).since(0).collect();
        assert_eq!(log.len() as u64, ours.len(), "each chunk once");
        assert!(log.iter().all(|c| c.0 >= hook));
        // What a driver reads back: the floor, the edge, the bytes as
        // pushed, and when the source signed them.
        assert_eq!(ep.live_floor(rh), Some(ChunkIndex(hook)));
        assert_eq!(ep.live_edge(rh), Some(ChunkIndex(20 * MUNRO - 1)));
        let mut buf = vec![0u8; 1024];
        assert_eq!(
            ep.read_chunk(rh, ChunkIndex(hook + 3), &mut buf),
            Some(1024)
        );
        assert_eq!(buf, chunk(hook + 3));
        assert_eq!(
            ep.read_chunk(rh, ChunkIndex(hook.saturating_sub(1)), &mut buf)
                .filter(|_| hook > 0),
            None
        );
        let signed = ep
            .live_signed_at(rh, ChunkIndex(hook))
            .expect("a signed munro");
        assert!(
            signed.abs_diff(1_000_000) < 1_000,
            "signed at the net's start: {signed}"
        );
        // The stream goes on: the receiver follows it.
        push(&mut net, h, 20 * MUNRO..24 * MUNRO);
        net.run_for(Duration::from_secs(5), |n| {
            n.nodes[&addr(2)].has_chunk(rh, ChunkIndex(24 * MUNRO - 1))
        });
        let ep = net.node(addr(2));
        assert!(ep
            .have(rh)
            .unwrap()
            .is_filled(ChunkRange::new(hook, 24 * MUNRO - 1).unwrap()));
    }
}

#[test]
fn a_receiver_slower_than_the_stream_skips_forward_with_the_window() {
    // 3.2 s of this stream: longer than HAVEs may wait (0.5 s), as any
    // real window is.
    let window = 32 * MUNRO;
    let (src, h, id) = source(window, P256);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    push(&mut net, h, 0..4 * MUNRO);
    // 200 KB/s for a stream of 320 KB/s (a munro of 32 KiB per 100 ms).
    let config = EndpointConfig {
        download_limit: Some(200_000),
        ..EndpointConfig::default()
    };
    let (rx, rh) = receiver(&id, window, P256, 0, config, net.now);
    net.add(addr(2), rx);
    let munros = 200u64;
    for m in 4..munros {
        push(&mut net, h, m * MUNRO..(m + 1) * MUNRO);
        net.run_for(Duration::from_millis(100), |_| false);
    }
    let ep = net.node(addr(2));
    let stats = ep.swarm_stats(rh).unwrap().clone();
    let have = ep.have(rh).unwrap();
    assert!(
        stats.live_chunks_skipped > 1000,
        "it fell behind and skipped: {stats:?}"
    );
    assert!(
        have.count() <= window,
        "it keeps no more than the window: {}",
        have.count()
    );
    // It re-hooks at the edge whenever it lags a window behind.
    let newest = (munros * MUNRO - 1) - 2 * window;
    let got_to = have.last_filled_to(ChunkIndex(u64::MAX >> 2));
    let first = have.first_filled_from(ChunkIndex(0));
    assert!(
        got_to.is_some_and(|c| c.0 >= newest),
        "it still receives near the live edge: {first:?}..{got_to:?}, edge {}",
        munros * MUNRO - 1
    );
    assert_eq!(stats.chunks_rejected, 0);
    // Most of what the limit allowed arrived (3,828 KiB in 19.6 s at
    // 200 KB/s, plus the 128 KiB the token bucket starts with), and none
    // of it twice: requests for chunks that left the window would waste it.
    let got = stats.chunks_verified;
    assert!(
        (2000..=3828 + 128).contains(&got),
        "{got} chunks in 19.6 s at 200 KB/s"
    );
    assert_eq!(stats.chunks_duplicate, 0);
    let hook = stats.live_hook_in.unwrap().0;
    assert!(got + stats.live_chunks_skipped <= munros * MUNRO - hook);
}

/// A source with a 3.2 s window (32 munros, a munro per 100 ms) that made
/// 4 munros, and a receiver hooking in `behind` munros before the newest:
/// the net, the source's swarm and the receiver's.
fn following_pair(behind: u64) -> (Net, SwarmHandle, SwarmHandle) {
    let window = 32 * MUNRO;
    let (src, h, id) = source(window, P256);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    push(&mut net, h, 0..4 * MUNRO);
    let (rx, rh) = receiver(
        &id,
        window,
        P256,
        behind,
        EndpointConfig::default(),
        net.now,
    );
    net.add(addr(2), rx);
    (net, h, rh)
}

/// Streams for `d`: a munro made at the source every 100 ms, munro `*next`
/// first. Returns the newest chunk made.
fn stream_for(net: &mut Net, h: SwarmHandle, next: &mut u64, d: Duration) -> u64 {
    for _ in 0..d.as_millis() / 100 {
        push(net, h, *next * MUNRO..(*next + 1) * MUNRO);
        *next += 1;
        net.run_for(Duration::from_millis(100), |_| false);
    }
    *next * MUNRO - 1
}

/// A receiver (hooking in `behind` munros before the newest) that follows
/// a stream for 3 s, is cut off from its source for `cut`, then hears it
/// again for 3 s. Returns its stats, the chunks it verified after the cut,
/// and three chunks: the newest it held when the cut began, the newest
/// made when the cut ended, and the newest it held at the end.
fn cut_off_for(cut: Duration, behind: u64) -> (ppspp_core::proto::SwarmStats, u64, [u64; 3]) {
    let (mut net, h, rh) = following_pair(behind);
    let mut m = 4;
    let edge = |net: &Net| net.nodes[&addr(2)].live_edge(rh).unwrap().0;
    let verified = |net: &Net| net.nodes[&addr(2)].swarm_stats(rh).unwrap().chunks_verified;
    stream_for(&mut net, h, &mut m, Duration::from_secs(3));
    let held_at_cut = edge(&net);
    net.filter = Some(Box::new(|_| false));
    let made_in_cut = stream_for(&mut net, h, &mut m, cut);
    net.filter = None;
    let before = verified(&net);
    stream_for(&mut net, h, &mut m, Duration::from_secs(3));
    let end = edge(&net);
    let stats = net.nodes[&addr(2)].swarm_stats(rh).unwrap().clone();
    let have = net.nodes[&addr(2)].have(rh).unwrap();
    assert!(end > made_in_cut + 2 * MUNRO, "it hears the stream again");
    assert!(
        have.is_filled(ChunkRange::new(made_in_cut + 1, end).unwrap()),
        "it follows the stream again"
    );
    assert_eq!(stats.chunks_rejected, 0);
    assert_eq!(stats.chunks_duplicate, 0);
    let after = stats.chunks_verified - before;
    (stats, after, [held_at_cut, made_in_cut, end])
}

#[test]
fn a_receiver_cut_off_longer_than_the_window_hooks_in_again_near_the_edge() {
    let behind = 2;
    // 6 s cut off: nearly two windows of stream go by unheard. The first
    // munro it hears after is the one made right after the cut.
    let (stats, after, [held, made, end]) = cut_off_for(Duration::from_secs(6), behind);
    let hook = made + 1 - behind * MUNRO;
    // After the cut it got all from the new hook-in to the edge, and not
    // the old part of the window (a window more when it only followed the
    // window's start, as a receiver slower than the stream does).
    assert_eq!(after, end + 1 - hook, "hook-in at {hook}");
    // What it never got is counted as skipped.
    assert_eq!(stats.live_chunks_skipped, hook - (held + 1));
}

#[test]
fn a_receiver_cut_off_within_the_window_fetches_all_it_missed() {
    // 2 s cut off against a 3.2 s window: nothing left the window, and
    // the HAVEs lost in the cut are made good by the next ones.
    let (stats, after, [held, _, end]) = cut_off_for(Duration::from_secs(2), 2);
    assert_eq!(stats.live_chunks_skipped, 0, "{stats:?}");
    assert_eq!(after, end - held);
}

#[test]
fn haves_carry_the_signed_munro_to_a_joining_receiver_only() {
    use std::cell::Cell;
    use std::rc::Rc;
    let (mut net, h, _) = following_pair(0);
    // Datagrams of HAVEs without DATA from the source, and those of them
    // with a SIGNED_INTEGRITY.
    let counts = Rc::new(Cell::new((0u64, 0u64)));
    let seen = counts.clone();
    let params = SwarmParams {
        addressing: ChunkAddressing::ChunkRanges32,
        hash_function: HashFunction::Sha1,
        signature_len: Some(64),
        chunk_size: Some(1024),
    };
    net.filter = Some(Box::new(move |d| {
        if d.from == addr(1) && d.to == addr(2) {
            if let Ok((_, msgs)) = decode_datagram(&d.bytes, params) {
                let msgs: Vec<Message<'_>> = msgs.flatten().collect();
                let has = |f: fn(&Message<'_>) -> bool| msgs.iter().any(f);
                if has(|m| matches!(m, Message::Have(_)))
                    && !has(|m| matches!(m, Message::Data { .. }))
                {
                    let signed = has(|m| matches!(m, Message::SignedIntegrity { .. }));
                    let (n, s) = seen.get();
                    seen.set((n + 1, s + u64::from(signed)));
                }
            }
        }
        true
    }));
    let mut m = 4;
    // Joining: the HAVEs bring the newest munro to hook in on.
    stream_for(&mut net, h, &mut m, Duration::from_secs(1));
    let (haves, signed) = counts.get();
    assert!(signed >= 1, "{signed} of {haves} HAVE datagrams signed");
    // Following the stream: DATA bring each munro's signature, HAVEs none
    // (they went with every HAVE round before, to every neighbour).
    counts.set((0, 0));
    stream_for(&mut net, h, &mut m, Duration::from_secs(3));
    let (haves, signed) = counts.get();
    assert!(haves >= 5, "{haves} HAVE datagrams");
    assert_eq!(signed, 0, "{signed} of {haves} HAVE datagrams signed");
}

#[test]
fn a_receiver_never_asks_a_peer_for_what_left_the_peers_window() {
    // The source keeps 32 munros (3.2 s of this stream); the receiver
    // would keep 128. A receiver slower than the stream must not ask for
    // what the source dropped (libswift answers such a request with
    // another chunk's bytes): it cuts what the source announced to the
    // source's window, picks past the window's oldest quarter, and keeps
    // receiving recent chunks.
    let (src, h, id) = source(32 * MUNRO, P256);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    push(&mut net, h, 0..4 * MUNRO);
    let config = EndpointConfig {
        download_limit: Some(200_000),
        ..EndpointConfig::default()
    };
    let (rx, rh) = receiver(&id, 128 * MUNRO, P256, 0, config, net.now);
    net.add(addr(2), rx);
    let munros = 240u64;
    let mut got = Vec::new();
    for m in 4..munros {
        push(&mut net, h, m * MUNRO..(m + 1) * MUNRO);
        net.run_for(Duration::from_millis(100), |_| false);
        if m % 20 == 0 {
            got.push(net.node(addr(2)).swarm_stats(rh).unwrap().chunks_verified);
        }
    }
    let ep = net.node(addr(2));
    let stats = ep.swarm_stats(rh).unwrap();
    let newest = ep
        .have(rh)
        .unwrap()
        .last_filled_to(ChunkIndex(1 << 40))
        .unwrap();
    assert!(
        newest.0 + 32 * MUNRO >= munros * MUNRO,
        "still receiving within the source's window: newest {newest:?}, edge {}: {stats:?}",
        munros * MUNRO - 1
    );
    // It receives all along, at about the rate its limit allows (195
    // chunks/s): every 2 s, at least 200 more chunks.
    assert!(got.windows(2).all(|w| w[1] >= w[0] + 200), "{got:?}");
    assert_eq!(stats.chunks_rejected, 0);
}

#[test]
fn munros_arriving_out_of_order_from_two_relays_skip_nothing() {
    // A receiver fetching from two relays trusts munros out of order; one
    // two or more past the newest it had is ordinary, not a sign that it
    // lags. (A re-hook on it deleted media not yet played, issue 24.)
    // The window is 6.4 s of this stream: longer than the 0.5 s HAVEs may
    // wait, so what a peer announced is still there when asked for.
    let window = 64 * MUNRO;
    let (src, h, id) = source(window, P256);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    push(&mut net, h, 0..2 * MUNRO);
    for relay in [3u16, 4] {
        let setup = receiver_setup(&id, window, P256, 0);
        let (ep, _) = receiver_of(
            setup,
            EndpointConfig::default(),
            u64::from(relay),
            net.now,
            &[1],
        );
        net.add(addr(relay), ep);
    }
    net.run_for(Duration::from_millis(500), |_| false);
    // Not from the source: from the two relays.
    let setup = receiver_setup(&id, window, P256, 1);
    let (rx, rh) = receiver_of(setup, EndpointConfig::default(), 2, net.now, &[3, 4]);
    net.add(addr(2), rx);
    for m in 2..120u64 {
        push(&mut net, h, m * MUNRO..(m + 1) * MUNRO);
        net.run_for(Duration::from_millis(100), |_| false);
    }
    let ep = net.node(addr(2));
    let stats = ep.swarm_stats(rh).unwrap();
    assert_eq!(stats.live_chunks_skipped, 0, "{stats:?}");
    let hook = stats.live_hook_in.expect("hooked in").0;
    assert!(
        stats.chunks_verified >= 120 * MUNRO - hook - 2 * MUNRO,
        "{stats:?}"
    );
}

#[test]
fn haves_far_beyond_the_live_edge_are_refused_and_counted() {
    let (src, h, id) = source(1024, P256);
    let mut net = Net::new(Duration::from_millis(10));
    net.add(addr(1), src);
    push(&mut net, h, 0..4 * MUNRO);
    // Learn the receiver's channel at the source from what the source
    // sends it (a datagram's first four bytes name the channel).
    let (rx, rh) = receiver(&id, 1024, P256, 0, EndpointConfig::default(), net.now);
    net.add(addr(2), rx);
    net.run_for(Duration::from_secs(2), |n| {
        n.nodes[&addr(2)].has_chunk(rh, ChunkIndex(4 * MUNRO - 1))
    });
    assert_eq!(net.node(addr(2)).swarm_stats(rh).unwrap().haves_refused, 0);
    let channel = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen = channel.clone();
    net.filter = Some(Box::new(move |d| {
        if d.from == addr(1) && d.bytes.len() >= 4 {
            let id = u32::from_be_bytes(d.bytes[..4].try_into().unwrap());
            *seen.lock().unwrap() = Some(ChannelId(id));
        }
        true
    }));
    push(&mut net, h, 4 * MUNRO..5 * MUNRO);
    net.run_for(Duration::from_secs(1), |_| false);
    let to = channel
        .lock()
        .unwrap()
        .expect("the source wrote to the receiver");
    // Chunks a billion ahead, and one two million ahead (over two days of
    // a 1 Mbit/s stream): no stream is there yet.
    let far = ChunkSpec::Chunks(ChunkRange::new(1u64 << 30, (1u64 << 30) + 5).unwrap());
    let near = ChunkSpec::Chunks(ChunkRange::single(ChunkIndex(1 << 21)).unwrap());
    let bytes = datagram(to, &[Message::Have(far), Message::Have(near)]);
    net.inject(addr(1), addr(2), bytes);
    // And a chunk past the edge, under no signed munro: never stored.
    let beyond = ChunkIndex(40 * MUNRO);
    let payload = chunk(beyond.0);
    let data = Message::Data {
        spec: ChunkSpec::Chunks(ChunkRange::single(beyond).unwrap()),
        timestamp: Timestamp(0),
        payload: &payload,
    };
    net.inject(addr(1), addr(2), datagram(to, &[data]));
    push(&mut net, h, 5 * MUNRO..6 * MUNRO);
    net.run_for(Duration::from_secs(2), |_| false);
    let ep = net.node(addr(2));
    let stats = ep.swarm_stats(rh).unwrap();
    assert_eq!(stats.haves_refused, 2, "{stats:?}");
    assert_eq!(stats.live_chunks_refused, 1, "{stats:?}");
    assert!(!ep.has_chunk(rh, beyond));
    assert!(
        ep.has_chunk(rh, ChunkIndex(6 * MUNRO - 1)),
        "the stream goes on"
    );
    let requested = ep.requested(rh).unwrap();
    assert!(requested.is_empty_range(ChunkRange::new(1u64 << 30, (1u64 << 30) + 5).unwrap()));
}

#[test]
fn a_day_long_stream_keeps_memory_bounded_by_the_window() {
    // A day of a 1 KiB-chunk stream at two munros a minute, Ed25519 for
    // speed: 92,160 chunks through a relay chain, source → receiver.
    let window = 4 * MUNRO;
    let algorithm = LiveSignatureAlgorithm::ED25519;
    let (src, h, id) = source(window, algorithm);
    let mut net = Net::new(Duration::from_millis(20));
    net.add(addr(1), src);
    push(&mut net, h, 0..MUNRO);
    let (rx, rh) = receiver(
        &id,
        window,
        algorithm,
        0,
        EndpointConfig::default(),
        net.now,
    );
    net.add(addr(2), rx);
    let minutes = 24 * 60u64;
    let mut sizes = Vec::new();
    for minute in 0..minutes {
        for half in 0..2 {
            let m = 1 + 2 * minute + half;
            push(&mut net, h, m * MUNRO..(m + 1) * MUNRO);
            net.run_for(Duration::from_secs(30), |_| false);
        }
        if minute % 360 == 359 {
            let ep = net.node(addr(2));
            sizes.push((
                ep.have(rh).unwrap().heap_bytes(),
                ep.verified_log(rh).kept_len(),
                ep.swarm_stats(rh).unwrap().chunks_verified,
            ));
        }
    }
    let last = (1 + 2 * minutes) * MUNRO - 1;
    let ep = net.node(addr(2));
    assert!(ep.has_chunk(rh, ChunkIndex(last)), "it kept up all day");
    let stats = ep.swarm_stats(rh).unwrap();
    assert_eq!(stats.chunks_verified, 2 * minutes * MUNRO);
    assert_eq!(stats.live_chunks_skipped, 0);
    assert!(ep.have(rh).unwrap().count() <= window);
    // Every quarter of the day the same footprint: nothing grows with time.
    for (heap, log, _) in &sizes {
        assert!(*log <= 4096, "log entries kept: {log}");
        assert!(*heap <= 1024, "have heap: {heap}");
    }
    let src = net.node(addr(1));
    assert_eq!(src.have(h).unwrap().count(), window);
    assert!(src.verified_log(h).kept_len() <= 4096);
}
