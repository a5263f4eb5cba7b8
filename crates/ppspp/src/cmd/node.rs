//! Pieces shared by the commands that run a node: the runtime, node
//! settings, progress display.

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
        seed: None,
        clock_zero: None,
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

/// Handshakes sent to a peer before giving up on it; at least three, so
/// that the libswift fallback (the third try drops options 8 and 9, see
/// `Compat::Auto`) gets its turn.
pub const HANDSHAKE_TRIES: u32 = 5;

/// Default of `--connect-timeout`: how long a downloading node waits for a
/// peer to answer its handshake. The core's default (1 s doubling over 5
/// tries: 31 s) suits a node that serves; a user waiting for a download to
/// start should hear sooner that nobody answers, and a handshake answer
/// takes one round trip: 15 s still spans five tries with the first retry
/// at about half a second, beyond any terrestrial round trip.
pub const CONNECT_TIMEOUT: &str = "15";

/// Spreads the handshake tries over `timeout`: the retry delay doubles
/// from `timeout / (2^tries - 1)`, so the last try's wait ends at
/// `timeout`, when the channel closes with `CloseReason::HandshakeTimeout`.
pub fn set_connect_timeout(endpoint: &mut EndpointConfig, timeout: Duration) {
    endpoint.handshake_attempts = HANDSHAKE_TRIES;
    endpoint.handshake_retry = timeout / (2u32.pow(HANDSHAKE_TRIES) - 1);
}

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM: either is a request
/// to stop cleanly (last checkpoint written, peers told). Create it once
/// and poll it throughout: a signal is caught only once its listener is
/// installed, and from then on it no longer ends the process by itself.
pub async fn interrupted() -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = signal(SignalKind::terminate())?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r,
            _ = term.recv() => Ok(()),
        }
    }
    #[cfg(not(unix))]
    {
        tokio::signal::ctrl_c().await
    }
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
