//! What the messages we sent cost, by type: how much of an uplink went to
//! video (DATA) and how much to control (HAVE, ACK, INTEGRITY, ...). A
//! researcher comparing algorithms needs this split: in a swarm whose
//! uplinks are full, every control byte is a video byte not sent.

use super::message::MessageType;

const TYPES: usize = MessageType::ALL.len();

/// Messages and their encoded bytes, per message type (RFC 7574 §8.2).
/// A message's bytes are its type byte and its fields, DATA's payload
/// included; the 4-byte channel id that starts each datagram is not a
/// message and is not counted here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageTally {
    messages: [u64; TYPES],
    bytes: [u64; TYPES],
}

impl MessageTally {
    /// Counts one message of type `t` that took `bytes` bytes.
    #[inline]
    pub fn add(&mut self, t: MessageType, bytes: usize) {
        let i = usize::from(t.code());
        self.messages[i] += 1;
        self.bytes[i] += bytes as u64;
    }

    /// Adds everything `other` counted.
    pub fn merge(&mut self, other: &MessageTally) {
        for i in 0..TYPES {
            self.messages[i] += other.messages[i];
            self.bytes[i] += other.bytes[i];
        }
    }

    /// Messages of type `t`.
    pub fn messages(&self, t: MessageType) -> u64 {
        self.messages[usize::from(t.code())]
    }

    /// Bytes of the messages of type `t`.
    pub fn bytes(&self, t: MessageType) -> u64 {
        self.bytes[usize::from(t.code())]
    }

    /// Bytes of all messages.
    pub fn total_bytes(&self) -> u64 {
        self.bytes.iter().sum()
    }

    /// `(type, messages, bytes)` for every type sent at least once, in code
    /// order.
    pub fn iter(&self) -> impl Iterator<Item = (MessageType, u64, u64)> + '_ {
        MessageType::ALL
            .iter()
            .map(|&t| (t, self.messages(t), self.bytes(t)))
            .filter(|&(_, m, _)| m > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkRange;
    use crate::wire::{ChannelId, DatagramWriter, Message, SwarmParams, Timestamp};

    #[test]
    fn the_writer_counts_what_it_wrote() {
        let params = SwarmParams::default();
        let mut buf = [0u8; 2048];
        let mut w = DatagramWriter::new(&mut buf, ChannelId(3), params).unwrap();
        let have = Message::Have(ChunkRange::new(0u64, 9u64).unwrap().into());
        w.push(&have).unwrap();
        let spec = ChunkRange::new(10u64, 10u64).unwrap().into();
        // A DATA whose payload could not be read leaves no trace.
        let failed = w.push_data_with(spec, Timestamp(1), 100, |_| Err(()));
        assert!(matches!(failed, Ok(Err(()))));
        let sent = w.push_data_with(spec, Timestamp(1), 100, |out| {
            out[..60].fill(7);
            Ok::<usize, ()>(60)
        });
        assert!(matches!(sent, Ok(Ok(60))));
        let t = *w.tally();
        let len = w.finish();
        let mut one = [0u8; 64];
        let have_len = have.encode(&params, &mut one).unwrap() as u64;
        assert_eq!(t.messages(MessageType::Have), 1);
        assert_eq!(t.bytes(MessageType::Have), have_len);
        assert_eq!(t.messages(MessageType::Data), 1);
        assert_eq!(t.bytes(MessageType::Data), 17 + 60);
        assert_eq!(t.total_bytes() + 4, len as u64);
    }

    #[test]
    fn counts_by_type_and_merges() {
        let mut a = MessageTally::default();
        a.add(MessageType::Data, 21 + 1024);
        a.add(MessageType::Have, 9);
        a.add(MessageType::Have, 9);
        let mut b = MessageTally::default();
        b.add(MessageType::Have, 9);
        b.merge(&a);
        assert_eq!(b.messages(MessageType::Have), 3);
        assert_eq!(b.bytes(MessageType::Have), 27);
        assert_eq!(b.messages(MessageType::Data), 1);
        assert_eq!(b.bytes(MessageType::Data), 1045);
        assert_eq!(b.total_bytes(), 1072);
        let seen: Vec<MessageType> = b.iter().map(|(t, _, _)| t).collect();
        assert_eq!(seen, [MessageType::Data, MessageType::Have]);
    }
}
