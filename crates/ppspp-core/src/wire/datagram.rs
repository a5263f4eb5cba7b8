//! Datagrams: a destination channel id, then messages (RFC 7574 §8.2–§8.3).

use super::cursor::{Cursor, Writer};
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::message::{Message, MessageType, Timestamp};
use super::spec::ChunkSpec;
use super::tally::MessageTally;
use super::{ChannelId, SwarmParams};

/// Split a datagram into its destination channel and a lazy iterator over
/// its messages, decoded with `params`.
///
/// A datagram of only the channel id is a keep-alive (RFC 7574 §8.14) and
/// yields no messages. The iterator stops after the first malformed message,
/// which it yields as an error; messages before it were well-formed.
#[inline]
pub fn decode_datagram(
    bytes: &[u8],
    params: SwarmParams,
) -> Result<(ChannelId, Messages<'_>), DecodeError> {
    let mut cur = Cursor::new(bytes, 0);
    let channel = cur.u32().map_err(|_| DecodeError {
        offset: 0,
        kind: DecodeErrorKind::NoChannelId,
    })?;
    Ok((
        ChannelId(channel),
        Messages {
            cur,
            params,
            first: true,
            failed: false,
        },
    ))
}

/// Iterator over the messages of one datagram.
///
/// A HANDSHAKE's options take effect for the messages after it in the same
/// datagram (see [`SwarmParams::apply`]); [`Messages::params`] tells what is
/// in force.
#[derive(Clone, Debug)]
pub struct Messages<'a> {
    cur: Cursor<'a>,
    params: SwarmParams,
    first: bool,
    failed: bool,
}

impl Messages<'_> {
    /// The parameters in force for the next message.
    pub fn params(&self) -> &SwarmParams {
        &self.params
    }
}

impl<'a> Iterator for Messages<'a> {
    type Item = Result<Message<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.cur.is_empty() {
            return None;
        }
        let at = self.cur.pos();
        let first = std::mem::replace(&mut self.first, false);
        let result = Message::read(&mut self.cur, &self.params).and_then(|m| match m {
            Message::Handshake { .. } if !first => Err(DecodeError {
                offset: at,
                kind: DecodeErrorKind::HandshakeNotFirst,
            }),
            Message::Handshake { options, .. } => {
                self.params.apply(&options);
                Ok(m)
            }
            _ => Ok(m),
        });
        self.failed = result.is_err();
        Some(result)
    }
}

impl std::iter::FusedIterator for Messages<'_> {}

/// A point in a [`DatagramWriter`]'s datagram to roll back to.
#[derive(Clone, Copy, Debug)]
pub struct WriterMark {
    pos: usize,
    messages: usize,
    tally: MessageTally,
    params: SwarmParams,
}

impl WriterMark {
    /// Messages the datagram held at the mark.
    pub fn message_count(&self) -> usize {
        self.messages
    }
}

/// Builds one datagram in a caller-provided buffer: the destination channel
/// id, then messages appended one by one.
#[derive(Debug)]
pub struct DatagramWriter<'b> {
    w: Writer<'b>,
    params: SwarmParams,
    messages: usize,
    tally: MessageTally,
}

impl<'b> DatagramWriter<'b> {
    /// Start a datagram to `channel` (0 for a channel's first datagram).
    pub fn new(
        buf: &'b mut [u8],
        channel: ChannelId,
        params: SwarmParams,
    ) -> Result<Self, EncodeError> {
        let mut w = Writer::new(buf);
        w.u32(channel.0)?;
        Ok(DatagramWriter {
            w,
            params,
            messages: 0,
            tally: MessageTally::default(),
        })
    }

    /// Append a message. A HANDSHAKE must come first, and its options apply
    /// to the messages after it, as on the decoding side. On error nothing
    /// of the message stays in the datagram.
    #[inline]
    pub fn push(&mut self, msg: &Message<'_>) -> Result<(), EncodeError> {
        if let Message::Handshake { options, .. } = msg {
            if self.messages > 0 {
                return Err(EncodeError::HandshakeNotFirst);
            }
            let mut params = self.params;
            params.apply(options);
            self.write(msg)?;
            self.params = params;
        } else {
            self.write(msg)?;
        }
        self.messages += 1;
        Ok(())
    }

    #[inline]
    fn write(&mut self, msg: &Message<'_>) -> Result<(), EncodeError> {
        let mark = self.w.pos();
        msg.write(&self.params, &mut self.w)
            .inspect_err(|_| self.w.truncate(mark))?;
        self.tally.add(msg.message_type(), self.w.pos() - mark);
        Ok(())
    }

    /// Appends a DATA message whose payload `fill` writes straight into the
    /// datagram (from storage, without a copy in between). `fill` gets at
    /// most `max_len` bytes of room and returns how many it wrote. If it
    /// fails, nothing of the message stays and its error is returned inside.
    pub fn push_data_with<E>(
        &mut self,
        spec: ChunkSpec,
        timestamp: Timestamp,
        max_len: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<usize, E>,
    ) -> Result<Result<usize, E>, EncodeError> {
        let mark = self.w.pos();
        let header = Message::Data {
            spec,
            timestamp,
            payload: &[],
        };
        // Counted once whole, below: a DATA that fails leaves no count.
        header
            .write(&self.params, &mut self.w)
            .inspect_err(|_| self.w.truncate(mark))?;
        let pos = self.w.pos();
        let room_len = self.w.remaining_mut().len();
        if room_len < max_len {
            self.w.truncate(mark);
            return Err(EncodeError::BufferTooSmall {
                needed: pos + max_len,
                available: pos + room_len,
            });
        }
        match fill(&mut self.w.remaining_mut()[..max_len]) {
            Ok(n) => {
                self.w.advance(n.min(max_len));
                self.tally.add(MessageType::Data, self.w.pos() - mark);
                self.messages += 1;
                Ok(Ok(n.min(max_len)))
            }
            Err(e) => {
                self.w.truncate(mark);
                Ok(Err(e))
            }
        }
    }

    /// Uses at most `limit` bytes of the buffer from now on (never less
    /// than already written, never more than the buffer): lets a caller
    /// keep control messages small and still add one large DATA.
    pub fn set_limit(&mut self, limit: usize) {
        self.w.set_cap(limit);
    }

    /// Where the datagram stands now, to go back to with
    /// [`DatagramWriter::rollback`].
    pub fn mark(&self) -> WriterMark {
        WriterMark {
            pos: self.w.pos(),
            messages: self.messages,
            tally: self.tally,
            params: self.params,
        }
    }

    /// Drops every message added since `mark` was taken.
    pub fn rollback(&mut self, mark: WriterMark) {
        self.w.truncate(mark.pos);
        self.messages = mark.messages;
        self.tally = mark.tally;
        self.params = mark.params;
    }

    /// Messages added so far.
    pub fn message_count(&self) -> usize {
        self.messages
    }

    /// Bytes that can still be added.
    pub fn remaining(&mut self) -> usize {
        self.w.remaining_mut().len()
    }

    /// Bytes written so far, channel id included.
    pub fn len(&self) -> usize {
        self.w.pos()
    }

    /// Whether no message has been added (a keep-alive if sent as is).
    pub fn is_empty(&self) -> bool {
        self.messages == 0
    }

    /// The parameters in force for the next message.
    pub fn params(&self) -> &SwarmParams {
        &self.params
    }

    /// The messages written so far, by type.
    pub fn tally(&self) -> &MessageTally {
        &self.tally
    }

    /// Finish; returns the datagram's length.
    pub fn finish(self) -> usize {
        self.w.pos()
    }
}

#[cfg(test)]
mod mark_tests {
    use super::*;
    use crate::wire::MessageType;

    #[test]
    fn a_rollback_drops_what_came_after_the_mark_and_its_count() {
        let mut buf = [0u8; 64];
        let mut w = DatagramWriter::new(&mut buf, ChannelId(3), SwarmParams::default()).unwrap();
        w.push(&Message::PexReq).unwrap();
        let mark = w.mark();
        assert_eq!(mark.message_count(), 1);
        w.push(&Message::PexReq).unwrap();
        w.push(&Message::PexReq).unwrap();
        assert_eq!((w.message_count(), w.len()), (3, 7));
        w.rollback(mark);
        assert_eq!((w.message_count(), w.len()), (1, 5));
        assert_eq!(w.tally().messages(MessageType::PexReq), 1);
        w.push(&Message::PexReq).unwrap();
        assert_eq!(w.finish(), 6);
    }
}
