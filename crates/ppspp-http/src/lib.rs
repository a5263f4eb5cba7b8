//! What ppspp's HTTP gateway (`ppspp stream`) reads, as pure functions: the
//! byte range a player asks for ([`range`], RFC 7233), the resource its
//! path names ([`target`]), and for a live stream where its MPEG-TS bytes
//! can be cut ([`hls`]) and where a decoder can start ([`ts_entry`]).
//!
//! They parse bytes from whoever connects, or from the stream's source.
//! They live in this small crate, apart from the binary and its HTTP
//! stack, so that the fuzz crate can reach them with nothing else to build.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod hls;
pub mod range;
pub mod target;
pub mod ts_entry;
