//! An application's byte stream over a lab transport (the TCP and uTP
//! models): the sending application writes records, each standing for some
//! bytes of the stream; the transport carries, with every byte range it
//! sends, the records whose last byte lies in it ([`StreamRecord`]); the
//! receiving application gets each record once the stream is delivered in
//! order up to its end. Payload is counted, not carried, as everywhere in
//! the lab: a BitTorrent piece message is its 13 header bytes as a record
//! that stands for 16 KiB more on the stream.

use std::collections::{BTreeMap, VecDeque};

use crate::agent::Agent;
use crate::packet::StreamRecord;

/// The sending end of a lab transport as an application uses it (the TCP
/// and uTP models' senders in stream mode).
pub trait StreamSender: Agent + std::fmt::Debug + Send {
    /// Appends `len` bytes standing for the record `data` (none if
    /// empty); returns the stream's new end.
    fn write(&mut self, len: u64, data: Vec<u8>) -> u64;
    /// Ends the stream (FIN, ST_FIN) after what is written.
    fn close(&mut self);
    /// Bytes written and not yet sent.
    fn unsent(&self) -> u64;
    /// Whether the connection is open (its handshake done).
    fn is_open(&self) -> bool;
    /// Whether the closed stream is wholly acknowledged.
    fn is_complete(&self) -> bool;
}

/// The receiving end of a lab transport as an application uses it.
pub trait StreamReceiver: Agent + std::fmt::Debug + Send {
    /// The next record the stream is in order for.
    fn take_record(&mut self) -> Option<StreamRecord>;
    /// Whether the peer's stream has ended, every byte before it in.
    fn is_finished(&self) -> bool;
}

/// Implements [`StreamSender`] and [`StreamReceiver`] for a transport's
/// sender and receiver types by their inherent methods of the same names.
#[macro_export]
macro_rules! stream_ends {
    ($sender:ty, $receiver:ty) => {
        impl $crate::traffic::stream::StreamSender for $sender {
            fn write(&mut self, len: u64, data: Vec<u8>) -> u64 {
                <$sender>::write(self, len, data)
            }
            fn close(&mut self) {
                <$sender>::close(self)
            }
            fn unsent(&self) -> u64 {
                <$sender>::unsent(self)
            }
            fn is_open(&self) -> bool {
                <$sender>::is_open(self)
            }
            fn is_complete(&self) -> bool {
                <$sender>::is_complete(self)
            }
        }

        impl $crate::traffic::stream::StreamReceiver for $receiver {
            fn take_record(&mut self) -> Option<$crate::packet::StreamRecord> {
                <$receiver>::take_record(self)
            }
            fn is_finished(&self) -> bool {
                <$receiver>::is_finished(self)
            }
        }
    };
}

/// The sending side: what the application wrote and has not seen
/// acknowledged, and whether it closed the stream.
#[derive(Clone, Debug, Default)]
pub struct SendStream {
    /// One past the last byte written.
    written: u64,
    /// Records not yet acknowledged, by end offset.
    records: BTreeMap<u64, Vec<u8>>,
    closed: bool,
}

impl SendStream {
    /// A bulk stream: `total` bytes written at once and closed, or an
    /// endless one (`None`) that is never closed. It has no records.
    pub fn bulk(total: Option<u64>) -> SendStream {
        SendStream {
            written: total.unwrap_or(u64::MAX),
            records: BTreeMap::new(),
            closed: false,
        }
    }

    /// Appends `len` bytes standing for `data` (a record ending at the new
    /// end; none if `data` is empty). Returns the new end. Nothing may be
    /// written after [`SendStream::close`].
    pub fn write(&mut self, len: u64, data: Vec<u8>) -> u64 {
        assert!(!self.closed, "write after close");
        assert!(len > 0, "a record takes at least one byte");
        self.written = self.written.saturating_add(len);
        if !data.is_empty() {
            self.records.insert(self.written, data);
        }
        self.written
    }

    /// No more writes; the transport sends its end-of-stream mark (FIN,
    /// ST_FIN) after the last byte.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Whether the application closed the stream.
    pub fn is_closed(&self) -> bool {
        self.closed
    }

    /// One past the last byte written.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// The records whose last byte lies in `[start, end)`: what a segment
    /// carrying that range carries.
    pub fn records_in(&self, start: u64, end: u64) -> Vec<StreamRecord> {
        if end <= start {
            return Vec::new();
        }
        self.records
            .range(start + 1..=end)
            .map(|(e, d)| StreamRecord {
                end: *e,
                data: d.clone(),
            })
            .collect()
    }

    /// The bytes below `upto` are acknowledged: their records are no longer
    /// needed for retransmission.
    pub fn acked(&mut self, upto: u64) {
        self.records = self.records.split_off(&(upto + 1));
    }
}

/// The receiving side: records that arrived, held until the stream is in
/// order up to their end, then handed to the application in order.
#[derive(Clone, Debug, Default)]
pub struct RecvStream {
    /// Records above the in-order point, by end offset (a retransmission
    /// carries the same ones again: kept once).
    pending: BTreeMap<u64, Vec<u8>>,
    /// Records the stream is in order for, not yet taken.
    ready: VecDeque<StreamRecord>,
    /// Everything up to here is handed over (to `ready`).
    delivered: u64,
}

impl RecvStream {
    /// Records a segment carried; those at or below the in-order point
    /// were delivered before and are ignored.
    pub fn offer(&mut self, records: Vec<StreamRecord>) {
        for r in records {
            if r.end > self.delivered {
                self.pending.entry(r.end).or_insert(r.data);
            }
        }
    }

    /// The stream is in order up to `upto`: the records ending there or
    /// below become ready, in order.
    pub fn advance(&mut self, upto: u64) {
        if upto <= self.delivered {
            return;
        }
        self.delivered = upto;
        let rest = self.pending.split_off(&(upto + 1));
        let done = std::mem::replace(&mut self.pending, rest);
        self.ready.extend(
            done.into_iter()
                .map(|(end, data)| StreamRecord { end, data }),
        );
    }

    /// The next record the application may read.
    pub fn take(&mut self) -> Option<StreamRecord> {
        self.ready.pop_front()
    }

    /// Records waiting to be taken.
    pub fn ready(&self) -> usize {
        self.ready.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ends(v: &[StreamRecord]) -> Vec<u64> {
        v.iter().map(|r| r.end).collect()
    }

    #[test]
    fn a_segment_carries_the_records_whose_last_byte_it_carries() {
        let mut s = SendStream::default();
        assert_eq!(s.write(5, vec![1]), 5);
        assert_eq!(s.write(16_397, vec![7; 13]), 16_402);
        assert_eq!(s.write(3, Vec::new()), 16_405);
        assert_eq!(s.write(1, vec![9]), 16_406);
        // Byte 4 is the first record's last byte; byte 5 starts the second.
        assert_eq!(ends(&s.records_in(0, 5)), vec![5]);
        assert!(s.records_in(5, 1465).is_empty());
        assert_eq!(ends(&s.records_in(16_000, 16_406)), vec![16_402, 16_406]);
        assert!(s.records_in(3, 3).is_empty());
        s.acked(5);
        assert!(s.records_in(0, 5).is_empty(), "acked records are forgotten");
        assert_eq!(ends(&s.records_in(0, 16_406)), vec![16_402, 16_406]);
    }

    #[test]
    fn bulk_streams_have_their_size_and_no_records() {
        assert_eq!(SendStream::bulk(Some(10)).written(), 10);
        assert_eq!(SendStream::bulk(None).written(), u64::MAX);
        assert!(SendStream::bulk(Some(10)).records_in(0, 10).is_empty());
    }

    #[test]
    fn records_wait_for_the_stream_to_be_in_order_and_come_once() {
        let mut s = SendStream::default();
        for _ in 0..4 {
            s.write(1000, vec![0xab]);
        }
        let mut r = RecvStream::default();
        // The second half arrives first, then the first half; then the
        // first half again (a retransmission).
        r.offer(s.records_in(2000, 4000));
        r.advance(0);
        assert_eq!(r.take(), None);
        r.offer(s.records_in(0, 2000));
        r.advance(4000);
        r.offer(s.records_in(0, 2000));
        r.advance(4000);
        let got: Vec<u64> = std::iter::from_fn(|| r.take()).map(|x| x.end).collect();
        assert_eq!(got, vec![1000, 2000, 3000, 4000]);
        assert_eq!(r.ready(), 0);
    }

    #[test]
    #[should_panic(expected = "write after close")]
    fn nothing_is_written_after_close() {
        let mut s = SendStream::default();
        s.write(1, Vec::new());
        s.close();
        s.write(1, Vec::new());
    }
}
