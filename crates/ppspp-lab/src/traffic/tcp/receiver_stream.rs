//! The TCP model's receiver as seen by an application: the records of its
//! byte stream in order, reads that open the window again (with the
//! receiver's silly-window avoidance, RFC 9293 §3.8.6.2.2), and the FIN.

use super::TcpReceiver;
use crate::packet::StreamRecord;
use crate::traffic::MSS;

impl TcpReceiver {
    /// The window to advertise: the buffer less what is delivered and not
    /// yet read.
    pub fn window(&self) -> u64 {
        let unread = self.delivered() - self.read;
        self.config.buffer.saturating_sub(unread)
    }

    /// Whether the sender's FIN is in, with every byte before it.
    pub fn is_finished(&self) -> bool {
        self.fin_at.is_some_and(|f| self.rcv_nxt > f)
    }

    /// The next application record the stream is in order for.
    pub fn take_record(&mut self) -> Option<StreamRecord> {
        self.stream.take()
    }

    /// Bytes delivered and not yet read by the application.
    pub fn unread(&self) -> u64 {
        self.delivered() - self.read
    }

    /// The application reads up to `n` delivered bytes. If that opens the
    /// window by at least min(buffer / 2, MSS) beyond what was last
    /// advertised, a window update goes out at once (RFC 9293
    /// §3.8.6.2.2); smaller openings wait for the next ACK.
    pub fn read(&mut self, n: u64) {
        self.read = (self.read + n).min(self.delivered());
        let step = (self.config.buffer / 2).min(u64::from(MSS));
        if self.window() >= self.advertised + step {
            self.ack_now();
        }
    }

    /// Bookkeeping after the in-order point moved: records become
    /// readable, and an application that reads on delivery has read.
    pub(super) fn on_delivered(&mut self) {
        let upto = self.delivered();
        self.stream.advance(upto);
        if self.config.read_on_delivery {
            self.read = upto;
        }
    }
}
