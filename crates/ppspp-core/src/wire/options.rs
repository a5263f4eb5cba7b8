//! Protocol options of the HANDSHAKE message (RFC 7574 §7).
//!
//! Options are a code byte and a value, sorted ascending by code, each at
//! most once, the version first, ended by option 255. Because each code
//! appears at most once and in order, a struct with one field per option
//! represents any valid list exactly, and re-encodes to the same bytes.

use crate::hash::HashFunction;

use super::cursor::{Cursor, Writer};
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::message::MessageType;
use super::params::{
    ChunkAddressing, ChunkSizeOption, ContentIntegrity, DiscardWindow, LiveSignatureAlgorithm,
};

/// Option codes (RFC 7574 §7, Table 2; IANA "PPSP Peer Protocol Option").
pub mod code {
    /// Version.
    pub const VERSION: u8 = 0;
    /// Minimum version.
    pub const MIN_VERSION: u8 = 1;
    /// Swarm identifier.
    pub const SWARM_ID: u8 = 2;
    /// Content integrity protection method.
    pub const INTEGRITY: u8 = 3;
    /// Merkle hash tree function.
    pub const HASH_FUNCTION: u8 = 4;
    /// Live signature algorithm.
    pub const SIGNATURE_ALGORITHM: u8 = 5;
    /// Chunk addressing method.
    pub const ADDRESSING: u8 = 6;
    /// Live discard window.
    pub const DISCARD_WINDOW: u8 = 7;
    /// Supported messages.
    pub const SUPPORTED_MESSAGES: u8 = 8;
    /// Chunk size.
    pub const CHUNK_SIZE: u8 = 9;
    /// End of the option list.
    pub const END: u8 = 255;
}

/// The protocol version this implementation speaks (RFC 7574 §7.2).
pub const PPSPP_VERSION: u8 = 1;

/// The supported-messages bitmap, option 8 (RFC 7574 §7.10): bit X, counting
/// from the most significant bit of the first byte, is message type X. Kept
/// as sent (up to 32 bytes) so that it re-encodes byte for byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SupportedMessages {
    bytes: [u8; 32],
    len: u8,
}

impl SupportedMessages {
    /// The compressed bitmap for `types`: trailing zero bytes dropped.
    pub fn from_types(types: impl IntoIterator<Item = MessageType>) -> Self {
        let mut bytes = [0u8; 32];
        for t in types {
            let bit = t.code();
            bytes[usize::from(bit / 8)] |= 0x80 >> (bit % 8);
        }
        let len = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1) as u8;
        SupportedMessages { bytes, len }
    }

    /// A bitmap exactly as received; `None` past 32 bytes.
    pub fn from_bytes(raw: &[u8]) -> Option<Self> {
        if raw.len() > 32 {
            return None;
        }
        let mut bytes = [0u8; 32];
        bytes[..raw.len()].copy_from_slice(raw);
        Some(SupportedMessages {
            bytes,
            len: raw.len() as u8,
        })
    }

    /// The bitmap bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    /// Whether message type `t` is marked supported.
    pub fn supports(&self, t: MessageType) -> bool {
        let bit = t.code();
        self.bytes[usize::from(bit / 8)] & (0x80 >> (bit % 8)) != 0
    }
}

/// The protocol options of one HANDSHAKE, each present or not.
///
/// The swarm id borrows from the datagram it was decoded from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct HandshakeOptions<'a> {
    /// Option 0: the highest version the sender speaks; first when present.
    pub version: Option<u8>,
    /// Option 1: the lowest version the sender speaks (initiator).
    pub min_version: Option<u8>,
    /// Option 2: the swarm id (Merkle root, or live public key).
    pub swarm_id: Option<&'a [u8]>,
    /// Option 3: content integrity protection method.
    pub integrity: Option<ContentIntegrity>,
    /// Option 4: Merkle hash tree function.
    pub hash_function: Option<HashFunction>,
    /// Option 5: live signature algorithm.
    pub signature_algorithm: Option<LiveSignatureAlgorithm>,
    /// Option 6: chunk addressing method.
    pub addressing: Option<ChunkAddressing>,
    /// Option 7: live discard window (needs option 6).
    pub discard_window: Option<DiscardWindow>,
    /// Option 8: supported messages.
    pub supported_messages: Option<SupportedMessages>,
    /// Option 9: chunk size.
    pub chunk_size: Option<ChunkSizeOption>,
}

impl<'a> HandshakeOptions<'a> {
    /// Whether no option is present (the list is just the end option, as in a
    /// channel close, RFC 7574 §8.4).
    pub fn is_empty(&self) -> bool {
        *self == HandshakeOptions::default()
    }

    /// Decode and validate an option list up to and including option 255.
    pub(crate) fn decode(cur: &mut Cursor<'a>) -> Result<Self, DecodeError> {
        let mut out = HandshakeOptions::default();
        let mut previous: Option<u8> = None;
        loop {
            let at = cur.pos();
            let fail = |kind| DecodeError { offset: at, kind };
            let code = cur.u8()?;
            if code == code::END {
                return Ok(out);
            }
            match previous {
                None if code != code::VERSION => {
                    return Err(fail(DecodeErrorKind::VersionNotFirst))
                }
                Some(p) if code <= p => {
                    return Err(fail(DecodeErrorKind::OptionsNotSorted {
                        previous: p,
                        code,
                    }))
                }
                _ => {}
            }
            previous = Some(code);
            match code {
                code::VERSION => {
                    let v = cur.u8()?;
                    if v == 0 {
                        return Err(fail(DecodeErrorKind::ReservedVersion));
                    }
                    out.version = Some(v);
                }
                code::MIN_VERSION => out.min_version = Some(cur.u8()?),
                code::SWARM_ID => {
                    let len = cur.u16()?;
                    if len == 0 {
                        return Err(fail(DecodeErrorKind::EmptySwarmId));
                    }
                    out.swarm_id = Some(cur.bytes(usize::from(len))?);
                }
                code::INTEGRITY => {
                    let v = cur.u8()?;
                    out.integrity = Some(
                        ContentIntegrity::from_code(v)
                            .ok_or(fail(DecodeErrorKind::UnknownIntegrityMethod(v)))?,
                    );
                }
                code::HASH_FUNCTION => {
                    let v = cur.u8()?;
                    out.hash_function = Some(
                        HashFunction::from_code(v)
                            .ok_or(fail(DecodeErrorKind::UnknownHashFunction(v)))?,
                    );
                }
                code::SIGNATURE_ALGORITHM => {
                    out.signature_algorithm = Some(LiveSignatureAlgorithm(cur.u8()?))
                }
                code::ADDRESSING => {
                    let v = cur.u8()?;
                    out.addressing = Some(
                        ChunkAddressing::from_code(v)
                            .ok_or(fail(DecodeErrorKind::UnknownAddressing(v)))?,
                    );
                }
                code::DISCARD_WINDOW => {
                    // Its width is the addressing method's, which must come
                    // before it (RFC 7574 §7.9).
                    let addressing = out
                        .addressing
                        .ok_or(fail(DecodeErrorKind::DiscardWindowWithoutAddressing))?;
                    let (value, all_ones) = match addressing.value_len() {
                        4 => (u64::from(cur.u32()?), u64::from(u32::MAX)),
                        _ => (cur.u64()?, u64::MAX),
                    };
                    out.discard_window = Some(if value == all_ones {
                        DiscardWindow::KeepAll
                    } else {
                        DiscardWindow::Window(value)
                    });
                }
                code::SUPPORTED_MESSAGES => {
                    let len = cur.u8()?;
                    if len > 32 {
                        return Err(fail(DecodeErrorKind::SupportedMessagesTooLong(len)));
                    }
                    let raw = cur.bytes(usize::from(len))?;
                    out.supported_messages = SupportedMessages::from_bytes(raw);
                }
                code::CHUNK_SIZE => {
                    out.chunk_size = Some(match cur.u32()? {
                        0 => return Err(fail(DecodeErrorKind::ZeroChunkSize)),
                        u32::MAX => ChunkSizeOption::Variable,
                        n => ChunkSizeOption::Fixed(n),
                    });
                }
                other => return Err(fail(DecodeErrorKind::UnknownOption(other))),
            }
        }
    }

    /// Encode the options present, in ascending order, and the end option.
    pub(crate) fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        if self.is_empty() {
            return w.u8(code::END);
        }
        let version = self.version.ok_or(EncodeError::VersionMissing)?;
        w.put(&[code::VERSION, version])?;
        if let Some(v) = self.min_version {
            w.put(&[code::MIN_VERSION, v])?;
        }
        if let Some(id) = self.swarm_id {
            let len = u16::try_from(id.len()).map_err(|_| EncodeError::LengthOutOfBounds)?;
            if len == 0 {
                return Err(EncodeError::LengthOutOfBounds);
            }
            w.u8(code::SWARM_ID)?;
            w.u16(len)?;
            w.put(id)?;
        }
        if let Some(v) = self.integrity {
            w.put(&[code::INTEGRITY, v.code()])?;
        }
        if let Some(v) = self.hash_function {
            w.put(&[code::HASH_FUNCTION, v.code()])?;
        }
        if let Some(v) = self.signature_algorithm {
            w.put(&[code::SIGNATURE_ALGORITHM, v.0])?;
        }
        if let Some(v) = self.addressing {
            w.put(&[code::ADDRESSING, v.code()])?;
        }
        if let Some(window) = self.discard_window {
            let addressing = self
                .addressing
                .ok_or(EncodeError::DiscardWindowWithoutAddressing)?;
            w.u8(code::DISCARD_WINDOW)?;
            let narrow = addressing.value_len() == 4;
            match (window, narrow) {
                (DiscardWindow::KeepAll, true) => w.u32(u32::MAX)?,
                (DiscardWindow::KeepAll, false) => w.u64(u64::MAX)?,
                (DiscardWindow::Window(v), true) => w.u32(
                    u32::try_from(v)
                        .ok()
                        .filter(|&v| v != u32::MAX)
                        .ok_or(EncodeError::ValueTooWide(addressing))?,
                )?,
                (DiscardWindow::Window(v), false) if v != u64::MAX => w.u64(v)?,
                (DiscardWindow::Window(_), false) => {
                    return Err(EncodeError::ValueTooWide(addressing))
                }
            }
        }
        if let Some(m) = self.supported_messages {
            w.put(&[code::SUPPORTED_MESSAGES, m.len])?;
            w.put(m.as_bytes())?;
        }
        if let Some(cs) = self.chunk_size {
            w.u8(code::CHUNK_SIZE)?;
            w.u32(match cs {
                ChunkSizeOption::Fixed(0) => return Err(EncodeError::ZeroChunkSize),
                ChunkSizeOption::Fixed(n) => n,
                ChunkSizeOption::Variable => u32::MAX,
            })?;
        }
        w.u8(code::END)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> Result<HandshakeOptions<'_>, DecodeError> {
        HandshakeOptions::decode(&mut Cursor::new(bytes, 0))
    }

    fn encode(opts: &HandshakeOptions<'_>) -> Result<Vec<u8>, EncodeError> {
        let mut buf = [0u8; 512];
        let mut w = Writer::new(&mut buf);
        opts.encode(&mut w)?;
        let n = w.pos();
        Ok(buf[..n].to_vec())
    }

    #[test]
    fn libswift_initiator_options() {
        // From the captured libswift exchange: version 1, min version 1, a
        // 20-byte swarm id, Merkle, SHA-1, 32-bit chunk ranges, end.
        let mut bytes = vec![0, 1, 1, 1, 2, 0, 20];
        bytes.extend([0xAA; 20]);
        bytes.extend([3, 1, 4, 0, 6, 2, 255]);
        let opts = decode(&bytes).unwrap();
        assert_eq!(opts.version, Some(1));
        assert_eq!(opts.min_version, Some(1));
        assert_eq!(opts.swarm_id, Some(&[0xAA; 20][..]));
        assert_eq!(opts.integrity, Some(ContentIntegrity::MerkleTree));
        assert_eq!(opts.hash_function, Some(HashFunction::Sha1));
        assert_eq!(opts.addressing, Some(ChunkAddressing::ChunkRanges32));
        assert_eq!(encode(&opts).unwrap(), bytes);
    }

    #[test]
    fn empty_list_is_a_close() {
        let opts = decode(&[255]).unwrap();
        assert!(opts.is_empty());
        assert_eq!(encode(&opts).unwrap(), [255]);
    }

    #[test]
    fn validation_errors() {
        let kind = |b: &[u8]| decode(b).unwrap_err().kind;
        assert_eq!(kind(&[1, 1, 255]), DecodeErrorKind::VersionNotFirst);
        assert_eq!(
            kind(&[0, 1, 3, 1, 3, 1, 255]),
            DecodeErrorKind::OptionsNotSorted {
                previous: 3,
                code: 3
            }
        );
        assert_eq!(
            kind(&[0, 1, 4, 0, 3, 1, 255]),
            DecodeErrorKind::OptionsNotSorted {
                previous: 4,
                code: 3
            }
        );
        assert_eq!(kind(&[0, 0, 255]), DecodeErrorKind::ReservedVersion);
        assert_eq!(
            kind(&[0, 1, 10, 0, 255]),
            DecodeErrorKind::UnknownOption(10)
        );
        assert_eq!(
            kind(&[0, 1, 3, 4, 255]),
            DecodeErrorKind::UnknownIntegrityMethod(4)
        );
        assert_eq!(
            kind(&[0, 1, 4, 5, 255]),
            DecodeErrorKind::UnknownHashFunction(5)
        );
        assert_eq!(
            kind(&[0, 1, 6, 5, 255]),
            DecodeErrorKind::UnknownAddressing(5)
        );
        assert_eq!(
            kind(&[0, 1, 7, 0, 0, 0, 1, 255]),
            DecodeErrorKind::DiscardWindowWithoutAddressing
        );
        assert_eq!(
            kind(&[0, 1, 8, 33]),
            DecodeErrorKind::SupportedMessagesTooLong(33)
        );
        assert_eq!(
            kind(&[0, 1, 9, 0, 0, 0, 0, 255]),
            DecodeErrorKind::ZeroChunkSize
        );
        assert_eq!(kind(&[0, 1, 2, 0, 0, 255]), DecodeErrorKind::EmptySwarmId);
        // Lengths must stay inside the datagram.
        assert_eq!(
            kind(&[0, 1, 2, 0xFF, 0xFF, 1, 2, 3]),
            DecodeErrorKind::Truncated
        );
        assert_eq!(kind(&[0, 1, 8, 4, 0xFF]), DecodeErrorKind::Truncated);
        // No end option.
        assert_eq!(kind(&[0, 1]), DecodeErrorKind::Truncated);
        assert_eq!(kind(&[]), DecodeErrorKind::Truncated);
    }

    #[test]
    fn discard_window_width_follows_addressing() {
        // 32-bit chunk ranges: 4-byte window.
        let narrow = [0, 1, 6, 2, 7, 0, 0, 1, 0, 255];
        let o = decode(&narrow).unwrap();
        assert_eq!(o.discard_window, Some(DiscardWindow::Window(256)));
        assert_eq!(encode(&o).unwrap(), narrow);
        // 64-bit bins: 8-byte window; all-ones means keep everything.
        let wide = [0, 1, 6, 3, 7, 255, 255, 255, 255, 255, 255, 255, 255, 255];
        let o = decode(&wide).unwrap();
        assert_eq!(o.discard_window, Some(DiscardWindow::KeepAll));
        assert_eq!(encode(&o).unwrap(), wide);
        // The 4-byte reading of an 8-byte window leaves garbage where the end
        // option should be.
        let wrong = [0, 1, 6, 2, 7, 0, 0, 0, 0, 0, 0, 1, 0, 255];
        assert!(decode(&wrong).is_err());
        // A window too wide for 32-bit addressing cannot be encoded.
        let o = HandshakeOptions {
            version: Some(1),
            addressing: Some(ChunkAddressing::ChunkRanges32),
            discard_window: Some(DiscardWindow::Window(1 << 40)),
            ..Default::default()
        };
        assert_eq!(
            encode(&o),
            Err(EncodeError::ValueTooWide(ChunkAddressing::ChunkRanges32))
        );
    }

    #[test]
    fn supported_messages_bitmap() {
        let m = SupportedMessages::from_types([
            MessageType::Handshake,
            MessageType::Data,
            MessageType::Request,
        ]);
        assert_eq!(m.as_bytes(), [0xC0, 0x80]);
        assert!(m.supports(MessageType::Request));
        assert!(!m.supports(MessageType::Have));
        let all = SupportedMessages::from_types(MessageType::ALL);
        assert_eq!(all.as_bytes(), [0xFF, 0xFC]);
        // Trailing zero bytes as sent survive a round trip.
        let bytes = [0, 1, 8, 3, 0xFF, 0xFC, 0x00, 255];
        assert_eq!(encode(&decode(&bytes).unwrap()).unwrap(), bytes);
    }

    #[test]
    fn chunk_size_option() {
        let o = decode(&[0, 1, 9, 0, 0, 4, 0, 255]).unwrap();
        assert_eq!(o.chunk_size, Some(ChunkSizeOption::Fixed(1024)));
        let o = decode(&[0, 1, 9, 255, 255, 255, 255, 255]).unwrap();
        assert_eq!(o.chunk_size, Some(ChunkSizeOption::Variable));
    }

    #[test]
    fn encoding_needs_version() {
        let o = HandshakeOptions {
            min_version: Some(1),
            ..Default::default()
        };
        assert_eq!(encode(&o), Err(EncodeError::VersionMissing));
    }
}
