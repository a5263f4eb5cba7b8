//! What a BitTorrent peer of the lab is told: BEP 3's sizes, mainline's
//! choking, the request pipeline, and uTorrent's transport disposition.

use std::time::Duration;

use super::transport::TcpSetup;
use crate::traffic::TcpCc;

/// uTorrent's `bt.transp_disposition` bitmask: which transports a peer
/// opens connections over and accepts them on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Disposition(pub u8);

impl Disposition {
    /// Opens TCP connections.
    pub const OUT_TCP: u8 = 1;
    /// Opens uTP connections.
    pub const OUT_UTP: u8 = 2;
    /// Accepts TCP connections.
    pub const IN_TCP: u8 = 4;
    /// Accepts uTP connections.
    pub const IN_UTP: u8 = 8;
    /// Uses the new uTP header (every uTP here does; kept for the value).
    pub const NEW_HEADER: u8 = 16;
    /// uTorrent's default: everything, uTP preferred.
    pub const DEFAULT: Disposition = Disposition(31);

    /// Whether bit `bit` is set.
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// A BitTorrent peer's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct BtConfig {
    /// Bytes per piece (BEP 3 clients: 256 KiB for a 100 MB file).
    pub piece_len: u32,
    /// Bytes per block asked for (every mainstream client: 16 KiB).
    pub block_len: u32,
    /// Unchoke slots, the optimistic one included (mainline: 4).
    pub slots: usize,
    /// Between choking rounds (mainline: 10 s).
    pub choke_interval: Duration,
    /// Rounds between moves of the optimistic unchoke (3: 30 s).
    pub optimistic_every: u64,
    /// Seconds of the peer's rate to keep asked for (libtorrent's
    /// `request_queue_time`, 3 s), between `min_pipeline` and
    /// `max_pipeline` blocks.
    pub request_queue_time: Duration,
    /// Fewest requests kept out to an unchoking peer.
    pub min_pipeline: usize,
    /// Most requests kept out to one peer.
    pub max_pipeline: usize,
    /// Connections a peer keeps at most (uTorrent's per-torrent default:
    /// 50); it stops opening and refuses incoming ones beyond.
    pub max_peers: usize,
    /// Outgoing connections being opened at once (uTorrent's
    /// `net.max_halfopen`, 8); more wait their turn. Without a limit every
    /// peer of a flash crowd would fill its `max_peers` with attempts at
    /// once and refuse everyone else's.
    pub max_half_open: usize,
    /// A connection not open this long after it was started is given up
    /// (libtorrent's `peer_connect_timeout`: 15 s).
    pub connect_timeout: Duration,
    /// Bytes of piece data written ahead into a connection's send buffer
    /// (a watermark, as libtorrent's `send_buffer_watermark`), so a choke
    /// takes effect at once rather than after a long queue.
    pub send_ahead: u64,
    /// Transports opened and accepted.
    pub disposition: Disposition,
    /// How TCP connections run.
    pub tcp: TcpSetup,
    /// uTP's target queueing delay (uTorrent's `net.utp_target_delay`,
    /// 100 ms).
    pub utp_target: Duration,
}

impl Default for BtConfig {
    fn default() -> BtConfig {
        BtConfig {
            piece_len: 256 * 1024,
            block_len: 16 * 1024,
            slots: 4,
            choke_interval: Duration::from_secs(10),
            optimistic_every: 3,
            request_queue_time: Duration::from_secs(3),
            min_pipeline: 4,
            max_pipeline: 64,
            max_peers: 50,
            max_half_open: 8,
            connect_timeout: Duration::from_secs(15),
            send_ahead: 32 * 1024,
            disposition: Disposition::DEFAULT,
            tcp: TcpSetup {
                cc: TcpCc::Cubic,
                sack: true,
                ack_delay: Some(crate::traffic::DEFAULT_ACK_DELAY),
                window: None,
            },
            utp_target: crate::traffic::utp::DEFAULT_TARGET,
        }
    }
}
