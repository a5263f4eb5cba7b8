//! The sans-IO protocol core of ppspp, an implementation of the Peer-to-Peer
//! Streaming Peer Protocol (RFC 7574).
//!
//! Nothing in this crate touches sockets, clocks or global randomness: drivers
//! hand in bytes, time and seeded generators. This layer holds
//! - [`chunk`]: chunk indices, chunk and byte ranges, the chunk size;
//! - [`bin`]: bin numbers, the tree addressing of chunks (RFC 7574 §4.2);
//! - [`binmap`]: sets of chunks as collapsed bin trees, for HAVE bookkeeping (RFC 7574 §4);
//! - [`hash`]: the Merkle hash functions and hash values (RFC 7574 §7.6);
//! - [`merkle`]: Merkle hash trees, building and incremental verification (RFC 7574 §5);
//! - [`live`]: live swarms: signing keys, signed munros, the discard window (RFC 7574 §6.1);
//! - [`wire`]: the datagram and message codec (RFC 7574 §7–§8);
//! - [`time`]: the [`time::Instant`] drivers hand in;
//! - [`cc`]: congestion control behind a trait (LEDBAT, RFC 6817);
//! - [`pick`]: download scheduling behind a trait;
//! - [`play`]: the player model of a viewer (startup, stalls, continuity);
//! - [`storage`]: content storage behind a trait;
//! - [`proto`]: the sans-IO endpoint: channels, swarms, handshakes, transfers.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod bin;
pub mod binmap;
pub mod cc;
pub mod chunk;
pub mod hash;
pub mod live;
pub mod merkle;
pub mod mix;
pub mod pick;
pub mod play;
pub mod proto;
pub mod storage;
pub mod time;
pub mod wire;

pub use bin::Bin;
pub use binmap::Binmap;
pub use chunk::{ByteRange, ChunkIndex, ChunkRange, ChunkSize};
pub use hash::{Hash, HashFunction};
pub use merkle::{MerkleError, MerkleTree, PartialTree, RootInfo, VerifyError};
