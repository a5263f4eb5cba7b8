//! PPSPP messages (RFC 7574 §8.4–§8.13) and their encoding.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};

use crate::hash::Hash;

use super::cursor::{Cursor, Writer};
use super::error::{DecodeError, DecodeErrorKind, EncodeError};
use super::options::HandshakeOptions;
use super::spec::ChunkSpec;
use super::{ChannelId, SwarmParams};

/// Message type codes (RFC 7574 §8.2, Table 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MessageType {
    /// 0: HANDSHAKE.
    Handshake,
    /// 1: DATA.
    Data,
    /// 2: ACK.
    Ack,
    /// 3: HAVE.
    Have,
    /// 4: INTEGRITY.
    Integrity,
    /// 5: PEX_RESv4.
    PexResV4,
    /// 6: PEX_REQ.
    PexReq,
    /// 7: SIGNED_INTEGRITY.
    SignedIntegrity,
    /// 8: REQUEST.
    Request,
    /// 9: CANCEL.
    Cancel,
    /// 10: CHOKE.
    Choke,
    /// 11: UNCHOKE.
    Unchoke,
    /// 12: PEX_RESv6.
    PexResV6,
    /// 13: PEX_REScert.
    PexResCert,
}

impl MessageType {
    /// Every message type, in code order.
    pub const ALL: [MessageType; 14] = [
        MessageType::Handshake,
        MessageType::Data,
        MessageType::Ack,
        MessageType::Have,
        MessageType::Integrity,
        MessageType::PexResV4,
        MessageType::PexReq,
        MessageType::SignedIntegrity,
        MessageType::Request,
        MessageType::Cancel,
        MessageType::Choke,
        MessageType::Unchoke,
        MessageType::PexResV6,
        MessageType::PexResCert,
    ];

    /// The type with code `code`, if defined.
    pub fn from_code(code: u8) -> Option<Self> {
        Self::ALL.get(usize::from(code)).copied()
    }

    /// The wire code.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The name RFC 7574 §8.2 (Table 7) gives it.
    pub const fn name(self) -> &'static str {
        match self {
            MessageType::Handshake => "HANDSHAKE",
            MessageType::Data => "DATA",
            MessageType::Ack => "ACK",
            MessageType::Have => "HAVE",
            MessageType::Integrity => "INTEGRITY",
            MessageType::PexResV4 => "PEX_RESv4",
            MessageType::PexReq => "PEX_REQ",
            MessageType::SignedIntegrity => "SIGNED_INTEGRITY",
            MessageType::Request => "REQUEST",
            MessageType::Cancel => "CANCEL",
            MessageType::Choke => "CHOKE",
            MessageType::Unchoke => "UNCHOKE",
            MessageType::PexResV6 => "PEX_RESv6",
            MessageType::PexResCert => "PEX_REScert",
        }
    }
}

impl fmt::Display for MessageType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The sender's clock in microseconds, carried by DATA for LEDBAT
/// (RFC 7574 §8.6). Only differences between samples matter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub u64);

/// A one-way delay sample in microseconds, carried by ACK (RFC 7574 §8.7):
/// receive time minus the DATA's timestamp. Signed, as libswift writes it:
/// unsynchronised clocks make it negative, and LEDBAT only uses differences.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct DelaySample(pub i64);

/// A 64-bit NTP timestamp (RFC 5905), carried by SIGNED_INTEGRITY
/// (RFC 7574 §8.9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct NtpTimestamp(pub u64);

/// One PPSPP message. Variable-length parts borrow from the datagram.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub enum Message<'a> {
    /// HANDSHAKE: the sender's channel id and its protocol options; a source
    /// channel of 0 closes the channel (RFC 7574 §8.4).
    Handshake {
        /// The channel id the sender wants to be addressed with.
        source: ChannelId,
        /// The protocol options.
        options: HandshakeOptions<'a>,
    },
    /// DATA: a chunk, with the sender's timestamp (RFC 7574 §8.6).
    Data {
        /// The chunks carried.
        spec: ChunkSpec,
        /// Sender's clock, µs.
        timestamp: Timestamp,
        /// The chunk bytes.
        payload: &'a [u8],
    },
    /// ACK: chunks received, with a one-way delay sample (RFC 7574 §8.7).
    Ack {
        /// The chunks acknowledged.
        spec: ChunkSpec,
        /// Receive time minus the DATA's timestamp, µs.
        delay: DelaySample,
    },
    /// HAVE: chunks the sender has verified (RFC 7574 §8.5).
    Have(ChunkSpec),
    /// INTEGRITY: the hash of the tree node covering `spec` (RFC 7574 §8.8).
    Integrity {
        /// The chunks under the node.
        spec: ChunkSpec,
        /// The node's hash.
        hash: Hash,
    },
    /// PEX_RESv4: an IPv4 peer address (RFC 7574 §8.13).
    PexResV4(SocketAddrV4),
    /// PEX_REQ: asks for peer addresses (RFC 7574 §8.13).
    PexReq,
    /// SIGNED_INTEGRITY: a signed munro or chunk (RFC 7574 §8.9).
    SignedIntegrity {
        /// The chunks signed for.
        spec: ChunkSpec,
        /// When the injector signed, NTP format.
        timestamp: NtpTimestamp,
        /// The signature, of the negotiated algorithm's length.
        signature: &'a [u8],
    },
    /// REQUEST: chunks the sender wants (RFC 7574 §8.10).
    Request(ChunkSpec),
    /// CANCEL: chunks the sender no longer wants (RFC 7574 §8.11).
    Cancel(ChunkSpec),
    /// CHOKE: the sender will not serve requests (RFC 7574 §8.12).
    Choke,
    /// UNCHOKE: the sender will serve requests again (RFC 7574 §8.12).
    Unchoke,
    /// PEX_RESv6: an IPv6 peer address (RFC 7574 §8.13).
    PexResV6(SocketAddrV6),
    /// PEX_REScert: a DER X.509 membership certificate (RFC 7574 §8.13).
    PexResCert(&'a [u8]),
}

impl Message<'_> {
    /// This message's type.
    pub fn message_type(&self) -> MessageType {
        match self {
            Message::Handshake { .. } => MessageType::Handshake,
            Message::Data { .. } => MessageType::Data,
            Message::Ack { .. } => MessageType::Ack,
            Message::Have(_) => MessageType::Have,
            Message::Integrity { .. } => MessageType::Integrity,
            Message::PexResV4(_) => MessageType::PexResV4,
            Message::PexReq => MessageType::PexReq,
            Message::SignedIntegrity { .. } => MessageType::SignedIntegrity,
            Message::Request(_) => MessageType::Request,
            Message::Cancel(_) => MessageType::Cancel,
            Message::Choke => MessageType::Choke,
            Message::Unchoke => MessageType::Unchoke,
            Message::PexResV6(_) => MessageType::PexResV6,
            Message::PexResCert(_) => MessageType::PexResCert,
        }
    }

    /// Encode this message into `out` with the swarm's parameters; returns
    /// the number of bytes written. Nothing is allocated.
    pub fn encode(&self, params: &SwarmParams, out: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = Writer::new(out);
        self.write(params, &mut w)?;
        Ok(w.pos())
    }

    #[inline]
    pub(crate) fn write(
        &self,
        params: &SwarmParams,
        w: &mut Writer<'_>,
    ) -> Result<(), EncodeError> {
        let a = params.addressing;
        w.u8(self.message_type().code())?;
        match self {
            Message::Handshake { source, options } => {
                w.u32(source.0)?;
                options.encode(w)
            }
            Message::Data {
                spec,
                timestamp,
                payload,
            } => {
                spec.encode(w, a)?;
                w.u64(timestamp.0)?;
                w.put(payload)
            }
            Message::Ack { spec, delay } => {
                spec.encode(w, a)?;
                w.u64(delay.0 as u64)
            }
            Message::Have(spec) | Message::Request(spec) | Message::Cancel(spec) => {
                spec.encode(w, a)
            }
            Message::Integrity { spec, hash } => {
                if hash.len() != params.hash_len() {
                    return Err(EncodeError::HashLength {
                        expected: params.hash_len(),
                        got: hash.len(),
                    });
                }
                spec.encode(w, a)?;
                w.put(hash.as_bytes())
            }
            Message::PexResV4(addr) => {
                w.put(&addr.ip().octets())?;
                w.u16(addr.port())
            }
            Message::PexReq | Message::Choke | Message::Unchoke => Ok(()),
            Message::SignedIntegrity {
                spec,
                timestamp,
                signature,
            } => {
                if params.signature_len != Some(signature.len()) {
                    return Err(EncodeError::SignatureLength {
                        expected: params.signature_len,
                        got: signature.len(),
                    });
                }
                spec.encode(w, a)?;
                w.u64(timestamp.0)?;
                w.put(signature)
            }
            Message::PexResV6(addr) => {
                w.put(&addr.ip().octets())?;
                w.u16(addr.port())
            }
            Message::PexResCert(cert) => {
                w.u16(u16::try_from(cert.len()).map_err(|_| EncodeError::LengthOutOfBounds)?)?;
                w.put(cert)
            }
        }
    }
}

impl<'a> Message<'a> {
    /// Decode one message at the cursor. `params` sizes its fields; a DATA
    /// payload runs to the end of the datagram unless a fixed chunk size says
    /// where it stops (RFC 7574 §8.6: several DATA per datagram only with
    /// fixed-size chunks).
    #[inline(always)]
    pub(crate) fn read(cur: &mut Cursor<'a>, params: &SwarmParams) -> Result<Self, DecodeError> {
        let at = cur.pos();
        let code = cur.u8()?;
        let kind = MessageType::from_code(code).ok_or(DecodeError {
            offset: at,
            kind: DecodeErrorKind::UnknownMessageType(code),
        })?;
        let a = params.addressing;
        Ok(match kind {
            MessageType::Handshake => {
                let source = ChannelId(cur.u32()?);
                Message::Handshake {
                    source,
                    options: HandshakeOptions::decode(cur)?,
                }
            }
            MessageType::Data => {
                let spec = ChunkSpec::decode(cur, a)?;
                let timestamp = Timestamp(cur.u64()?);
                let expected = params.chunk_size.and_then(|cs| spec.payload_len(cs));
                let payload = match expected {
                    Some(n) if n < cur.remaining() as u64 => cur.bytes(n as usize)?,
                    _ => cur.rest(),
                };
                Message::Data {
                    spec,
                    timestamp,
                    payload,
                }
            }
            MessageType::Ack => {
                let spec = ChunkSpec::decode(cur, a)?;
                Message::Ack {
                    spec,
                    delay: DelaySample(cur.u64()? as i64),
                }
            }
            MessageType::Have => Message::Have(ChunkSpec::decode(cur, a)?),
            MessageType::Integrity => {
                let spec = ChunkSpec::decode(cur, a)?;
                Message::Integrity {
                    spec,
                    hash: Hash::from_slice(cur.bytes(params.hash_len())?),
                }
            }
            MessageType::PexResV4 => {
                let ip = Ipv4Addr::from(cur.u32()?);
                Message::PexResV4(SocketAddrV4::new(ip, cur.u16()?))
            }
            MessageType::PexReq => Message::PexReq,
            MessageType::SignedIntegrity => {
                let spec = ChunkSpec::decode(cur, a)?;
                let timestamp = NtpTimestamp(cur.u64()?);
                let len = params.signature_len.ok_or(DecodeError {
                    offset: at,
                    kind: DecodeErrorKind::UnknownSignatureLength,
                })?;
                Message::SignedIntegrity {
                    spec,
                    timestamp,
                    signature: cur.bytes(len)?,
                }
            }
            MessageType::Request => Message::Request(ChunkSpec::decode(cur, a)?),
            MessageType::Cancel => Message::Cancel(ChunkSpec::decode(cur, a)?),
            MessageType::Choke => Message::Choke,
            MessageType::Unchoke => Message::Unchoke,
            MessageType::PexResV6 => {
                let ip = Ipv6Addr::from(cur.u128()?);
                Message::PexResV6(SocketAddrV6::new(ip, cur.u16()?, 0, 0))
            }
            MessageType::PexResCert => {
                let len = cur.u16()?;
                Message::PexResCert(cur.bytes(usize::from(len))?)
            }
        })
    }
}

impl fmt::Debug for Message<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::Handshake { source, options } => {
                write!(f, "HANDSHAKE({source:?}, {options:?})")
            }
            Message::Data {
                spec,
                timestamp,
                payload,
            } => {
                write!(
                    f,
                    "DATA({spec:?}, t={}, {} bytes)",
                    timestamp.0,
                    payload.len()
                )
            }
            Message::Ack { spec, delay } => write!(f, "ACK({spec:?}, delay={}µs)", delay.0),
            Message::Have(s) => write!(f, "HAVE({s:?})"),
            Message::Integrity { spec, hash } => write!(f, "INTEGRITY({spec:?}, {hash})"),
            Message::PexResV4(a) => write!(f, "PEX_RESv4({a})"),
            Message::PexReq => write!(f, "PEX_REQ"),
            Message::SignedIntegrity {
                spec,
                timestamp,
                signature,
            } => write!(
                f,
                "SIGNED_INTEGRITY({spec:?}, ntp={}, {} bytes)",
                timestamp.0,
                signature.len()
            ),
            Message::Request(s) => write!(f, "REQUEST({s:?})"),
            Message::Cancel(s) => write!(f, "CANCEL({s:?})"),
            Message::Choke => write!(f, "CHOKE"),
            Message::Unchoke => write!(f, "UNCHOKE"),
            Message::PexResV6(a) => write!(f, "PEX_RESv6({a})"),
            Message::PexResCert(c) => write!(f, "PEX_REScert({} bytes)", c.len()),
        }
    }
}
