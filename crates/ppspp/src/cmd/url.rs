//! Swarm URLs: `ppspp://HOST:PORT/<root-hex>?cs=1024&hf=sha1&cl=3000`.
//!
//! The path is the swarm id in hexadecimal (RFC 7574 §8.13 uses the same
//! `ppsp://host:port/<swarm id hex>` shape for membership certificates); the
//! query carries the rest of the swarm's metadata (RFC 7574 §8.4: chunk
//! size, hash function, content length). A bare swarm id in hex is accepted
//! too, with the defaults (1024-byte chunks, the hash function its length
//! implies, size learned from peak hashes).

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};

use ppspp_core::{ChunkSize, Hash, HashFunction};

/// What a URL says about a swarm and where to find a peer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SwarmUrl {
    /// A peer to start from.
    pub peer: Option<SocketAddr>,
    /// The swarm id: the Merkle root.
    pub root: Hash,
    /// Bytes per chunk.
    pub chunk_size: ChunkSize,
    /// The Merkle hash function.
    pub hash: HashFunction,
    /// The content length, when known.
    pub content_len: Option<u64>,
}

impl SwarmUrl {
    /// Parses a URL or a bare swarm id.
    pub fn parse(s: &str) -> Result<SwarmUrl, String> {
        let s = s.trim();
        let Some(rest) = s
            .strip_prefix("ppspp://")
            .or_else(|| s.strip_prefix("ppsp://"))
        else {
            return Self::bare(s);
        };
        let (authority, path) = rest
            .split_once('/')
            .ok_or("a ppspp URL needs /<swarm id> after the address")?;
        let (id, query) = path.split_once('?').unwrap_or((path, ""));
        let mut url = Self::bare(id)?;
        if !authority.is_empty() {
            let addr = authority
                .to_socket_addrs()
                .map_err(|e| format!("bad address '{authority}' in URL: {e}"))?
                .next()
                .ok_or_else(|| format!("'{authority}' resolves to no address"))?;
            url.peer = Some(addr);
        }
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| format!("bad URL parameter '{pair}'"))?;
            match k {
                "cs" => {
                    let n: u64 = v.parse().map_err(|_| format!("bad chunk size '{v}'"))?;
                    url.chunk_size = ChunkSize::new(n).map_err(|e| e.to_string())?;
                }
                "hf" => {
                    url.hash = HashFunction::from_name(v)
                        .ok_or_else(|| format!("unknown hash function '{v}'"))?;
                }
                "cl" => {
                    url.content_len =
                        Some(v.parse().map_err(|_| format!("bad content length '{v}'"))?)
                }
                // Unknown parameters are for other tools; ignore them.
                _ => {}
            }
        }
        if url.root.len() != url.hash.len() {
            return Err(format!(
                "a {} swarm id has {} hex digits, not {}",
                url.hash,
                2 * url.hash.len(),
                2 * url.root.len()
            ));
        }
        if url.content_len == Some(0) {
            return Err("content length 0: an empty file has no swarm".into());
        }
        Ok(url)
    }

    fn bare(id: &str) -> Result<SwarmUrl, String> {
        let root = Hash::from_hex(id)
            .ok_or_else(|| format!("'{id}' is not a swarm id (hexadecimal Merkle root)"))?;
        let hash = HashFunction::ALL
            .into_iter()
            .find(|f| f.len() == root.len())
            .ok_or_else(|| format!("no hash function has {}-byte digests", root.len()))?;
        Ok(SwarmUrl {
            peer: None,
            root,
            chunk_size: ChunkSize::DEFAULT,
            hash,
            content_len: None,
        })
    }
}

impl fmt::Display for SwarmUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ppspp://")?;
        if let Some(p) = self.peer {
            write!(f, "{p}")?;
        }
        write!(
            f,
            "/{}?cs={}&hf={}",
            self.root.to_hex(),
            self.chunk_size,
            self.hash
        )?;
        if let Some(cl) = self.content_len {
            write!(f, "&cl={cl}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "d6e7fb96c98bd9ffc4d71aed40b0d351096d993a";

    #[test]
    fn round_trip() {
        let s = format!("ppspp://127.0.0.1:6778/{ROOT}?cs=1024&hf=sha1&cl=3000");
        let u = SwarmUrl::parse(&s).unwrap();
        assert_eq!(u.peer, Some("127.0.0.1:6778".parse().unwrap()));
        assert_eq!(u.root.to_hex(), ROOT);
        assert_eq!(u.content_len, Some(3000));
        assert_eq!(u.to_string(), s);
    }

    #[test]
    fn bare_ids_and_errors() {
        let u = SwarmUrl::parse(ROOT).unwrap();
        assert_eq!(
            (u.peer, u.hash, u.chunk_size.bytes(), u.content_len),
            (None, HashFunction::Sha1, 1024, None)
        );
        let sha256 = "ab".repeat(32);
        assert_eq!(SwarmUrl::parse(&sha256).unwrap().hash, HashFunction::Sha256);
        assert!(SwarmUrl::parse("xyz")
            .unwrap_err()
            .contains("not a swarm id"));
        assert!(
            SwarmUrl::parse(&format!("ppspp://127.0.0.1:1/{ROOT}?hf=sha256"))
                .unwrap_err()
                .contains("hex digits")
        );
        assert!(SwarmUrl::parse(&format!("ppspp://127.0.0.1:1/{ROOT}?cs=0")).is_err());
        assert!(SwarmUrl::parse(&format!("ppspp://127.0.0.1:1/{ROOT}?cl=0")).is_err());
        assert!(SwarmUrl::parse(&format!("ppspp://nohost/{ROOT}")).is_err());
        assert!(SwarmUrl::parse("ppspp://127.0.0.1:1").is_err());
    }
}
