//! `ppspp stream URL` on a live swarm: receive the stream from peers (RFC
//! 7574 §6.1: verified against the source's signatures), relay it to other
//! peers, and serve it over HTTP as it arrives (`gateway.rs`).

mod gateway;

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use ppspp_core::live::{LiveParams, LiveShape, MunroSize};
use ppspp_core::pick::PickerKind;
use ppspp_core::pick::{MediaRate, VodWindows};
use ppspp_core::play::Bitrate;
use ppspp_core::proto::SwarmSetup;
use ppspp_core::storage::LiveRing;
use ppspp_core::wire::DiscardWindow;
use tokio::net::TcpListener;

use super::StreamArgs;
use super::{server, start_node, until_done};
use crate::cmd::contacts::Contacts;
use crate::cmd::live_url::LiveUrl;
use crate::cmd::node::runtime;
use gateway::LiveGateway;

/// The window a viewer keeps when the URL does not give the source's:
/// 32 Ki chunks (32 MiB of 1 KiB chunks, a minute of 4 Mbit/s).
const DEFAULT_WINDOW: u64 = 32 * 1024;

/// Receives and serves the live stream of `url` until interrupted.
pub fn run(args: &StreamArgs, url: &LiveUrl, peers: Vec<SocketAddr>) -> Result<()> {
    let cs = url.chunk_size;
    let window = url.window.unwrap_or(DEFAULT_WINDOW);
    let munro = url.munro.unwrap_or(MunroSize::LIBSWIFT);
    let shape = LiveShape {
        params: LiveParams {
            method: url.method,
            munro,
            profile: url.profile,
            ..LiveParams::default()
        }
        .normalised(),
        algorithm: url.algorithm(),
        window: DiscardWindow::Window(window),
        chunk_size: None,
    };
    // Hook in far enough behind the newest munro that the HTTP response,
    // which starts `--live-delay` behind the edge, finds its chunks.
    let bitrate_bps = args.bitrate.saturating_mul(8);
    let behind = hook_in_munros(
        args.live_delay,
        bitrate_bps,
        cs.bytes_u64(),
        shape.params.munro,
    );
    let setup = SwarmSetup::live_receiver(
        &url.id,
        shape,
        url.munro.is_some(),
        cs,
        Box::new(LiveRing::new(cs, window)),
        PickerKind::DEFAULT_LIVE.build(
            MediaRate {
                chunk_size: cs,
                bitrate: Bitrate(bitrate_bps),
            },
            VodWindows::default(),
        ),
    )
    .map_err(|e| anyhow!("{e}"))?
    .hook_in_behind(behind);
    let id = url.id_hex();
    let rt = runtime()?;
    let result = rt.block_on(async {
        let (node, mut events, task) = start_node(args).await?;
        let swarm = node.add_swarm(setup).await?;
        for p in &peers {
            node.connect(swarm, *p)?;
        }
        let mut contacts = Contacts::new(&peers, args.connect_timeout, Instant::now());
        let listener = TcpListener::bind(args.http)
            .await
            .with_context(|| format!("cannot serve HTTP on {}", args.http))?;
        let mut local = listener.local_addr()?;
        if local.ip().is_unspecified() {
            local.set_ip(Ipv4Addr::LOCALHOST.into());
        }
        let http_url = format!("http://{local}/{id}");
        let gw = Arc::new(LiveGateway::new(
            node.clone(),
            swarm,
            id.clone(),
            cs.bytes_u64(),
            bitrate_bps,
            args.live_delay,
        ));
        let limits = server::Limits {
            max_connections: args.max_connections as usize,
            header_timeout: args.http_header_timeout,
            // A live response never ends; a player that stops reading for
            // this long has gone.
            send_timeout: Some(args.http_send_timeout),
        };
        tokio::spawn(server::serve(listener, gw, limits));
        println!("{http_url}");
        use std::io::Write;
        std::io::stdout().flush()?;
        eprintln!(
            "ppspp: live stream at {http_url} (HLS: {http_url}/live.m3u8, status: {http_url}/stats)"
        );
        let player = match args.player {
            Some(p) => Some(super::spawn_player(p, &http_url)?),
            None => None,
        };
        let watch = until_done::Watch {
            node: &node,
            swarm,
            events: &mut events,
            contacts: &mut contacts,
            id: &id,
            storing: "keep the stream",
        };
        let outcome = until_done::run(watch, player, |_| {}, || true).await;
        node.shutdown().await?;
        task.await??;
        outcome
    });
    rt.shutdown_timeout(Duration::from_millis(100));
    result
}

/// Munros to hook in behind the newest: `delay` of media, rounded up,
/// plus one, so that the HTTP side's start is inside what is fetched.
fn hook_in_munros(delay: Duration, bitrate_bps: u64, chunk_size: u64, munro: MunroSize) -> u64 {
    let bytes = delay.as_secs_f64() * bitrate_bps as f64 / 8.0;
    let munro_bytes = (chunk_size * munro.chunks()) as f64;
    (bytes / munro_bytes).ceil() as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hook_in_covers_the_delay() {
        let m = MunroSize::new(32).unwrap();
        // 3 s of 4 Mbit/s = 1.5 MB = 45.8 munros of 32 KiB: 46, plus one.
        assert_eq!(
            hook_in_munros(Duration::from_secs(3), 4_000_000, 1024, m),
            47
        );
        assert_eq!(hook_in_munros(Duration::ZERO, 4_000_000, 1024, m), 1);
    }
}
