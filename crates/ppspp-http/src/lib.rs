//! What ppspp's HTTP gateway (`ppspp stream`) reads from a request, as pure
//! functions: the byte range a player asks for ([`range`], RFC 7233) and
//! the resource its path names ([`target`]).
//!
//! Both parse bytes from whoever connects. They live in this small crate,
//! apart from the binary and its HTTP stack, so that the fuzz crate can
//! reach them with nothing else to build.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod range;
pub mod target;
