//! BitTorrent's peer wire messages (BEP 3), framed as on the wire: the
//! 68-byte handshake, then messages of a 4-byte big-endian length, a
//! 1-byte id and a payload. A piece message's block is counted on the
//! stream but not carried: its record is the 13-byte header, and the
//! record stands for `13 + block length` bytes (see `traffic::stream`).

use super::PieceIndex;

/// The handshake's length: 1 + 19 ("BitTorrent protocol") + 8 reserved +
/// 20 info hash + 20 peer id.
pub const HANDSHAKE_LEN: u64 = 68;

/// BEP 3's protocol string.
const PROTOCOL: &[u8; 19] = b"BitTorrent protocol";

/// One peer wire message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Message {
    /// The handshake; the peer id is the sender's host number.
    Handshake {
        /// Who sends it.
        peer: u32,
    },
    /// id 0.
    Choke,
    /// id 1.
    Unchoke,
    /// id 2.
    Interested,
    /// id 3.
    NotInterested,
    /// id 4: a piece completed.
    Have(PieceIndex),
    /// id 5: the pieces held, one bit each, high bit first.
    Bitfield(Vec<u8>),
    /// id 6: a block asked for.
    Request(BlockRef),
    /// id 7: a block (its payload counted, not carried).
    Piece(BlockRef),
    /// id 8: a request withdrawn (end game).
    Cancel(BlockRef),
}

/// A block: its piece, offset in the piece and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BlockRef {
    /// Its piece.
    pub piece: PieceIndex,
    /// Byte offset in the piece.
    pub begin: u32,
    /// Bytes.
    pub length: u32,
}

/// Why a record is not a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Shorter than its header or its length says.
    #[error("truncated message")]
    Truncated,
    /// An id BEP 3 does not define.
    #[error("unknown message id {0}")]
    UnknownId(u8),
    /// A handshake with another protocol string.
    #[error("not a BitTorrent handshake")]
    BadHandshake,
}

impl Message {
    /// The message framed: the bytes its record carries, and the bytes it
    /// takes on the stream (more for a piece: its block).
    pub fn encode(&self) -> (Vec<u8>, u64) {
        if let Message::Handshake { peer } = self {
            let mut b = Vec::with_capacity(HANDSHAKE_LEN as usize);
            b.push(PROTOCOL.len() as u8);
            b.extend_from_slice(PROTOCOL);
            b.extend_from_slice(&[0; 8]);
            b.extend_from_slice(&[0; 20]);
            let mut id = [0u8; 20];
            id[..4].copy_from_slice(&peer.to_be_bytes());
            b.extend_from_slice(&id);
            return (b, HANDSHAKE_LEN);
        }
        let (id, payload): (u8, Vec<u8>) = match self {
            Message::Handshake { .. } => unreachable!(),
            Message::Choke => (0, Vec::new()),
            Message::Unchoke => (1, Vec::new()),
            Message::Interested => (2, Vec::new()),
            Message::NotInterested => (3, Vec::new()),
            Message::Have(p) => (4, p.0.to_be_bytes().to_vec()),
            Message::Bitfield(bits) => (5, bits.clone()),
            Message::Request(b) => (6, block_bytes(b, true)),
            Message::Piece(b) => (7, block_bytes(b, false)),
            Message::Cancel(b) => (8, block_bytes(b, true)),
        };
        let block = match self {
            Message::Piece(b) => b.length,
            _ => 0,
        };
        let len = 1 + payload.len() as u32 + block;
        let mut out = Vec::with_capacity(5 + payload.len());
        out.extend_from_slice(&len.to_be_bytes());
        out.push(id);
        out.extend_from_slice(&payload);
        let on_stream = 4 + u64::from(len);
        (out, on_stream)
    }

    /// The message a record carries. Never panics, whatever the bytes.
    pub fn decode(b: &[u8]) -> Result<Message, WireError> {
        if b.first() == Some(&(PROTOCOL.len() as u8)) && b.len() == HANDSHAKE_LEN as usize {
            if &b[1..20] != PROTOCOL {
                return Err(WireError::BadHandshake);
            }
            let peer = u32::from_be_bytes([b[48], b[49], b[50], b[51]]);
            return Ok(Message::Handshake { peer });
        }
        let len = b.get(..4).ok_or(WireError::Truncated)?;
        let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let id = *b.get(4).ok_or(WireError::Truncated)?;
        let payload = &b[5..];
        let u32_at = |k: usize| -> Result<u32, WireError> {
            let s = payload.get(k..k + 4).ok_or(WireError::Truncated)?;
            Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
        };
        let block = |with_len: bool| -> Result<BlockRef, WireError> {
            let piece = PieceIndex(u32_at(0)?);
            let begin = u32_at(4)?;
            let length = if with_len {
                u32_at(8)?
            } else {
                // A piece's block length is its message length less the
                // 9 bytes of id, index and begin.
                (len as u32).checked_sub(9).ok_or(WireError::Truncated)?
            };
            Ok(BlockRef {
                piece,
                begin,
                length,
            })
        };
        if len == 0 {
            return Err(WireError::Truncated);
        }
        Ok(match id {
            0 => Message::Choke,
            1 => Message::Unchoke,
            2 => Message::Interested,
            3 => Message::NotInterested,
            4 => Message::Have(PieceIndex(u32_at(0)?)),
            5 => {
                let n = len - 1;
                Message::Bitfield(payload.get(..n).ok_or(WireError::Truncated)?.to_vec())
            }
            6 => Message::Request(block(true)?),
            7 => Message::Piece(block(false)?),
            8 => Message::Cancel(block(true)?),
            other => return Err(WireError::UnknownId(other)),
        })
    }
}

fn block_bytes(b: &BlockRef, with_len: bool) -> Vec<u8> {
    let mut v = Vec::with_capacity(12);
    v.extend_from_slice(&b.piece.0.to_be_bytes());
    v.extend_from_slice(&b.begin.to_be_bytes());
    if with_len {
        v.extend_from_slice(&b.length.to_be_bytes());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn block() -> impl Strategy<Value = BlockRef> {
        (any::<u32>(), any::<u32>(), 0u32..1 << 20).prop_map(|(p, begin, length)| BlockRef {
            piece: PieceIndex(p),
            begin,
            length,
        })
    }

    fn message() -> impl Strategy<Value = Message> {
        prop_oneof![
            any::<u32>().prop_map(|peer| Message::Handshake { peer }),
            Just(Message::Choke),
            Just(Message::Unchoke),
            Just(Message::Interested),
            Just(Message::NotInterested),
            any::<u32>().prop_map(|p| Message::Have(PieceIndex(p))),
            proptest::collection::vec(any::<u8>(), 0..64).prop_map(Message::Bitfield),
            block().prop_map(Message::Request),
            block().prop_map(Message::Piece),
            block().prop_map(Message::Cancel),
        ]
    }

    proptest! {
        #[test]
        fn every_message_round_trips(m in message()) {
            let (bytes, _) = m.encode();
            prop_assert_eq!(Message::decode(&bytes), Ok(m));
        }

        #[test]
        fn no_bytes_panic_the_decoder(b in proptest::collection::vec(any::<u8>(), 0..80)) {
            let _ = Message::decode(&b);
        }
    }

    #[test]
    fn sizes_on_the_stream_are_bep_3s() {
        let b = BlockRef {
            piece: PieceIndex(3),
            begin: 16_384,
            length: 16_384,
        };
        let len = |m: Message| m.encode().1;
        assert_eq!(len(Message::Handshake { peer: 1 }), 68);
        assert_eq!(len(Message::Interested), 5);
        assert_eq!(len(Message::Have(PieceIndex(9))), 9);
        assert_eq!(len(Message::Request(b)), 17);
        assert_eq!(len(Message::Cancel(b)), 17);
        // 4 length + 1 id + 4 index + 4 begin + the block.
        assert_eq!(len(Message::Piece(b)), 13 + 16_384);
        assert_eq!(
            Message::Piece(b).encode().0.len(),
            13,
            "the block is not carried"
        );
        // 400 pieces: 50 bytes of bits.
        assert_eq!(len(Message::Bitfield(vec![0; 50])), 55);
    }

    #[test]
    fn the_handshake_is_bep_3s() {
        let (b, _) = Message::Handshake { peer: 7 }.encode();
        assert_eq!(b[0], 19);
        assert_eq!(&b[1..20], b"BitTorrent protocol");
        let mut bad = b.clone();
        bad[5] = b'x';
        assert_eq!(Message::decode(&bad), Err(WireError::BadHandshake));
        assert_eq!(
            Message::decode(&[0, 0, 0, 1, 42]),
            Err(WireError::UnknownId(42))
        );
        assert_eq!(
            Message::decode(&[0, 0, 0, 5, 6, 1]),
            Err(WireError::Truncated)
        );
    }
}
