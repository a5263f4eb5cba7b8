//! Peer groups that run BitTorrent instead of ppspp: the
//! `bittorrent = { ... }` table of a `[[peers]]` group, its checks, and
//! the peer configuration it makes.

use serde::Deserialize;

use super::spec::{PeerGroup, Role};
use super::value::{Bytes, Dur};
use super::Scenario;
use crate::bt::{BtConfig, Disposition};
use crate::traffic::TcpCc;

/// A group's BitTorrent settings; every key may be left out.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BtGroupSpec {
    /// uTorrent's `bt.transp_disposition` bitmask (1 out-TCP, 2 out-uTP,
    /// 4 in-TCP, 8 in-uTP, 16 new header); default 31.
    #[serde(default)]
    pub disposition: Option<u8>,
    /// Unchoke slots, the optimistic one included; default 4.
    #[serde(default)]
    pub slots: Option<usize>,
    /// TCP congestion control: `"cubic"` (default: seed 001's Linux hosts)
    /// or `"newreno"`.
    #[serde(default)]
    pub tcp_cc: Option<TcpCc>,
    /// Piece size; default 256 KiB (a multiple of the 16 KiB block).
    #[serde(default)]
    pub piece_size: Option<Bytes>,
    /// uTP's target queueing delay (uTorrent's `net.utp_target_delay`);
    /// default 100 ms, seed 001 also tries 25 ms.
    #[serde(default)]
    pub utp_target: Option<Dur>,
    /// TCP's receive window, which caps what a sender has in flight;
    /// default: unbounded. Seed paper 003 ran ns-2, whose TCP agents
    /// keep at most `window_` = 20 packets in flight by default.
    #[serde(default)]
    pub tcp_window: Option<Bytes>,
}

impl BtGroupSpec {
    /// The peer configuration.
    pub fn config(&self) -> BtConfig {
        let mut c = BtConfig::default();
        if let Some(d) = self.disposition {
            c.disposition = Disposition(d);
        }
        if let Some(s) = self.slots {
            c.slots = s;
        }
        if let Some(cc) = self.tcp_cc {
            c.tcp.cc = cc;
        }
        if let Some(p) = self.piece_size {
            c.piece_len = p.0 as u32;
        }
        if let Some(t) = self.utp_target {
            c.utp_target = t.0;
        }
        if let Some(w) = self.tcp_window {
            c.tcp.window = Some(w.0);
        }
        c
    }
}

/// Why a BitTorrent group is refused: (message, hint).
pub fn check(s: &Scenario, g: &PeerGroup, bt: &BtGroupSpec) -> Result<(), (String, &'static str)> {
    let name = &g.name;
    let refuse =
        |what: &str, hint: &'static str| Err((format!("peer group '{name}' {what}"), hint));
    if s.live.is_some() {
        return refuse(
            "runs BitTorrent in a live scenario",
            "BitTorrent swarms share files: remove [live] or the group's `bittorrent`",
        );
    }
    if g.role == Role::Host {
        return refuse(
            "is a plain host and runs BitTorrent",
            "make it a seeder or leecher",
        );
    }
    if g.player.is_some() || g.algorithm.is_some() || g.upload_limit.is_some() {
        return refuse(
            "runs BitTorrent with ppspp settings (player, algorithm or upload_limit)",
            "BitTorrent peers take only the keys of their `bittorrent` table",
        );
    }
    if bt.disposition.is_some_and(|d| d > 31) {
        return refuse("has a disposition above 31", "a sum of 1, 2, 4, 8 and 16");
    }
    if bt.utp_target.is_some_and(|t| t.0.is_zero()) {
        return refuse("has a uTP target of zero", "utp_target = \"100ms\"");
    }
    if bt.tcp_window.is_some_and(|w| w.0 < 1460) {
        return refuse(
            "has a TCP window smaller than one segment",
            "tcp_window = \"29200B\" is 20 segments",
        );
    }
    if bt.slots == Some(0) {
        return refuse("has no unchoke slot", "slots = 4 is mainline's");
    }
    let block = u64::from(BtConfig::default().block_len);
    if let Some(p) = bt.piece_size {
        if p.0 == 0 || p.0 % block != 0 || p.0 > 1 << 24 {
            return refuse(
                "has a piece size that is not a multiple of 16 KiB up to 16 MiB",
                "piece_size = \"256KiB\"",
            );
        }
    }
    Ok(())
}
