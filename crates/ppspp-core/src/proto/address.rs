//! Which addresses may be peers. A PEX answer (RFC 7574 §3.10) is only a
//! claim: a hostile peer can name broadcast and multicast addresses, or
//! hosts on our own private network, and have us send handshakes there
//! (RFC 7574 §13.2 asks that PEX not be usable to aim traffic at third
//! parties). Some addresses are never a peer, whoever names them; private,
//! loopback and link-local ones only when the peer naming them is in the
//! same range, where they mean the same network.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Why an address is not tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressRefusal {
    /// Port 0, the unspecified address, or `0.0.0.0/8`.
    Unspecified,
    /// The limited broadcast address `255.255.255.255`.
    Broadcast,
    /// A multicast group (`224.0.0.0/4`, `ff00::/8`).
    Multicast,
    /// Reserved for future use (`240.0.0.0/4`).
    Reserved,
    /// A private, loopback or link-local address named by a peer outside
    /// that range.
    OutOfScope,
}

impl std::fmt::Display for AddressRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AddressRefusal::Unspecified => "an unspecified address or port",
            AddressRefusal::Broadcast => "a broadcast address",
            AddressRefusal::Multicast => "a multicast address",
            AddressRefusal::Reserved => "a reserved address",
            AddressRefusal::OutOfScope => {
                "a private, loopback or link-local address named by a peer outside it"
            }
        })
    }
}

/// The network an address is meaningful in: the Internet, or one range
/// that means something only to the hosts inside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    Global,
    Loopback,
    /// RFC 1918 blocks, one scope each, and CGNAT's `100.64.0.0/10`
    /// (RFC 6598), keyed by the block's first octets.
    Private([u8; 2]),
    LinkLocal,
    /// IPv6 unique local addresses (`fc00::/7`, RFC 4193).
    UniqueLocal,
}

/// IPv4 addresses inside IPv6 (`::ffff:a.b.c.d`) are judged as IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    }
}

fn scope(ip: IpAddr) -> Scope {
    match canonical(ip) {
        IpAddr::V4(v4) => scope_v4(v4),
        IpAddr::V6(v6) => scope_v6(v6),
    }
}

fn scope_v4(ip: Ipv4Addr) -> Scope {
    let [a, b, ..] = ip.octets();
    match (a, b) {
        (127, _) => Scope::Loopback,
        (10, _) => Scope::Private([10, 0]),
        (172, 16..=31) => Scope::Private([172, 16]),
        (192, 168) => Scope::Private([192, 168]),
        (100, 64..=127) => Scope::Private([100, 64]),
        (169, 254) => Scope::LinkLocal,
        _ => Scope::Global,
    }
}

fn scope_v6(ip: Ipv6Addr) -> Scope {
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Scope::Loopback
    } else if first & 0xffc0 == 0xfe80 {
        Scope::LinkLocal
    } else if first & 0xfe00 == 0xfc00 {
        Scope::UniqueLocal
    } else {
        Scope::Global
    }
}

/// Whether `addr` can be a peer at all, whoever named it (the user, a
/// tracker or a peer).
pub fn check_peer_address(addr: SocketAddr) -> Result<(), AddressRefusal> {
    if addr.port() == 0 {
        return Err(AddressRefusal::Unspecified);
    }
    match canonical(addr.ip()) {
        IpAddr::V4(v4) => {
            let a = v4.octets()[0];
            if v4.is_broadcast() {
                Err(AddressRefusal::Broadcast)
            } else if a == 0 {
                Err(AddressRefusal::Unspecified)
            } else if v4.is_multicast() {
                Err(AddressRefusal::Multicast)
            } else if a >= 240 {
                Err(AddressRefusal::Reserved)
            } else {
                Ok(())
            }
        }
        IpAddr::V6(v6) => {
            if v6.is_unspecified() {
                Err(AddressRefusal::Unspecified)
            } else if v6.is_multicast() {
                Err(AddressRefusal::Multicast)
            } else {
                Ok(())
            }
        }
    }
}

/// Whether a peer at `source` may point us at `addr` (a PEX answer): a
/// possible peer, and a global address or one in the source's own range.
pub fn check_learned_address(addr: SocketAddr, source: SocketAddr) -> Result<(), AddressRefusal> {
    check_peer_address(addr)?;
    match scope(addr.ip()) {
        Scope::Global => Ok(()),
        s if s == scope(source.ip()) => Ok(()),
        _ => Err(AddressRefusal::OutOfScope),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn never_a_peer() {
        for (addr, why) in [
            ("0.0.0.0:6778", AddressRefusal::Unspecified),
            ("0.1.2.3:6778", AddressRefusal::Unspecified),
            ("1.2.3.4:0", AddressRefusal::Unspecified),
            ("[::]:6778", AddressRefusal::Unspecified),
            ("255.255.255.255:6778", AddressRefusal::Broadcast),
            ("224.0.0.1:6778", AddressRefusal::Multicast),
            ("239.255.255.250:1900", AddressRefusal::Multicast),
            ("[ff02::1]:6778", AddressRefusal::Multicast),
            ("[::ffff:224.0.0.1]:6778", AddressRefusal::Multicast),
            ("240.0.0.1:6778", AddressRefusal::Reserved),
        ] {
            assert_eq!(check_peer_address(a(addr)), Err(why), "{addr}");
            assert_eq!(
                check_learned_address(a(addr), a("10.0.0.1:1")),
                Err(why),
                "{addr}"
            );
        }
        for addr in [
            "1.2.3.4:6778",
            "10.0.0.1:6778",
            "127.0.0.1:6778",
            "[2001:db8::1]:1",
        ] {
            assert_eq!(check_peer_address(a(addr)), Ok(()), "{addr}");
        }
    }

    #[test]
    fn private_ranges_only_from_inside() {
        let global = a("198.51.100.7:6778");
        for addr in [
            "10.0.0.1:6778",
            "172.16.0.1:6778",
            "172.31.255.1:6778",
            "192.168.1.1:6778",
            "169.254.1.1:6778",
            "100.64.0.1:6778",
            "127.0.0.1:6778",
            "[::1]:6778",
            "[fe80::1]:6778",
            "[fd00::1]:6778",
        ] {
            assert_eq!(
                check_learned_address(a(addr), global),
                Err(AddressRefusal::OutOfScope),
                "{addr}"
            );
        }
        // The same range means the same network.
        assert_eq!(
            check_learned_address(a("10.9.9.9:1"), a("10.0.0.1:2")),
            Ok(())
        );
        assert_eq!(
            check_learned_address(a("192.168.1.1:1"), a("192.168.7.7:2")),
            Ok(())
        );
        assert_eq!(
            check_learned_address(a("127.0.0.1:1"), a("127.0.0.1:2")),
            Ok(())
        );
        // Another private range is another network.
        assert_eq!(
            check_learned_address(a("192.168.1.1:1"), a("10.0.0.1:2")),
            Err(AddressRefusal::OutOfScope)
        );
        assert_eq!(
            check_learned_address(a("172.32.0.1:1"), global),
            Ok(()),
            "172.32/16 is outside 172.16/12"
        );
        // Global addresses may come from anywhere.
        assert_eq!(check_learned_address(global, a("10.0.0.1:2")), Ok(()));
        assert_eq!(
            check_learned_address(a("[::ffff:10.0.0.5]:1"), a("10.0.0.1:2")),
            Ok(())
        );
    }
}
