//! A peer joining a live stream (RFC 7574 §6.1): the seeder becomes the
//! source, injecting what its camera makes; a leecher becomes a receiver
//! that hooks in `hook_in_behind` munros before the newest, with a live
//! player. Both run the core's live swarms unchanged.
//!
//! [`live_peer`] builds both for the simulator and the emulator alike, so
//! a live scenario means the same thing on the virtual and the wall clock.

use std::time::Duration;

use ppspp_core::live::{LiveInjector, LiveKeyError, LiveParams};
use ppspp_core::pick::{self, PickerKind};
use ppspp_core::play::Bitrate;
use ppspp_core::proto::{Endpoint, SwarmHandle, SwarmSetup};
use ppspp_core::time::Instant;

use super::{endpoint_config, Partition, Shared};
use crate::live::player::{CatchUp, LivePlayerConfig};
use crate::live::source::LiveSource;
use crate::live::viewer::LiveViewer;
use crate::live::LiveStream;
use crate::scenario::{Role, Scenario};

/// A live viewer's prebuffer and rebuffer when its group names no player:
/// two seconds, short enough to keep the lag low, long enough to ride out
/// a lost chunk's retransmission.
pub const LIVE_BUFFER: Duration = Duration::from_secs(2);
/// How far behind the newest chunk it has a stalled viewer may fall before
/// it skips ahead, when its group does not say.
pub const LIVE_MAX_LAG: Duration = Duration::from_secs(10);
/// How often a viewer's lag is sampled.
pub const LAG_SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// What a live peer runs beside its swarm.
#[derive(Clone, Debug)]
pub enum LivePart {
    /// The source's camera.
    Source(LiveSource),
    /// A viewer's player (boxed: it is several times the camera's size).
    Viewer(Box<LiveViewer>),
}

/// The live swarm of a peer of group `group` in role `role` joining at
/// `now`, and what it runs beside it. `epoch_us`: the wall clock (µs since
/// the Unix epoch) at [`Instant::ZERO`], which a source's signatures carry
/// (RFC 7574 §6.1.2).
pub fn live_peer(
    scenario: &Scenario,
    group: usize,
    role: Role,
    stream: &LiveStream,
    now: Instant,
    epoch_us: u64,
) -> Result<(SwarmSetup, LivePart), LiveKeyError> {
    let spec = scenario.peers[group].get_ref();
    let rate = pick::MediaRate {
        chunk_size: stream.chunk_size,
        bitrate: Bitrate(stream.bitrate),
    };
    // The live picker's urgent set is the group's high window when
    // one is given; other pickers take their windows as on demand.
    let picker: Box<dyn pick::Picker> = match (
        spec.algorithm.unwrap_or(PickerKind::DEFAULT_LIVE),
        spec.high_window,
    ) {
        (PickerKind::Live, Some(urgent)) => Box::new(pick::LivePicker::sized(rate, urgent.0)),
        (kind, _) => kind.build(rate, spec.vod_windows()),
    };
    let storage = Box::new(stream.storage());
    match role {
        Role::Seeder => {
            let injector = LiveInjector::new(
                stream.key()?,
                LiveParams::default(),
                Some(stream.window_chunks),
            );
            let setup = SwarmSetup::live_source(
                injector,
                stream.shape(),
                stream.chunk_size,
                storage,
                picker,
            );
            Ok((
                setup,
                LivePart::Source(LiveSource::new(stream, now, epoch_us)),
            ))
        }
        Role::Leecher | Role::Host => {
            let setup = SwarmSetup::live_receiver(
                &stream.swarm_id,
                stream.shape(),
                false,
                stream.chunk_size,
                storage,
                picker,
            )?
            .hook_in_behind(stream.hook_in_behind);
            let player = spec.player;
            let config = LivePlayerConfig {
                clock: stream.clock,
                prebuffer: player.map_or(LIVE_BUFFER, |p| p.prebuffer.0),
                rebuffer: player.map_or(LIVE_BUFFER, |p| p.rebuffer.0),
                max_lag: player.and_then(|p| p.max_lag).map_or(LIVE_MAX_LAG, |d| d.0),
                window_chunks: stream.window_chunks,
                end: stream.end,
                stream_start: stream.start,
                sample_every: LAG_SAMPLE_EVERY,
                catch_up: player.and_then(|p| p.catch_up).and_then(|c| {
                    Some(CatchUp {
                        rate_permille: c.rate_permille()?,
                        above: c.above.0,
                    })
                }),
            };
            Ok((
                setup,
                LivePart::Viewer(Box::new(LiveViewer::new(config, now))),
            ))
        }
    }
}

impl Partition {
    /// Adds peer `i`'s live swarm to `ep` at `now` and gives the peer its
    /// camera or its player; the swarm's handle.
    pub(super) fn live_swarm(
        &mut self,
        i: u32,
        now: Instant,
        shared: &Shared,
        stream: &LiveStream,
        ep: &mut Endpoint,
    ) -> Option<SwarmHandle> {
        let group = self.peer(i).plan.group;
        let role = self.peer(i).plan.role;
        // Signatures carry the source's wall clock (§6.1.2): the lab's
        // epoch plus virtual time, as its DATA timestamps.
        let epoch = endpoint_config(&shared.scenario, group).wall_clock_offset;
        let (setup, part) = match live_peer(&shared.scenario, group, role, stream, now, epoch) {
            Ok(x) => x,
            Err(e) => {
                tracing::warn!("live peer {i}: {e}");
                return None;
            }
        };
        let h = ep.add_swarm(now, setup)?;
        let peer = self.peer_mut(i);
        match part {
            LivePart::Source(s) => peer.live_source = Some(s),
            LivePart::Viewer(v) => peer.live_viewer = Some(*v),
        }
        Some(h)
    }
}
