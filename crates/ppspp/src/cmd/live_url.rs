//! Live swarm URLs: `ppspp://HOST:PORT/<swarm id hex>?live=1&cs=1024&munro=32&sig=rfc&win=N`.
//!
//! A live swarm's id is the source's public key with its DNSSEC algorithm
//! byte in front (RFC 7574 §12.1, §6.1), so the path is longer than a
//! Merkle root and names the signature algorithm. The query carries what
//! the handshake does not: the chunk size, the munro size (libswift does
//! not negotiate it, `docs/libswift-live.md`), what a signature covers
//! (`sig=rfc`, RFC 7574 §6.1.2.2, or `sig=libswift`: the munro hash
//! alone), the source's discard window in chunks (§6.1.3, option 7), and
//! `method=sign-all` for a stream signed chunk by chunk (§6.1.1).
//! libswift's own `tswift:/<hex>` form (or `tswift://HOST:PORT/<hex>`) is
//! read as a libswift swarm: its profile, 1 KiB chunks, the munro size
//! learned from the first signed munro.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};

use ppspp_core::live::{LiveMethod, LivePublicKey, MunroSize, SignatureProfile};
use ppspp_core::wire::LiveSignatureAlgorithm;
use ppspp_core::ChunkSize;

/// What a URL says about a live swarm and where to find a peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveUrl {
    /// A peer to start from.
    pub peer: Option<SocketAddr>,
    /// The swarm id: algorithm byte and public key.
    pub id: Vec<u8>,
    /// Bytes per chunk.
    pub chunk_size: ChunkSize,
    /// Chunks per signed munro, when the URL says.
    pub munro: Option<MunroSize>,
    /// What a signature covers.
    pub profile: SignatureProfile,
    /// The source's discard window in chunks, when it has one.
    pub window: Option<u64>,
    /// How chunks are vouched for.
    pub method: LiveMethod,
}

impl LiveUrl {
    /// Whether `s` names a live swarm (and should be parsed as one).
    pub fn is_live(s: &str) -> bool {
        let s = s.trim();
        s.starts_with("tswift:")
            || s.split_once('?')
                .is_some_and(|(_, q)| q.split('&').any(|p| p == "live=1" || p == "live"))
    }

    /// Parses a live URL (see the module documentation).
    pub fn parse(s: &str) -> Result<LiveUrl, String> {
        let s = s.trim();
        if let Some(rest) = s.strip_prefix("tswift:") {
            let rest = rest.trim_start_matches('/');
            let (authority, id) = match rest.split_once('/') {
                Some((a, id)) => (a, id),
                None => ("", rest),
            };
            let mut url = Self::with_id(id.split('?').next().unwrap_or(id))?;
            url.peer = peer_of(authority)?;
            url.profile = SignatureProfile::Libswift;
            return Ok(url);
        }
        let rest = s
            .strip_prefix("ppspp://")
            .or_else(|| s.strip_prefix("ppsp://"))
            .ok_or("a live swarm URL starts with ppspp:// or tswift:")?;
        let (authority, path) = rest
            .split_once('/')
            .ok_or("a ppspp URL needs /<swarm id> after the address")?;
        let (id, query) = path.split_once('?').unwrap_or((path, ""));
        let mut url = Self::with_id(id)?;
        url.peer = peer_of(authority)?;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            match k {
                "cs" => {
                    let n: u64 = v.parse().map_err(|_| format!("bad chunk size '{v}'"))?;
                    url.chunk_size = ChunkSize::new(n).map_err(|e| e.to_string())?;
                }
                "munro" => {
                    let n: u64 = v.parse().map_err(|_| format!("bad munro size '{v}'"))?;
                    url.munro = Some(MunroSize::new(n).ok_or_else(|| {
                        format!("a munro holds a power of two of chunks, not {n}")
                    })?);
                }
                "sig" => {
                    url.profile = SignatureProfile::from_name(v).ok_or_else(|| {
                        format!("unknown signature profile '{v}' (rfc, libswift)")
                    })?;
                }
                "method" => {
                    url.method = match v {
                        "umt" => LiveMethod::UnifiedMerkleTree,
                        "sign-all" => LiveMethod::SignAll,
                        _ => return Err(format!("unknown live method '{v}' (umt, sign-all)")),
                    };
                }
                "win" => {
                    let n: u64 = v.parse().map_err(|_| format!("bad window '{v}'"))?;
                    url.window = (n > 0).then_some(n);
                }
                // `live` marks the URL; others are for other tools.
                _ => {}
            }
        }
        Ok(url)
    }

    /// A URL of swarm `hex` with the defaults, if `hex` is a public key we
    /// can verify with.
    fn with_id(hex_id: &str) -> Result<LiveUrl, String> {
        let id = hex::decode(hex_id)
            .map_err(|_| format!("'{hex_id}' is not a swarm id (hexadecimal public key)"))?;
        LivePublicKey::from_swarm_id(&id)
            .map_err(|e| format!("'{hex_id}' is not a live swarm id we can verify: {e}"))?;
        Ok(LiveUrl {
            peer: None,
            id,
            chunk_size: ChunkSize::DEFAULT,
            munro: None,
            profile: SignatureProfile::Rfc7574,
            window: None,
            method: LiveMethod::UnifiedMerkleTree,
        })
    }

    /// The signature algorithm the id names.
    pub fn algorithm(&self) -> LiveSignatureAlgorithm {
        LiveSignatureAlgorithm(self.id[0])
    }

    /// The swarm id in hex (the HTTP path a viewer serves it at).
    pub fn id_hex(&self) -> String {
        hex::encode(&self.id)
    }
}

fn peer_of(authority: &str) -> Result<Option<SocketAddr>, String> {
    if authority.is_empty() {
        return Ok(None);
    }
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("bad address '{authority}' in URL: {e}"))?
        .next()
        .ok_or_else(|| format!("'{authority}' resolves to no address"))?;
    Ok(Some(addr))
}

impl fmt::Display for LiveUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ppspp://")?;
        if let Some(p) = self.peer {
            write!(f, "{p}")?;
        }
        write!(
            f,
            "/{}?live=1&cs={}&sig={}",
            self.id_hex(),
            self.chunk_size,
            self.profile.name()
        )?;
        if let Some(m) = self.munro {
            write!(f, "&munro={}", m.chunks())?;
        }
        if let Some(w) = self.window {
            write!(f, "&win={w}")?;
        }
        if self.method == LiveMethod::SignAll {
            write!(f, "&method=sign-all")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ppspp_core::live::LiveKeyPair;

    fn id() -> Vec<u8> {
        LiveKeyPair::from_secret(LiveSignatureAlgorithm::ECDSAP256SHA256, &[3; 32])
            .unwrap()
            .public_key()
            .swarm_id()
    }

    #[test]
    fn round_trip() {
        let url = LiveUrl {
            peer: Some("127.0.0.1:6778".parse().unwrap()),
            id: id(),
            chunk_size: ChunkSize::new(8192).unwrap(),
            munro: MunroSize::new(64),
            profile: SignatureProfile::Libswift,
            window: Some(4096),
            method: LiveMethod::UnifiedMerkleTree,
        };
        let s = url.to_string();
        assert!(LiveUrl::is_live(&s), "{s}");
        assert_eq!(LiveUrl::parse(&s).unwrap(), url);
        assert_eq!(url.algorithm(), LiveSignatureAlgorithm::ECDSAP256SHA256);
        let sign_all = LiveUrl {
            method: LiveMethod::SignAll,
            ..url
        };
        let s = sign_all.to_string();
        assert!(s.contains("method=sign-all"), "{s}");
        assert_eq!(LiveUrl::parse(&s).unwrap(), sign_all);
    }

    #[test]
    fn libswift_urls_take_its_profile() {
        let hex = hex::encode(id());
        for s in [
            format!("tswift:/{hex}"),
            format!("tswift://127.0.0.1:9/{hex}"),
        ] {
            let u = LiveUrl::parse(&s).unwrap();
            assert!(LiveUrl::is_live(&s));
            assert_eq!(u.profile, SignatureProfile::Libswift);
            assert_eq!((u.munro, u.window), (None, None));
        }
        assert_eq!(
            LiveUrl::parse(&format!("tswift://127.0.0.1:9/{hex}"))
                .unwrap()
                .peer,
            Some("127.0.0.1:9".parse().unwrap())
        );
    }

    #[test]
    fn bad_urls_say_why() {
        let hex = hex::encode(id());
        let bad = |s: String, why: &str| {
            let e = LiveUrl::parse(&s).unwrap_err();
            assert!(e.contains(why), "{s}: {e}");
        };
        bad(
            format!("ppspp://127.0.0.1:1/{hex}?live=1&munro=3"),
            "power of two",
        );
        bad(format!("ppspp://127.0.0.1:1/{hex}?live=1&sig=x"), "profile");
        bad("ppspp://127.0.0.1:1/abcd?live=1".into(), "verify");
        bad("ppspp://127.0.0.1:1/xyz?live=1".into(), "not a swarm id");
        assert!(!LiveUrl::is_live(&format!(
            "ppspp://127.0.0.1:1/{hex}?cs=1024"
        )));
    }
}
