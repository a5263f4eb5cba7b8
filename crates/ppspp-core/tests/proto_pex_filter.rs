//! PEX answers are claims: a peer that names broadcast, multicast or
//! unspecified addresses, or hosts on private networks it is not on, does
//! not make us send anything there (issue 21, item 3). Addresses given by
//! the user are refused only when they can be no peer at all.

mod common;

use std::net::{SocketAddr, SocketAddrV4};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{content, leecher_endpoint, seeder_endpoint, Net};
use ppspp_core::proto::address::AddressRefusal;
use ppspp_core::proto::{CloseReason, EndpointConfig, Event};
use ppspp_core::wire::{ChannelId, DatagramWriter, Message, SwarmParams};
use ppspp_core::ChunkSize;

fn v4(s: &str) -> SocketAddrV4 {
    s.parse().unwrap()
}

/// A PEX answer from `from` to our channel `to` naming `addrs`.
fn pex_answer(to: ChannelId, addrs: &[SocketAddrV4]) -> Vec<u8> {
    let params = SwarmParams {
        chunk_size: Some(1024),
        ..SwarmParams::default()
    };
    let mut buf = vec![0u8; 1500];
    let mut w = DatagramWriter::new(&mut buf, to, params).unwrap();
    for a in addrs {
        w.push(&Message::PexResV4(*a)).unwrap();
    }
    let n = w.finish();
    buf.truncate(n);
    buf
}

/// A downloader `me` connected to a seeder at `seeder`, both on a network
/// of the test's choosing; returns the network and our channel id.
fn connected(me: SocketAddr, seeder: SocketAddr) -> (Net, ChannelId) {
    let (bytes, tree) = content(200 * 1024, 251, ChunkSize::DEFAULT);
    let mut net = Net::new(Duration::from_millis(5));
    net.add(
        seeder,
        seeder_endpoint(EndpointConfig::default(), 1, &tree, &bytes),
    );
    let (ep, h) = leecher_endpoint(EndpointConfig::default(), 2, &tree, "sequential");
    net.add(me, ep);
    let now = net.now;
    let ch = net.node(me).connect(now, h, seeder).unwrap();
    net.run_for(Duration::from_millis(20), |_| false);
    (net, ch)
}

/// Records every destination anything is sent to.
fn record_destinations(net: &mut Net) -> Arc<Mutex<Vec<SocketAddr>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    net.filter = Some(Box::new(move |f| {
        log.lock().unwrap().push(f.to);
        true
    }));
    seen
}

#[test]
fn a_peer_on_the_internet_cannot_aim_us_at_private_or_special_addresses() {
    let me: SocketAddr = "203.0.113.5:6778".parse().unwrap();
    let seeder: SocketAddr = "198.51.100.1:6778".parse().unwrap();
    let (mut net, ch) = connected(me, seeder);
    let refused = [
        v4("0.0.0.0:6778"),
        v4("255.255.255.255:6778"),
        v4("224.0.0.1:6778"),
        v4("10.0.0.1:6778"),
        v4("172.16.0.1:6778"),
        v4("192.168.1.1:6778"),
        v4("169.254.1.1:6778"),
        v4("127.0.0.1:6778"),
        v4("198.51.100.9:0"),
    ];
    let fine = v4("198.51.100.9:6778");
    let mut named = refused.to_vec();
    named.push(fine);
    let seen = record_destinations(&mut net);
    net.inject(seeder, me, pex_answer(ch, &named));
    net.run_for(Duration::from_secs(5), |_| false);

    let learned: Vec<SocketAddr> = net
        .events
        .iter()
        .filter_map(|(at, e)| match e {
            Event::PeerAddress { addr, .. } if *at == me => Some(*addr),
            _ => None,
        })
        .collect();
    assert_eq!(learned, [SocketAddr::V4(fine)]);
    assert_eq!(
        net.node(me).stats().pex_addresses_refused,
        refused.len() as u64
    );
    let seen = seen.lock().unwrap();
    for a in refused {
        assert!(!seen.contains(&SocketAddr::V4(a)), "sent to {a}");
    }
    assert!(
        seen.contains(&SocketAddr::V4(fine)),
        "the good one is tried"
    );
}

#[test]
fn a_peer_on_our_private_network_may_name_its_neighbours() {
    let me: SocketAddr = "192.168.1.5:6778".parse().unwrap();
    let seeder: SocketAddr = "192.168.1.1:6778".parse().unwrap();
    let (mut net, ch) = connected(me, seeder);
    let seen = record_destinations(&mut net);
    let neighbour = v4("192.168.1.7:6778");
    let elsewhere = v4("10.1.1.1:6778");
    net.inject(seeder, me, pex_answer(ch, &[neighbour, elsewhere]));
    net.run_for(Duration::from_secs(1), |_| false);
    let seen = seen.lock().unwrap();
    assert!(seen.contains(&SocketAddr::V4(neighbour)));
    assert!(!seen.contains(&SocketAddr::V4(elsewhere)));
    assert_eq!(net.node(me).stats().pex_addresses_refused, 1);
}

#[test]
fn the_user_cannot_make_us_connect_to_a_broadcast_address() {
    let me: SocketAddr = "203.0.113.5:6778".parse().unwrap();
    let seeder: SocketAddr = "198.51.100.1:6778".parse().unwrap();
    let (mut net, _) = connected(me, seeder);
    let h = match net.events.iter().find(|(at, _)| *at == me) {
        Some((_, Event::ContentLength { swarm, .. } | Event::Connected { swarm, .. })) => *swarm,
        other => panic!("{other:?}"),
    };
    let now = net.now;
    let cases = [
        ("255.255.255.255:6778", AddressRefusal::Broadcast),
        ("224.0.0.251:5353", AddressRefusal::Multicast),
        ("0.0.0.0:6778", AddressRefusal::Unspecified),
    ];
    for (a, why) in cases {
        let a: SocketAddr = a.parse().unwrap();
        assert_eq!(net.node(me).connect(now, h, a), None);
        let ev = std::iter::from_fn(|| net.node(me).poll_event()).last();
        assert_eq!(
            ev,
            Some(Event::Closed {
                swarm: h,
                peer: a,
                reason: CloseReason::Unusable(why)
            })
        );
    }
    // A private address from the user is the user's business (a LAN).
    let lan: SocketAddr = "192.168.1.1:6778".parse().unwrap();
    assert!(net.node(me).connect(now, h, lan).is_some());
}
