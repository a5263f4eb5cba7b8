//! Pieces shared by the commands that run a node: the runtime, node
//! settings, progress display.

use std::hash::{BuildHasher, Hasher};
use std::io::{IsTerminal, Read};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, UdpSocket};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use ppspp_core::proto::EndpointConfig;
use ppspp_udp::NodeConfig;

/// A tokio runtime sized for this machine (the endpoint is one task; the
/// rest is I/O and the CLI).
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
}

/// A seed for the endpoint's random choices, from the OS-seeded hasher
/// (channel ids must be unpredictable, RFC 7574 §13.1).
pub fn random_seed() -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.write_u32(std::process::id());
    h.finish()
}

/// Node settings from the common options.
pub fn node_config(listen: SocketAddr, upload: Option<u64>, download: Option<u64>) -> NodeConfig {
    let endpoint = EndpointConfig {
        upload_limit: upload,
        download_limit: download,
        ..EndpointConfig::default()
    };
    NodeConfig {
        listen,
        endpoint,
        seed: random_seed(),
    }
}

/// The address to tell others for a node bound to `bound`: an unspecified
/// bind address is replaced by the address of the interface the default
/// route uses (found without sending anything), or loopback.
pub fn announce_addr(bound: SocketAddr) -> SocketAddr {
    if !bound.ip().is_unspecified() {
        return bound;
    }
    let probe = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))
        .and_then(|s| s.connect((Ipv4Addr::new(192, 0, 2, 1), 9)).map(|()| s))
        .and_then(|s| s.local_addr());
    let ip = probe
        .map(|a| a.ip())
        .unwrap_or(IpAddr::V4(Ipv4Addr::LOCALHOST));
    SocketAddr::new(ip, bound.port())
}

/// A progress bar on a terminal, hidden otherwise.
pub fn progress_bar(len: u64, template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// A reader that advances a progress bar.
pub struct ProgressReader<R> {
    pub inner: R,
    pub bar: ProgressBar,
}

impl<R: Read> Read for ProgressReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bar.inc(n as u64);
        Ok(n)
    }
}

/// The peers to download from: the URL's address and every `--peer`,
/// without repeats; an error when there is none.
pub fn peers_of(
    url: &super::url::SwarmUrl,
    extra: &[SocketAddr],
) -> anyhow::Result<Vec<SocketAddr>> {
    let mut peers: Vec<SocketAddr> = url.peer.into_iter().chain(extra.iter().copied()).collect();
    peers.dedup();
    if peers.is_empty() {
        anyhow::bail!("no peer to download from: give a URL with an address or --peer ADDR");
    }
    Ok(peers)
}
