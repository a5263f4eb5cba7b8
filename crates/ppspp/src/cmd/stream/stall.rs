//! A connection's socket that notices a client which stops reading: every
//! write that cannot go on marks the connection stalled (so the budget may
//! give its place away, see `conns`), and a write that has waited longer
//! than the send timeout fails, which ends the connection.
//!
//! Only writes count: a response that waits for the download writes
//! nothing and is not stalled, and reads wait whenever the client has
//! nothing to say (hyper's header timeout covers a client that says too
//! little).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::conns::Conn;

/// A stream whose writes report progress to `conn` and time out.
#[derive(Debug)]
pub struct StallGuard<T> {
    io: T,
    conn: Arc<Conn>,
    send_timeout: Option<Duration>,
    /// Armed while a write waits for room; allocated once per connection.
    deadline: Option<Pin<Box<Sleep>>>,
    armed: bool,
}

impl<T> StallGuard<T> {
    /// `io` for connection `conn`; `send_timeout` `None` never gives up.
    pub fn new(io: T, conn: Arc<Conn>, send_timeout: Option<Duration>) -> Self {
        StallGuard {
            io,
            conn,
            send_timeout,
            deadline: None,
            armed: false,
        }
    }

    /// Accounts for the outcome of one write-side poll.
    fn on_write<R>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<R>>) -> Poll<io::Result<R>> {
        match r {
            Poll::Pending => {
                self.conn.write_blocked();
                let Some(timeout) = self.send_timeout else {
                    return Poll::Pending;
                };
                let at = Instant::now() + timeout;
                if !self.armed {
                    self.armed = true;
                    match &mut self.deadline {
                        Some(d) => d.as_mut().reset(at),
                        None => self.deadline = Some(Box::pin(tokio::time::sleep_until(at))),
                    }
                }
                // Polled with the same context, so the deadline wakes the
                // connection even if the client never opens its window.
                match self.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                    Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client read nothing for the send timeout",
                    ))),
                    _ => Poll::Pending,
                }
            }
            ready => {
                self.armed = false;
                self.conn.write_progressed();
                ready
            }
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for StallGuard<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for StallGuard<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write(cx, buf);
        this.on_write(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.on_write(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_flush(cx);
        this.on_write(cx, r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.io).poll_shutdown(cx);
        this.on_write(cx, r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cmd::stream::conns::Budget;
    use tokio::io::AsyncWriteExt;

    #[tokio::test(start_paused = true)]
    async fn a_write_that_waits_past_the_timeout_fails() {
        // A duplex pipe of 16 bytes that nobody reads: writes block.
        let (a, _b) = tokio::io::duplex(16);
        let budget = Budget::new(1);
        let permit = budget.admit().unwrap();
        let mut g = StallGuard::new(a, permit.conn().clone(), Some(Duration::from_secs(5)));
        let err = g.write_all(&[0u8; 64]).await.unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_reader_is_not_timed_out() {
        let (a, mut b) = tokio::io::duplex(16);
        let budget = Budget::new(1);
        let permit = budget.admit().unwrap();
        let mut g = StallGuard::new(a, permit.conn().clone(), Some(Duration::from_secs(5)));
        // The reader takes 16 bytes every 4 s: each wait is shorter than
        // the timeout, the whole write much longer.
        let reader = tokio::spawn(async move {
            use tokio::io::AsyncReadExt;
            let mut got = 0;
            let mut buf = [0u8; 16];
            while got < 256 {
                tokio::time::sleep(Duration::from_secs(4)).await;
                got += b.read(&mut buf).await.unwrap();
            }
        });
        g.write_all(&[0u8; 256])
            .await
            .expect("progress keeps it alive");
        reader.await.unwrap();
    }
}
