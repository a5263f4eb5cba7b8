//! A peer joining a live stream (RFC 7574 §6.1): the seeder becomes the
//! source, injecting what its camera makes; a leecher becomes a receiver
//! that hooks in `hook_in_behind` munros before the newest, with a live
//! player. Both run the core's live swarms unchanged.

use std::time::Duration;

use ppspp_core::live::{LiveInjector, LiveParams};
use ppspp_core::pick::{self, PickerKind};
use ppspp_core::play::Bitrate;
use ppspp_core::proto::{Endpoint, SwarmHandle, SwarmSetup};
use ppspp_core::time::Instant;

use super::{endpoint_config, Partition, Shared};
use crate::live::player::{CatchUp, LivePlayerConfig};
use crate::live::source::LiveSource;
use crate::live::viewer::LiveViewer;
use crate::live::LiveStream;
use crate::scenario::Role;

/// A live viewer's prebuffer and rebuffer when its group names no player:
/// two seconds, short enough to keep the lag low, long enough to ride out
/// a lost chunk's retransmission.
pub const LIVE_BUFFER: Duration = Duration::from_secs(2);
/// How far behind the newest chunk it has a stalled viewer may fall before
/// it skips ahead, when its group does not say.
pub const LIVE_MAX_LAG: Duration = Duration::from_secs(10);
/// How often a viewer's lag is sampled.
pub const LAG_SAMPLE_EVERY: Duration = Duration::from_secs(1);

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
        let (group, role) = {
            let p = self.peer(i);
            (p.plan.group, p.plan.role)
        };
        let spec = shared.scenario.peers[group].get_ref();
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
                let key = match stream.key() {
                    Ok(k) => k,
                    Err(e) => {
                        tracing::warn!("live source key: {e}");
                        return None;
                    }
                };
                let injector =
                    LiveInjector::new(key, LiveParams::default(), Some(stream.window_chunks));
                let setup = SwarmSetup::live_source(
                    injector,
                    stream.shape(),
                    stream.chunk_size,
                    storage,
                    picker,
                );
                let h = ep.add_swarm(now, setup)?;
                // Signatures carry the source's wall clock (§6.1.2): the
                // lab's epoch plus virtual time, as its DATA timestamps.
                let epoch = endpoint_config(&shared.scenario, group).wall_clock_offset;
                self.peer_mut(i).live_source = Some(LiveSource::new(stream, now, epoch));
                Some(h)
            }
            Role::Leecher | Role::Host => {
                let setup = SwarmSetup::live_receiver(
                    &stream.swarm_id,
                    stream.shape(),
                    false,
                    stream.chunk_size,
                    storage,
                    picker,
                )
                .ok()?
                .hook_in_behind(stream.hook_in_behind);
                let h = ep.add_swarm(now, setup)?;
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
                self.peer_mut(i).live_viewer = Some(LiveViewer::new(config, now));
                Some(h)
            }
        }
    }
}
