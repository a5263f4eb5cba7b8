//! A BitTorrent peer model for the lab (issue 25): BEP 3's peer wire
//! protocol over the lab's TCP and uTP models, with mainline's piece
//! picking and choking. It is its own model, not a second copy of ppspp.

pub mod choker;
pub mod config;
pub mod connection;
pub mod peer;
mod peer_messages;
pub mod picker;
mod timers;
pub mod transport;
pub mod wire;

pub use config::{BtConfig, Disposition};
pub use peer::{BtPeer, BtStats};

/// A piece's index in the content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PieceIndex(pub u32);
