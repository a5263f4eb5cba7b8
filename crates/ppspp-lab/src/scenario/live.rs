//! The `[live]` table: a live stream (RFC 7574 §6.1) in place of static
//! content. The scenario's one seeder (`role = "source"` reads the same)
//! is the injector: it makes chunks at the stream's bitrate from its
//! arrival and signs every munro; every leecher is a viewer with a live
//! player (`crate::live`).

use std::time::Duration;

use ppspp_core::wire::LiveSignatureAlgorithm;
use serde::Deserialize;

use super::spec::{PeerGroup, Role, Scenario};
use super::value::{Bitrate, Dur};

fn default_window() -> Dur {
    Dur(Duration::from_secs(30))
}
/// Hook in at the newest munro a peer announces, as libswift does (RFC
/// 7574 §6.1 lets a peer start anywhere). Hooking in further back gives
/// the prebuffer media that is already there, but in a flash crowd the
/// swarm's spare upload is what a newcomer downloads its backlog with
/// (1.2-1.6x the stream for a newcomer at 200 viewers), so each munro
/// behind costs startup and lag, and the catch-up player works that lag
/// off no faster than its download runs ahead. Scan of `hook_in_behind` (munros), mean
/// continuity / lag p50 / lag p95 (s):
///
/// | behind | `live-small` (1x player), seeds 1-5 | `live-500` with 200 viewers for 180 s, seeds 1-3 |
/// |---|---|---|
/// | 0 | 0.9997 / 3.20 / 3.91 | 0.9979 / 4.07 / 5.07 |
/// | 1 | 1.0000 / 3.42 / 4.27 | |
/// | 2 | 1.0000 / 3.83 / 4.93 | 0.9977 / 4.03 / 6.04 |
/// | 4 | 0.9964 / 4.96 / 6.31 | 0.9970 / 4.08 / 7.00 |
/// | 8 | 0.9847 / 6.45 / 8.50 | |
///
/// (`--set live.hook_in_behind=N`; the 200-viewer runs also `--set
/// live.duration=180s --set duration=195s --set peers.viewers.count=200`.)
/// Continuity does not suffer and the lag's tail falls by 2 s at 200
/// viewers: the newcomers' backlog is load on the flash crowd's spare
/// upload (delivery p95 2.89 s with 4 behind, 2.70 s with 2, 2.53 s with 0).
/// `live-500` itself (500 viewers, 10 min, seed 1), 4 against 0: 0.9952 /
/// 4.35 / 6.14 against 0.9939 / 4.41 / 5.14, the start lag's median 8.6
/// against 6.6 s; its stalls are bursts on a few munros mid-run, which
/// the hook-in does not touch and one seed cannot tell apart.
fn default_hook_in() -> u64 {
    0
}
fn default_algorithm() -> String {
    "ecdsa-p256".into()
}

/// A live stream.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LiveSpec {
    /// The stream's bitrate: the source makes a chunk every
    /// `chunk_size · 8 / bitrate` seconds.
    pub bitrate: Bitrate,
    /// How long the source streams from its arrival (default: until the
    /// run ends). Rounded down to whole munros: only signed munros are
    /// ever announced (§6.1.2.3).
    #[serde(default)]
    pub duration: Option<Dur>,
    /// The live discard window in media time (§6.1.3; HANDSHAKE option 7),
    /// rounded up to whole munros: what every peer keeps and serves.
    #[serde(default = "default_window")]
    pub window: Dur,
    /// How many munros before the newest one a joining viewer hooks in
    /// (default 0: at the newest, see `default_hook_in` for the scan).
    #[serde(default = "default_hook_in")]
    pub hook_in_behind: u64,
    /// The source's signature algorithm (§6.1; DNSSEC numbers, §12.1):
    /// `ecdsa-p256` (13, the default) or `ed25519` (15).
    #[serde(default = "default_algorithm")]
    pub algorithm: String,
    /// The share of each segment of fresh chunks the source announces to
    /// each unchoked viewer at once, the rest a moment later
    /// (`EndpointConfig::live_source_spread`); unset, the node's default.
    #[serde(default)]
    pub source_spread: Option<f64>,
}

impl LiveSpec {
    /// The signature algorithm named, if known.
    pub fn signature_algorithm(&self) -> Option<LiveSignatureAlgorithm> {
        algorithm_by_name(&self.algorithm)
    }
}

/// The live signature algorithms a scenario may name.
pub fn algorithm_by_name(name: &str) -> Option<LiveSignatureAlgorithm> {
    match name {
        "ecdsa-p256" | "p256" => Some(LiveSignatureAlgorithm::ECDSAP256SHA256),
        "ed25519" => Some(LiveSignatureAlgorithm::ED25519),
        _ => None,
    }
}

/// What is wrong with a live scenario, and a hint.
pub(super) type Problem = (String, &'static str);

/// Checks the `[live]` table against the rest of the scenario.
pub(super) fn check(s: &Scenario, live: &LiveSpec) -> Result<(), Problem> {
    if live.bitrate.0 == 0 {
        return Err(("live.bitrate must be above 0".into(), "e.g. \"1Mbit/s\""));
    }
    if live.signature_algorithm().is_none() {
        return Err((
            format!("live.algorithm: unknown algorithm '{}'", live.algorithm),
            "ecdsa-p256 or ed25519",
        ));
    }
    if live
        .source_spread
        .is_some_and(|x| !(0.0..=1.0).contains(&x))
    {
        return Err((
            "live.source_spread must be from 0 to 1".into(),
            "e.g. 0.5: each viewer hears of half of a segment first",
        ));
    }
    if live.window.0.is_zero() {
        return Err(("live.window must be above 0".into(), "30s is the default"));
    }
    if s.content.size.0 != 0 {
        return Err((
            "a live stream has no size: remove content.size".into(),
            "the stream's length is live.duration",
        ));
    }
    let sources: u32 = s
        .peers
        .iter()
        .map(|g| g.get_ref())
        .filter(|g| g.role == Role::Seeder)
        .map(|g| g.count)
        .sum();
    if sources != 1 {
        return Err((
            format!("a live stream has one source; the scenario has {sources} seeders"),
            "one [[peers]] group with role = \"source\" and count = 1",
        ));
    }
    for g in s.peers.iter().map(|g| g.get_ref()) {
        check_viewer(g, live)?;
    }
    Ok(())
}

fn check_viewer(g: &PeerGroup, live: &LiveSpec) -> Result<(), Problem> {
    let Some(p) = &g.player else {
        return Ok(());
    };
    if p.bitrate.0 != live.bitrate.0 {
        return Err((
            format!(
                "peer group '{}': a live player plays at the stream's bitrate ({} bit/s), not {}",
                g.name, live.bitrate.0, p.bitrate.0
            ),
            "give the player live.bitrate",
        ));
    }
    if p.seek.is_some() {
        return Err((
            format!("peer group '{}': live viewers do not seek", g.name),
            "remove `seek`",
        ));
    }
    Ok(())
}
