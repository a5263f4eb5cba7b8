//! The sans-IO protocol engine: channels and swarms behind one
//! [`Endpoint`], driven by `handle_*` inputs and `poll_*` outputs with time
//! passed in (architecture note, "The sans-IO boundary").
//!
//! ```text
//! driver: handle_datagram(now, from, bytes) / handle_timeout(now)
//!         then drain poll_transmit(now, buf), poll_event(), poll_timeout(now)
//! ```
//! The same engine runs on real UDP, in the simulator and in the emulator.

pub mod address;
mod channel;
mod checkpoint;
mod choke;
mod chunk_log;
mod config;
mod endpoint;
mod event;
mod fast;
mod integrity;
mod live_window;
mod pacer;
pub mod pex;
mod policy;
mod ratelimit;
mod requests;
mod schedule;
mod sent;
mod storage_failure;
mod swarm;
mod turns;
mod upload;
mod violation;

use std::collections::VecDeque;
use std::fmt;

use rand::rngs::Xoshiro256PlusPlus;

pub use checkpoint::{CheckpointError, CheckpointPolicy};
pub use choke::Choking;
pub use chunk_log::ChunkLog;
pub use config::{Compat, EndpointConfig};
pub use endpoint::live::LivePushError;
pub use endpoint::{Endpoint, Transmit};
pub use event::{CloseReason, DropCounts, EndpointStats, Event, PeerStats, SwarmStats};
pub use integrity::Integrity;
pub use policy::UnknownPolicy;
pub use ratelimit::TokenBucket;
pub use storage_failure::{StorageFailure, StorageOp};
pub use swarm::SwarmSetup;
pub use turns::{UploadScheduling, MAX_UPLOAD_TURN};
pub use violation::{IncompatibleOptions, ProtocolViolation};

use crate::time::Instant;
use crate::wire::MessageTally;

/// Names a swarm inside an [`Endpoint`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SwarmHandle(pub(crate) u32);

impl fmt::Debug for SwarmHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "swarm#{}", self.0)
    }
}

/// What a channel needs from its endpoint while it handles an input or
/// writes a datagram: inputs only. What it leaves for the endpoint to do
/// afterwards comes back as a `channel::Outcome`.
pub(crate) struct Ctx<'a> {
    pub now: Instant,
    pub config: &'a EndpointConfig,
    pub events: &'a mut VecDeque<Event>,
    pub rng: &'a mut Xoshiro256PlusPlus,
    pub upload: Option<&'a mut TokenBucket>,
    pub download: Option<&'a mut TokenBucket>,
    /// The messages of every datagram written, by type.
    pub sent: &'a mut MessageTally,
}

impl Ctx<'_> {
    /// Now as a DATA timestamp: wall-clock µs since the Unix epoch
    /// ([`EndpointConfig::wall_clock_offset`]), wrapping like the wire's
    /// 64-bit field.
    pub fn wire_now(&self) -> u64 {
        self.now
            .as_micros()
            .wrapping_add(self.config.wall_clock_offset)
    }
}
