//! Accepting HTTP connections within limits: a connection budget, hyper's
//! header timeout, a send timeout and small per-connection buffers, so
//! that clients who connect and then say or read nothing cannot take the
//! gateway's memory or descriptors, nor lock out a player (issue 21,
//! items 4–5).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use super::conns::{Budget, Permit};
use super::http::Body;
use super::stall::StallGuard;

/// What answers the requests: the VoD gateway, or a live one.
pub trait Site: Send + Sync + 'static {
    /// The answer to one request.
    fn route(
        self: Arc<Self>,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = hyper::Response<Body>> + Send>>;
}

/// The HTTP side's limits.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Connections served at once; see [`Budget`].
    pub max_connections: usize,
    /// How long a client has to send a whole request head, on a new
    /// connection and between requests on a kept-alive one (hyper starts
    /// the same timer for both), so this is also the idle timeout.
    pub header_timeout: Duration,
    /// How long a response may wait for the client to take a byte before
    /// the connection is closed; `None`: never. A response waiting for the
    /// download is not waiting for the client.
    pub send_timeout: Option<Duration>,
}

/// Hyper's buffers per connection: the read buffer (so a request head is
/// at most this long, as Apache's 8 KiB line limit) and the write queue,
/// which takes no more body while this much is unsent. The minimum hyper
/// allows; the default (~400 KiB) is what a non-reading client cost.
const MAX_BUF: usize = 8 * 1024;

/// Clients being told "503" at once; beyond this a refused connection is
/// just closed, so refusing costs little under a flood.
const REFUSING: usize = 32;

/// How long a refused connection is kept to read the client's request, so
/// that closing it does not reset the connection and destroy the 503
/// before the client reads it.
const LINGER: Duration = Duration::from_secs(2);

/// The answer at the cap: come back in a second (RFC 9110 §15.6.4, §10.2.3).
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
Retry-After: 1\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
Content-Length: 34\r\n\
Connection: close\r\n\
\r\n\
too many connections; retry later\n";

/// How long to wait before accepting again after accept failed (out of file
/// descriptors and the like): the failing connection stays in the backlog,
/// and retrying at once would spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Accepts connections until the process ends; each admitted connection is
/// served on its own task.
pub async fn serve<S: Site>(listener: TcpListener, gw: Arc<S>, limits: Limits) {
    let budget = Budget::new(limits.max_connections);
    let refusing = Arc::new(Semaphore::new(REFUSING));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(MAX_BUF)
        // Body pieces are queued as they are, not copied into one buffer.
        .writev(true);
    let mut failing = false;
    loop {
        let (tcp, peer) = match listener.accept().await {
            Ok(c) => {
                failing = false;
                c
            }
            Err(e) => {
                // Once per run of failures: under EMFILE this repeats ten
                // times a second.
                if !std::mem::replace(&mut failing, true) {
                    eprintln!("ppspp: warning: HTTP accept failed: {e}");
                }
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(permit) = budget.admit() else {
            tracing::debug!("refused a connection from {peer}: at the cap");
            if let Ok(p) = refusing.clone().try_acquire_owned() {
                tokio::spawn(async move {
                    refuse(tcp).await;
                    drop(p);
                });
            }
            continue;
        };
        let _ = tcp.set_nodelay(true);
        tokio::spawn(connection(
            tcp,
            permit,
            gw.clone(),
            builder.clone(),
            limits.send_timeout,
        ));
    }
}

/// Serves one connection until it ends or gives its place away.
async fn connection<S: Site>(
    tcp: TcpStream,
    permit: Permit,
    gw: Arc<S>,
    builder: http1::Builder,
    send_timeout: Option<Duration>,
) {
    let peer = tcp.peer_addr().ok();
    let conn = permit.conn().clone();
    let io = TokioIo::new(StallGuard::new(tcp, conn.clone(), send_timeout));
    let svc = service_fn(move |req| {
        let gw = gw.clone();
        // In progress from the head to the end of the body.
        let busy = conn.busy();
        async move { Ok::<_, Infallible>(gw.route(req).await.map(|b| b.tracked(busy))) }
    });
    tokio::select! {
        r = builder.serve_connection(io, svc) => {
            // A player closing the connection mid-body is how players seek
            // and quit: not worth more than a debug line.
            if let Err(e) = r {
                tracing::debug!("connection from {peer:?}: {e}");
            }
        }
        () = permit.conn().evicted() => {
            tracing::debug!("connection from {peer:?} gave its place to a new one");
        }
    }
}

/// Tells a client at the cap to come back later, and closes.
async fn refuse(mut tcp: TcpStream) {
    let _ = tokio::time::timeout(LINGER, async {
        tcp.write_all(REFUSAL).await?;
        tcp.shutdown().await?;
        let mut buf = [0u8; 512];
        while tcp.read(&mut buf).await? > 0 {}
        Ok::<_, std::io::Error>(())
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_well_formed() {
        let text = std::str::from_utf8(REFUSAL).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(len, body.len());
    }
}
