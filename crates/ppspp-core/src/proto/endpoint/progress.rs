//! Reporting a download's progress (its length once known, its
//! completion) and pacing its checkpoints (`proto/checkpoint.rs`).

use super::Endpoint;
use crate::proto::checkpoint::{CheckpointError, CheckpointPolicy};
use crate::proto::event::Event;
use crate::proto::swarm::Swarm;
use crate::proto::{StorageFailure, StorageOp, SwarmHandle};
use crate::time::Instant;

impl Endpoint {
    /// Reports a newly known content length and completion, and
    /// checkpoints a completed download.
    pub(super) fn check_progress(&mut self, now: Instant, handle: SwarmHandle) {
        let policy = CheckpointPolicy::of(&self.config);
        let Some(swarm) = self.swarms.get_mut(handle) else {
            return;
        };
        if !swarm.content_len_reported {
            if let Some(len) = swarm.integrity.content_len() {
                swarm.content_len_reported = true;
                if let Err(e) = swarm.storage.set_content_len(len) {
                    self.events.push_back(Event::StorageError {
                        swarm: handle,
                        error: StorageFailure::new(StorageOp::SetContentLength, &e),
                    });
                }
                self.events
                    .push_back(Event::ContentLength { swarm: handle, len });
            }
        }
        if !swarm.complete_reported && swarm.is_complete() {
            swarm.complete_reported = true;
            if let Some(e) = swarm.maybe_checkpoint(now, &policy, true) {
                self.events.push_back(Event::StorageError {
                    swarm: handle,
                    error: StorageFailure::from(&e),
                });
            }
            self.events.push_back(Event::Complete { swarm: handle });
        } else if swarm.checkpoint_due_by_progress(&policy) {
            if let Some(e) = swarm.maybe_checkpoint(now, &policy, false) {
                self.events.push_back(Event::StorageError {
                    swarm: handle,
                    error: StorageFailure::from(&e),
                });
            }
        }
    }

    /// Writes a checkpoint of `swarm` now if it changed.
    pub fn checkpoint(&mut self, now: Instant, swarm: SwarmHandle) -> Result<(), CheckpointError> {
        let policy = CheckpointPolicy::of(&self.config);
        match self
            .swarm_mut(swarm)
            .and_then(|s| s.maybe_checkpoint(now, &policy, true))
        {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Returns once the checkpoints of `swarm` asked for are durable, with
    /// the error of one that failed and was not reported yet
    /// ([`Storage::wait_checkpoint`](crate::storage::Storage::wait_checkpoint)).
    /// A driver calls it when the swarm stops, after
    /// [`Endpoint::checkpoint`], so that a last checkpoint written in the
    /// background cannot fail unseen. It blocks on the storage.
    pub fn wait_checkpoint(&mut self, swarm: SwarmHandle) -> Result<(), CheckpointError> {
        match self.swarm_mut(swarm).and_then(Swarm::wait_checkpoint) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Writes the checkpoints whose time has come (those due by progress
    /// are written as chunks verify, in [`Endpoint::check_progress`]).
    pub(super) fn checkpoint_timers(&mut self, now: Instant) {
        let policy = CheckpointPolicy::of(&self.config);
        for (handle, s) in self.swarms.iter_mut() {
            let _span = super::trace::swarm_span(handle).entered();
            if let Some(e) = s.maybe_checkpoint(now, &policy, false) {
                self.events.push_back(Event::StorageError {
                    swarm: handle,
                    error: StorageFailure::from(&e),
                });
            }
        }
    }

    /// When `swarm`'s next checkpoint is due by time, if it has anything
    /// new to record.
    pub(super) fn checkpoint_deadline(&self, s: &Swarm) -> Option<Instant> {
        (s.checkpoint_dirty && s.integrity.partial().is_some())
            .then(|| s.last_checkpoint + self.config.checkpoint_interval)
    }
}
