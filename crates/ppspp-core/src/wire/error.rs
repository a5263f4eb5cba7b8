//! Typed errors of the wire codec.

use thiserror::Error;

use super::ChunkAddressing;

/// A malformed datagram: what is wrong and at which byte offset.
///
/// The decoder stops at the first one; messages before it were valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("{kind} (at byte {offset})")]
pub struct DecodeError {
    /// Offset in the datagram where decoding failed.
    pub offset: usize,
    /// What was wrong.
    pub kind: DecodeErrorKind,
}

/// What made a datagram malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum DecodeErrorKind {
    /// Fewer than the 4 bytes of the destination channel id (RFC 7574 §8.3).
    #[error("datagram shorter than its 4-byte channel id")]
    NoChannelId,
    /// A message or option runs past the end of the datagram.
    #[error("message truncated by the end of the datagram")]
    Truncated,
    /// A message type outside 0–13 (RFC 7574 §8.2, Table 7).
    #[error("unknown message type {0}")]
    UnknownMessageType(u8),
    /// HANDSHAKE anywhere but first in the datagram (RFC 7574 §8.4).
    #[error("HANDSHAKE must be the first message of a datagram")]
    HandshakeNotFirst,
    /// A reversed range, or a chunk index no content can have.
    #[error("reversed or out-of-range chunk specification")]
    InvalidChunkSpec,
    /// A protocol option code outside 0–9 and 255 (RFC 7574 §7).
    #[error("unknown protocol option {0}")]
    UnknownOption(u8),
    /// Options out of ascending order, or repeated (RFC 7574 §7).
    #[error("protocol option {code} after option {previous}: options must be sorted ascending, each at most once")]
    OptionsNotSorted {
        /// The option before.
        previous: u8,
        /// The offending option.
        code: u8,
    },
    /// A non-empty option list that does not start with the version
    /// (RFC 7574 §7.2).
    #[error("the version option must be the first protocol option")]
    VersionNotFirst,
    /// Protocol version 0, which is reserved (RFC 7574 §7.2, Table 3).
    #[error("protocol version 0 is reserved")]
    ReservedVersion,
    /// An integrity protection method outside 0–3 (RFC 7574 §7.5).
    #[error("unknown content integrity protection method {0}")]
    UnknownIntegrityMethod(u8),
    /// A Merkle hash function outside 0–4 (RFC 7574 §7.6).
    #[error("unknown Merkle hash function {0}")]
    UnknownHashFunction(u8),
    /// A chunk addressing method outside 0–4 (RFC 7574 §7.8).
    #[error("unknown chunk addressing method {0}")]
    UnknownAddressing(u8),
    /// A live discard window without the addressing method before it, whose
    /// width it needs (RFC 7574 §7.9).
    #[error("live discard window given without a chunk addressing method before it")]
    DiscardWindowWithoutAddressing,
    /// A swarm identifier of length zero (RFC 7574 §7.4).
    #[error("empty swarm identifier")]
    EmptySwarmId,
    /// A supported-messages bitmap longer than the 256 bits it can hold
    /// (RFC 7574 §7.10).
    #[error("supported-messages bitmap of {0} bytes (at most 32)")]
    SupportedMessagesTooLong(u8),
    /// A chunk size option of 0 bytes (RFC 7574 §7.11).
    #[error("chunk size 0")]
    ZeroChunkSize,
    /// A SIGNED_INTEGRITY whose signature length cannot be derived from the
    /// negotiated live signature algorithm and swarm id (RFC 7574 §8.9).
    #[error("SIGNED_INTEGRITY without a known signature length")]
    UnknownSignatureLength,
}

/// Why a message could not be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// The caller's buffer is too small.
    #[error("buffer too small: {needed} bytes needed, {available} available")]
    BufferTooSmall {
        /// Bytes the encoding needs in total.
        needed: usize,
        /// Size of the buffer.
        available: usize,
    },
    /// A chunk specification of another kind than the addressing method
    /// (bin, chunk range or byte range).
    #[error("chunk specification does not match addressing method {0:?}")]
    SpecMismatch(ChunkAddressing),
    /// A chunk specification or window that does not fit the method's width.
    #[error("value does not fit the width of addressing method {0:?}")]
    ValueTooWide(ChunkAddressing),
    /// A hash of another length than the negotiated hash function's.
    #[error("hash of {got} bytes where the swarm uses {expected}")]
    HashLength {
        /// The negotiated length.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A signature of another length than the negotiated algorithm's, or no
    /// signature length negotiated.
    #[error("signature of {got} bytes where the swarm expects {expected:?}")]
    SignatureLength {
        /// The negotiated length, if known.
        expected: Option<usize>,
        /// The length given.
        got: usize,
    },
    /// A HANDSHAKE after another message in the same datagram.
    #[error("HANDSHAKE must be the first message of a datagram")]
    HandshakeNotFirst,
    /// Protocol options without the version option, which must come first.
    #[error("protocol options need the version option")]
    VersionMissing,
    /// A live discard window without a chunk addressing option.
    #[error("live discard window needs the chunk addressing option")]
    DiscardWindowWithoutAddressing,
    /// A swarm id, certificate or bitmap too long for its length field, or an
    /// empty swarm id.
    #[error("field length out of bounds for its length field")]
    LengthOutOfBounds,
    /// A chunk size option of zero.
    #[error("chunk size 0")]
    ZeroChunkSize,
}
