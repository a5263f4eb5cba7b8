//! How a node shares its upload: the flags `seed`, `get` and `stream`
//! have in common, each a policy chosen by name (`proto/choke`,
//! `proto/turns` in the core).

use ppspp_core::proto::{Choking, EndpointConfig, UploadScheduling};

/// Upload slots, choking and upload scheduling.
#[derive(Debug, Clone, clap::Args)]
pub struct UploadPolicy {
    /// Peers served at once; the others are choked and take turns (0: all).
    #[arg(long, default_value = "0")]
    pub upload_slots: usize,
    /// Who of the interested peers is served: `rotation` (at most
    /// --upload-slots, newcomers first, taking turns) or `unchoke-all`.
    #[arg(long, default_value = "rotation")]
    pub choking: Choking,
    /// How requesting peers share the upload: `fifo` (one datagram each in
    /// turn) or `wfq` (weighted fair queuing: turns as long as a peer's
    /// queued requests).
    #[arg(long, default_value = "fifo")]
    pub upload_scheduling: UploadScheduling,
    /// The same as --upload-scheduling wfq.
    #[arg(long, conflicts_with = "upload_scheduling")]
    pub weighted_uploads: bool,
}

impl UploadPolicy {
    /// Sets the endpoint's upload policies.
    pub fn apply(&self, config: &mut EndpointConfig) {
        config.upload_slots = self.upload_slots;
        config.choking = self.choking;
        config.upload_scheduling = if self.weighted_uploads {
            UploadScheduling::Wfq
        } else {
            self.upload_scheduling
        };
    }
}
