//! Peer exchange address rules (RFC 7574 §3.10, §8.13).

use std::collections::BTreeSet;
use std::net::{IpAddr, SocketAddr};

use rand::seq::SliceRandom;
use rand::Rng;

/// Whether `ip` belongs to a private, loopback, link-local or otherwise
/// non-global network. RFC 7574 §8.13: PEX answers to a requester outside
/// such networks must not contain such addresses.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                // 100.64.0.0/10, carrier-grade NAT (RFC 6598).
                || (v4.octets()[0] == 100 && (v4.octets()[1] & 0xC0) == 64)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                // fc00::/7 unique local, fe80::/10 link-local.
                || (first & 0xFE00) == 0xFC00
                || (first & 0xFFC0) == 0xFE80
        }
    }
}

/// Whether `candidate` may be told to `requester` in a PEX answer.
pub fn may_share(candidate: SocketAddr, requester: SocketAddr) -> bool {
    candidate != requester && (is_internal(requester.ip()) || !is_internal(candidate.ip()))
}

/// Up to `n` of `peers` that may be told to `requester`, drawn at random
/// with `rng`. Not the first `n` in address order: that would name the
/// same peers to every requester, and never one that joined later (E2 in
/// steady state, issue 26: latecomers, told only of early peers that then
/// left, were left with the seeder alone and took twice as long).
pub fn sample_shareable(
    peers: &BTreeSet<SocketAddr>,
    requester: SocketAddr,
    n: usize,
    rng: &mut impl Rng,
) -> Vec<SocketAddr> {
    let mut shareable: Vec<SocketAddr> = peers
        .iter()
        .copied()
        .filter(|a| may_share(*a, requester))
        .collect();
    // All of them fit: no draw, so that the random stream, and every
    // choice after, is as it was before answers were sampled.
    if shareable.len() <= n {
        return shareable;
    }
    let (chosen, _) = shareable.partial_shuffle(rng, n);
    chosen.to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn internal_networks() {
        for ip in [
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.5",
            "127.0.0.1",
            "169.254.1.1",
            "100.64.0.1",
            "::1",
            "fe80::1",
            "fd00::5",
            "::ffff:10.0.0.1",
        ] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "100.128.0.1", "2001:db8::1", "172.32.0.1"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn outsiders_get_no_internal_addresses() {
        let outsider = a("8.8.8.8:1");
        assert!(!may_share(a("10.0.0.2:6778"), outsider));
        assert!(!may_share(a("[fe80::2]:6778"), outsider));
        assert!(may_share(a("1.2.3.4:6778"), outsider));
        let insider = a("10.0.0.9:1");
        assert!(may_share(a("10.0.0.2:6778"), insider));
        assert!(may_share(a("1.2.3.4:6778"), insider));
        assert!(!may_share(insider, insider));
    }

    #[test]
    fn a_sample_is_bounded_distinct_and_shareable() {
        use rand::SeedableRng;
        let mut rng = rand::rngs::Xoshiro256PlusPlus::seed_from_u64(7);
        let requester = a("203.0.113.9:1");
        let mut peers: BTreeSet<SocketAddr> =
            (1..=20).map(|i| a(&format!("198.51.100.{i}:1"))).collect();
        peers.insert(requester);
        peers.insert(a("10.0.0.1:1"));
        for n in [0, 5, 20, 50] {
            let got = sample_shareable(&peers, requester, n, &mut rng);
            assert_eq!(got.len(), n.min(20), "n = {n}");
            let distinct: BTreeSet<_> = got.iter().collect();
            assert_eq!(distinct.len(), got.len());
            assert!(got.iter().all(|p| may_share(*p, requester)));
        }
    }
}
