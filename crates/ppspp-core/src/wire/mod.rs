//! The PPSPP wire codec (RFC 7574 §7–§8): datagrams, messages, chunk
//! specifications and protocol options.
//!
//! Encoders write into a buffer the caller provides; the decoder borrows from
//! the datagram and yields messages one by one, stopping with a typed
//! [`DecodeError`] at the first malformed one. Field sizes come from the
//! negotiated [`SwarmParams`]: PPSPP messages carry no lengths of their own.
//!
//! ```
//! use ppspp_core::wire::{decode_datagram, ChannelId, DatagramWriter, Message, SwarmParams};
//! use ppspp_core::ChunkRange;
//!
//! let params = SwarmParams::default();
//! let mut buf = [0u8; 64];
//! let mut dgram = DatagramWriter::new(&mut buf, ChannelId(7), params).unwrap();
//! dgram.push(&Message::Request(ChunkRange::new(0u64, 2u64).unwrap().into())).unwrap();
//! let len = dgram.finish();
//!
//! let (channel, mut messages) = decode_datagram(&buf[..len], params).unwrap();
//! assert_eq!(channel, ChannelId(7));
//! assert!(matches!(messages.next(), Some(Ok(Message::Request(_)))));
//! assert!(messages.next().is_none());
//! ```

mod cursor;
mod datagram;
mod error;
mod message;
pub mod options;
mod params;
mod spec;
mod tally;

use std::fmt;

pub use datagram::{decode_datagram, DatagramWriter, Messages, WriterMark};
pub use error::{DecodeError, DecodeErrorKind, EncodeError};
pub use message::{DelaySample, Message, MessageType, NtpTimestamp, Timestamp};
pub use options::{HandshakeOptions, SupportedMessages, PPSPP_VERSION};
pub use params::{
    ChunkAddressing, ChunkSizeOption, ContentIntegrity, DiscardWindow, LiveSignatureAlgorithm,
    SwarmParams,
};
pub use spec::ChunkSpec;
pub use tally::MessageTally;

/// A channel id (RFC 7574 §3.11, §8.3): chosen by the receiving side, put at
/// the front of every datagram sent to it. 0 addresses a peer that has not
/// yet told us its channel (the first datagram of a handshake).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ChannelId(pub u32);

impl ChannelId {
    /// The all-zero channel id of a handshake's first datagram, and the
    /// source channel of a closing HANDSHAKE.
    pub const ZERO: ChannelId = ChannelId(0);
}

impl fmt::Debug for ChannelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ch:{:08x}", self.0)
    }
}

impl fmt::Display for ChannelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:08x}", self.0)
    }
}

/// The length of the destination channel id that starts every datagram.
pub const CHANNEL_ID_LEN: usize = 4;
