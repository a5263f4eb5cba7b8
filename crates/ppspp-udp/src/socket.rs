//! Batched UDP I/O: recvmmsg with GRO in, GSO batches out (quinn-udp).

use std::io::{self, IoSliceMut};
use std::net::SocketAddr;

use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use tokio::io::Interest;
use tokio::net::UdpSocket;

/// Datagrams received per system call.
const RECV_BATCH: usize = 16;
/// Room per receive buffer: one GRO-coalesced run of datagrams.
const RECV_BUF: usize = 64 * 1024;
/// Largest GSO batch in bytes (the kernel's limit is 64 KiB).
const GSO_MAX_BYTES: usize = 60 * 1024;
/// Room kept for one datagram at the end of the send batch buffer.
pub const MAX_DATAGRAM: usize = 64 * 1024;

/// A UDP socket with quinn-udp's batching state and buffers.
pub struct BatchSocket {
    io: UdpSocket,
    state: UdpSocketState,
    recv_bufs: Vec<Vec<u8>>,
    meta: Vec<RecvMeta>,
    /// Datagrams waiting to go out as one GSO batch.
    send_buf: Vec<u8>,
    batch_len: usize,
    batch_dst: Option<SocketAddr>,
    segment: usize,
    segments: usize,
    max_segments: usize,
}

impl BatchSocket {
    /// Binds `addr` and sets large kernel buffers (a fast peer sends bursts).
    pub async fn bind(addr: SocketAddr) -> io::Result<BatchSocket> {
        let io = UdpSocket::bind(addr).await?;
        let state = UdpSocketState::new((&io).into())?;
        // Best effort: the kernel may cap these.
        let _ = state.set_recv_buffer_size((&io).into(), 8 << 20);
        let _ = state.set_send_buffer_size((&io).into(), 8 << 20);
        let max_segments = state.max_gso_segments().max(1);
        Ok(BatchSocket {
            io,
            state,
            recv_bufs: (0..RECV_BATCH).map(|_| vec![0u8; RECV_BUF]).collect(),
            meta: vec![RecvMeta::default(); RECV_BATCH],
            send_buf: vec![0u8; GSO_MAX_BYTES + MAX_DATAGRAM],
            batch_len: 0,
            batch_dst: None,
            segment: 0,
            segments: 0,
            max_segments,
        })
    }

    /// The bound address.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.io.local_addr()
    }

    /// Waits until a datagram may be read.
    pub async fn readable(&self) -> io::Result<()> {
        self.io.readable().await
    }

    /// Reads what is queued without blocking and hands every datagram to
    /// `each` (GRO runs split at their stride). Returns how many datagrams.
    pub fn recv_ready(&mut self, mut each: impl FnMut(SocketAddr, &[u8])) -> io::Result<usize> {
        let mut total = 0;
        loop {
            let mut slices: Vec<IoSliceMut<'_>> = self
                .recv_bufs
                .iter_mut()
                .map(|b| IoSliceMut::new(b))
                .collect();
            let state = &self.state;
            let meta = &mut self.meta;
            let n = match self.io.try_io(Interest::READABLE, || {
                state.recv((&self.io).into(), &mut slices, meta)
            }) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(total),
                // ICMP errors (port unreachable…) surface here on Linux; they
                // concern one peer, not the socket.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {
                    tracing::debug!(error = %e, "receive: a peer's port is closed");
                    continue;
                }
                Err(e) => return Err(e),
            };
            for (m, buf) in self.meta.iter().zip(self.recv_bufs.iter()).take(n) {
                let stride = if m.stride == 0 { m.len } else { m.stride };
                for d in buf[..m.len].chunks(stride.max(1)) {
                    each(m.addr, d);
                    total += 1;
                }
            }
            if n < RECV_BATCH || total >= 4 * RECV_BATCH {
                return Ok(total);
            }
        }
    }

    /// Where the next datagram must be written (at least [`MAX_DATAGRAM`]).
    pub fn next_slot(&mut self) -> &mut [u8] {
        &mut self.send_buf[self.batch_len..]
    }

    /// The datagram of `len` bytes just written at [`BatchSocket::next_slot`]
    /// goes to `dst`: it joins the GSO batch when it can (same destination,
    /// not larger than the batch's segments, the previous one not shorter),
    /// otherwise the batch is sent first.
    pub async fn push(&mut self, dst: SocketAddr, len: usize) -> io::Result<()> {
        let fits = self.batch_dst == Some(dst)
            && len <= self.segment
            && self.batch_len == self.segments * self.segment
            && self.segments < self.max_segments
            && self.batch_len + len <= GSO_MAX_BYTES;
        if self.segments > 0 && !fits {
            // Move the new datagram aside, send the batch, start a new one.
            let start = self.batch_len;
            self.flush().await?;
            self.send_buf.copy_within(start..start + len, 0);
        }
        if self.segments == 0 {
            self.batch_dst = Some(dst);
            self.segment = len;
        }
        self.batch_len += len;
        self.segments += 1;
        if self.batch_len + MAX_DATAGRAM > self.send_buf.len() || self.segments >= self.max_segments
        {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sends the pending batch.
    pub async fn flush(&mut self) -> io::Result<()> {
        let Some(destination) = self.batch_dst.take() else {
            return Ok(());
        };
        let transmit = Transmit {
            destination,
            ecn: None,
            contents: &self.send_buf[..self.batch_len],
            segment_size: (self.segments > 1).then_some(self.segment),
            src_ip: None,
        };
        loop {
            let state = &self.state;
            let io = &self.io;
            match io.try_io(Interest::WRITABLE, || state.try_send(io.into(), &transmit)) {
                Ok(()) => break,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.io.writable().await.inspect_err(
                        |e| tracing::warn!(error = %e, "socket not writable: the node stops"),
                    )?;
                }
                // A send to one peer failing (unreachable, refused) must not
                // stop the node; the protocol's timers handle the peer.
                Err(e) => {
                    tracing::debug!(peer = %destination, error = %e, "send failed");
                    break;
                }
            }
        }
        self.batch_len = 0;
        self.segments = 0;
        self.segment = 0;
        Ok(())
    }
}
