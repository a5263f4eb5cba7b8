//! The uTP sender as an application's byte stream: writes, the ST_FIN
//! after a close (BEP 29: "the last packet", taking a sequence number), and
//! what waits to be sent. BitTorrent's messages travel this way.

use super::UtpSender;

impl UtpSender {
    /// Appends `len` bytes standing for the application record `data` (a
    /// record ending at the new end of the stream; none if `data` is
    /// empty). Returns that end. Only for a [`UtpSender::stream`], before
    /// [`UtpSender::close`].
    pub fn write(&mut self, len: u64, data: Vec<u8>) -> u64 {
        assert!(!self.bulk, "a bulk sender has nothing to write");
        self.stream.write(len, data)
    }

    /// Ends the stream: an ST_FIN follows the last byte written.
    pub fn close(&mut self) {
        assert!(!self.bulk, "a bulk sender is not closed");
        self.stream.close();
    }

    /// Bytes written and never sent: what waits in the send buffer.
    pub fn unsent(&self) -> u64 {
        self.stream.written().saturating_sub(self.next_offset)
    }

    /// Bytes written and not yet acknowledged (below the oldest
    /// outstanding packet).
    pub fn unacked(&self) -> u64 {
        let acked = self
            .outbuf
            .values()
            .next()
            .map_or(self.next_offset, |q| q.offset);
        self.stream.written().saturating_sub(acked)
    }

    /// The receiver's last advertised window.
    pub fn send_window(&self) -> u64 {
        self.peer_window
    }

    /// Whether anything waits to go for the first time: bytes, or the
    /// ST_FIN of a closed stream.
    pub(super) fn has_waiting(&self) -> bool {
        self.unsent() > 0 || (self.stream.is_closed() && !self.fin_sent)
    }
}
