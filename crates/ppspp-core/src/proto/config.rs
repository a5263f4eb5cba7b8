//! Configuration of an [`super::Endpoint`] and its swarms.

use std::time::Duration;

use super::choke::Choking;
use super::turns::UploadScheduling;
use crate::cc::CongestionControl;

/// How we handshake with peers whose implementation we do not know.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compat {
    /// Offer the full RFC 7574 option set (supported messages, chunk size);
    /// when such a handshake goes unanswered twice, retry without options 8
    /// and 9, which libswift drops handshakes for (wire notes, interop
    /// profile).
    #[default]
    Auto,
    /// Always the full option set.
    Rfc,
    /// Never send options 8 and 9 (talking to libswift).
    Libswift,
}

// The progress trigger's defaults (see `proto/checkpoint.rs`), from a scan
// with `bench/kill_resume.py` (100 and 400 MiB at 25 MB/s on loopback, 1 KiB
// chunks, SIGKILL after U(0.2, 4) s, up to 30 kills, 2 RNG seeds; bytes the
// seeder sent / file size, mean) and `bench/checkpoint_cost.py` (checkpoint
// bytes written over a whole download / content size, from the measured
// 21.5 bytes per verified KiB of SHA-1 content):
//
//   first, growth, cap     kill ratio 100 / 400 MiB   writes 100 MiB / 1 GiB
//   time only (5 s)        15.0 / -                   -
//   4 MiB fixed            1.06 / 1.07                28 % / 276 %
//   16 MiB fixed           1.15 / 1.24                 9 % /  67 %
//   1 MiB, 25 %, no cap    1.08 / 2.14                11 % /  11 %
//   1 MiB, 50 %, no cap    1.22 / 3.5 (30 kills)       7 % /   7 %
//   1 MiB, 25 %, 16 MiB    1.10 / 1.23                12 % /  71 %
//   1 MiB, 25 %, 32 MiB    1.08 / 1.48                12 % /  37 %
//
// Uncapped growth loses a quarter of what is stored per kill, and every
// restart also re-hashes what its checkpoint claims, so a large file under
// kills every few seconds barely gains; a fixed step writes quadratically
// much. 32 MiB keeps both goals (below 2x, overhead a fraction of the
// content up to about 1 GiB); past that only an incremental checkpoint
// format would. One noisy 2-core machine: treat the figures as rough.

/// Default of [`EndpointConfig::checkpoint_bytes`] (the scan above).
pub const CHECKPOINT_BYTES: u64 = 1 << 20;
/// Default of [`EndpointConfig::checkpoint_growth_percent`].
pub const CHECKPOINT_GROWTH_PERCENT: u32 = 25;
/// Default of [`EndpointConfig::checkpoint_max_bytes`].
pub const CHECKPOINT_MAX_BYTES: u64 = 32 << 20;

/// Limits and timers of an endpoint. The defaults suit the open Internet;
/// the lab shortens or lengthens them per scenario.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// Handshake compatibility mode.
    pub compat: Compat,
    /// Microseconds from the Unix epoch to the driver's [`Instant::ZERO`]:
    /// DATA timestamps are sent as wall-clock µs since the Unix epoch,
    /// because libswift reads them so and sizes its requests on `now −
    /// timestamp` (wire notes, interop profile). The core's own clock
    /// stays the driver's; only the wire sees this offset. The UDP driver
    /// sets the real one, the simulator one per peer (clock offsets
    /// between peers).
    ///
    /// [`Instant::ZERO`]: crate::time::Instant::ZERO
    pub wall_clock_offset: u64,
    /// Largest datagram we send (bytes of UDP payload); a datagram always has
    /// room for one DATA of a whole chunk with its headers.
    pub max_datagram: usize,
    /// Most channels per swarm whose handshake is complete or ours;
    /// further handshakes are refused. Handshakes peers open to us count
    /// here only once complete (see [`EndpointConfig::max_half_open_per_swarm`]).
    pub max_peers_per_swarm: usize,
    /// A full live swarm lets a newcomer in by closing the channel to the
    /// neighbour that gave it least, instead of refusing it (at most one
    /// a `MAKE_ROOM_EVERY`; `proto/endpoint/make_room.rs` says why).
    pub make_room_live: bool,
    /// Most half-open channels per swarm: handshakes we answered whose
    /// initiator has not yet sent the third datagram that proves its
    /// address (RFC 7574 §8.4). They have their own small budget, as TCP's
    /// SYN cache does: a flood of handshakes from spoofed addresses that
    /// never complete must not fill [`EndpointConfig::max_peers_per_swarm`]
    /// and lock out honest newcomers. When it is full, a new handshake
    /// evicts the oldest half-open channel if that has waited a second (an
    /// honest initiator completes within a round trip), and is refused
    /// otherwise: a flash crowd beyond the budget is refused, and knows it,
    /// rather than evicted after our answer.
    pub max_half_open_per_swarm: usize,
    /// How long a half-open channel waits for the initiator's third
    /// datagram. It covers an initiator's first three handshake tries (at
    /// 0, 1 and 3 s with [`EndpointConfig::handshake_retry`] of 1 s; each
    /// retransmission is answered again); libswift waited 32 s, which let
    /// 70 spoofed handshakes every 20 s keep a swarm full.
    pub half_open_timeout: Duration,
    /// Most channels in all swarms.
    pub max_channels: usize,
    /// Send a keep-alive after this long without sending anything
    /// (libswift: at most every 58 s).
    pub keepalive_interval: Duration,
    /// How long HAVEs for newly verified chunks may wait for a datagram to
    /// ride on before they get one of their own. RFC 7574 §3.2 leaves the
    /// timing of HAVE open; one datagram per chunk per peer would cost a
    /// 1 Mbit/s uplink over a tenth of its capacity in a swarm of 50. Zero
    /// sends them at once.
    pub have_interval: Duration,
    /// [`EndpointConfig::have_interval`] for live swarms (RFC 7574 §6.1),
    /// whose chunks are due within seconds of being made: each hop's HAVE
    /// wait adds to every viewer's delay behind the source. Scanned
    /// (issue 24) over `live-small` (20 viewers, 60 s, 5 seeds) and
    /// `live-500` at 200 viewers (60 s, seed 1), 500 → 100 ms: delivery
    /// (chunk made → verified at a viewer) p50/p95 1.32/2.83 → 1.02/2.49 s
    /// and 2.77/5.04 → 2.21/3.97 s, continuity 0.9951 → 0.9944 and
    /// 0.9885 → 0.9895, for 39 % more datagrams and 3.3 % more bytes on
    /// the viewers' uplinks. 250 ms did worse than both on `live-small`
    /// (0.9525) and 50 ms no better than 100 (0.9865); see the issue note.
    pub live_have_interval: Duration,
    /// At a live source (RFC 7574 §6.1): the share of each segment of
    /// fresh chunks that each unchoked peer hears of at once; the rest it
    /// hears of a moment later, so that every chunk leaves the source
    /// about equally often (`channel/announce/spread.rs`). 0 or 1: every
    /// chunk to everyone at once.
    ///
    /// Scanned (issue 24; `--set live.source_spread=X`), means over seeds
    /// of continuity / lag p50 / lag p95 / source upload × / delivery p95
    /// / stalls per viewer:
    ///
    /// | share | `live-small`, seeds 1-8 | `live-500` at 200 viewers, 180 s, seeds 1-3 |
    /// |---|---|---|
    /// | 0 (off) | 0.9998 / 3.18 / 3.83 / 4.24 / 1.26 / 0.01 | 0.9979 / 4.07 / 5.07 / 4.43 / 2.52 / 0.35 |
    /// | 0.5 | 0.9998 / 2.92 / 3.63 / 3.52 / 1.20 / 0.01 | 0.9980 / 3.78 / 5.07 / 4.35 / 2.23 / 0.15 |
    /// | 0.625 | 0.9980 / 3.05 / 3.97 / 4.03 / 1.37 / 0.09 | 0.9992 / 3.85 / 4.95 / 4.37 / 2.27 / 0.14 |
    ///
    /// (The 200-viewer means of continuity are set by two or three late
    /// joiners per run that stall for 15-40 s, with or without.) `live-500`
    /// itself, 500 viewers for 10 minutes, seed 1, off against 0.5:
    /// continuity 0.9939 / 0.9991, lag p50 4.41 / 3.89 s, lag p95 5.14 /
    /// 4.61 s, source 4.48× both, stalls per viewer 6.04 / 0.91, munros
    /// that made 50 or more viewers stall 17 / 1; seed 2, off against
    /// 0.625: 0.9873 / 0.9989, 4.45 / 3.98 s, 6.96 / 4.54 s, 4.48× / 4.49×,
    /// 10.48 / 1.20 stalls, 31 / 3 such munros. 0.5 is the better of the
    /// two on `live-small`; 0.375 was not scanned, nor the hold. At 0.5,
    /// seeds 2 and 3: 0.9992 / 0.9989, lag p50 3.89 / 3.91 s, p95 4.48 /
    /// 4.44 s, 4.48× both, stalls 0.47 / 0.95 per viewer.
    pub live_source_spread: f64,
    /// A peer that sent nothing for this long while we sent it at least
    /// [`EndpointConfig::dead_datagrams`] datagrams is dead (RFC 7574 §8.15: 3 minutes).
    pub dead_timeout: Duration,
    /// See [`EndpointConfig::dead_timeout`] (RFC 7574: 3 datagrams).
    pub dead_datagrams: u32,
    /// First handshake retransmission delay; doubles per attempt.
    pub handshake_retry: Duration,
    /// Handshake attempts before giving up on a peer.
    pub handshake_attempts: u32,
    /// Upload slots per swarm: peers served at once; the rest are choked
    /// and take turns (see [`Choking`]). 0 serves everyone.
    pub upload_slots: usize,
    /// Who of the interested peers we serve (`proto/choke`).
    pub choking: Choking,
    /// How requesting peers share our upload (`proto/turns`). FIFO (the
    /// default): they take turns of one datagram each. WFQ: weighted fair
    /// queuing (seed paper 000 §III-B) — a peer's turn lasts as many
    /// datagrams as it has requested chunks queued with us (up to
    /// [`MAX_UPLOAD_TURN`](super::MAX_UPLOAD_TURN)), so under an upload
    /// limit each peer's requests wait in proportion to how many it has
    /// outstanding, and a peer that asks for less is served sooner.
    pub upload_scheduling: UploadScheduling,
    /// Most separate chunk ranges a peer may have queued in its requests to
    /// us (bounded memory per peer; a range costs the same whatever its
    /// length, so one request for the whole content always fits). A
    /// request beyond voids the peer's requests with CHOKE and UNCHOKE, and
    /// it asks again (RFC 7574 §3.9). Our own downloads keep at most
    /// [`EndpointConfig::max_requests_per_peer`] chunks requested, so they
    /// never reach it.
    pub max_upload_queue_ranges: usize,
    /// Most chunks we keep requested from one peer, whatever the window.
    pub max_requests_per_peer: u64,
    /// A requested chunk counts as lost once the peer answered this many
    /// chunks asked after it (peers serve requests in order), and is asked
    /// again at once instead of after the request timeout (TCP's DupThresh,
    /// RFC 5681 §3.2). 0 waits for the timeout.
    ///
    /// Scanned on `live-500` at 200 viewers for 60 s (seeds 1-3; mean
    /// continuity, then per seed): 1: 0.983 (0.991 / 0.975 / 0.982), 3:
    /// 0.984 (0.989 / 0.978 / 0.985), 6: 0.984 (0.995 / 0.968 / 0.988);
    /// 0 (the timeout only) gave 0.984 on seed 1. Flat within the seeds'
    /// spread, so TCP's 3 stays.
    pub loss_threshold: u64,
    /// ACK once this many chunks from a peer wait to be acknowledged
    /// (delayed ACKs, as TCP's every second segment, RFC 1122 §4.2.3.2,
    /// RFC 5681 §4.2); 1, the default, acknowledges each chunk at once.
    /// Waiting ACKs still ride on any datagram that goes to the peer, go at
    /// once when nothing more is asked of the peer, and wait at most
    /// [`EndpointConfig::ack_delay`]. RFC 7574 §3.6 lets one ACK cover a
    /// range of chunks, and LEDBAT grows by the bytes acknowledged (RFC
    /// 6817 §2.4.2), so the sender's window grows the same.
    ///
    /// An ACK datagram is about 49 bytes with its UDP/IP headers, 5 % of a
    /// 1 KiB chunk, and it goes up the downloader's own uplink. Scanned in
    /// issue 26 (10 ms delay; seed 1 unless said; E4's ppspp clients next
    /// to the video call, `bench/e4.py p2p`):
    ///
    /// | ack_every | 1 | 2 | 4 |
    /// |---|---|---|---|
    /// | E4, 1 client: download Mbit/s / call drops % | 11.8 / 0.31 | 16.9 / 0.45 | 21.9 / 0.74 |
    /// | E4, 3 clients: download Mbit/s / call drops % | 14.4 / 1.27 | 21.1 / 1.54 | — |
    /// | E2 flash crowd, 4 / 16 leechers: mean completion s | 72.85 / 77.89 | 72.55 / 77.73 | 72.50 / 77.67 |
    /// | E1 32 viewers, buffer-vod, seeds 1-4: stalls / stall s | 0.64 / 4.44 | 0.63 / 4.12 | |
    /// | E1 32 viewers, std-vod, seeds 1-4 | 0.56 / 4.17 | 0.61 / 4.48 | |
    /// | E1 96 viewers, buffer-vod, seeds 1-4 | 1.62 / 18.01 | 1.88 / 17.78 | |
    /// | E1 96 viewers, std-vod, seeds 1-4 | 2.45 / 19.38 | 2.41 / 18.12 | |
    ///
    /// A line whose uplink holds the download back downloads much faster,
    /// and spends the freed uplink on more download: the call next to it
    /// loses more, not less. E2 gains 0.2-0.4 %; in E1's many-peer swarms
    /// a channel's chunks come more than 10 ms apart and few ACKs merge
    /// (3-6 % fewer), and buffer-vod stalled 0.26 more per viewer at 96
    /// viewers (2.4 standard errors over 4 seeds). So the default stays 1,
    /// and a node on a thin uplink can set 2.
    pub ack_every: u64,
    /// The longest an ACK waits for [`EndpointConfig::ack_every`] chunks.
    pub ack_delay: Duration,
    /// Upload limit in bytes per second over all swarms (payload and
    /// headers of DATA); `None` for no limit.
    pub upload_limit: Option<u64>,
    /// Download limit in bytes per second, enforced by requesting no faster.
    pub download_limit: Option<u64>,
    /// How often a downloading swarm checkpoints its progress to storage
    /// (at least; see [`CheckpointPolicy`](super::CheckpointPolicy)).
    pub checkpoint_interval: Duration,
    /// A checkpoint is also due once this many bytes verified since the
    /// last one (so the first comes early), or
    /// [`EndpointConfig::checkpoint_growth_percent`] of what was stored at
    /// the last one if more. 0 checkpoints by time only.
    pub checkpoint_bytes: u64,
    /// See [`EndpointConfig::checkpoint_bytes`]: the step grows with what
    /// is stored, because a checkpoint's cost does...
    pub checkpoint_growth_percent: u32,
    /// ...up to this many bytes, because a kill loses up to a step.
    pub checkpoint_max_bytes: u64,
    /// Most addresses in one answer to PEX_REQ.
    pub pex_max_addresses: usize,
    /// Connect to addresses learned through PEX automatically.
    pub pex_auto_connect: bool,
    /// Open channels to PEX-learned peers only while the swarm has fewer
    /// than this many. The rest of `max_peers_per_swarm` stays free for
    /// peers that connect to us: if every peer filled all its places
    /// itself, a newcomer would be refused everywhere (BitTorrent clients
    /// keep the same split between outgoing and incoming connections).
    pub pex_connect_limit: usize,
    /// Send the INTEGRITY messages for a burst of DATA in one datagram ahead
    /// of it, so that the DATA datagrams are all one size and the driver can
    /// batch them (GSO). RFC 7574 §5.3 allows hashes in earlier datagrams;
    /// a lost hash datagram only costs its chunks a re-request. Off in
    /// libswift mode, whose handling of it is untested.
    pub integrity_ahead: bool,
    /// The congestion controller for DATA we send, one per channel.
    pub congestion: CongestionControl,
    /// The controller bounding the bytes we have requested from one peer
    /// and not yet received (receiver-driven, RFC 9840 style).
    pub request_congestion: CongestionControl,
}

impl Default for EndpointConfig {
    fn default() -> Self {
        EndpointConfig {
            compat: Compat::Auto,
            wall_clock_offset: 0,
            max_datagram: 1472,
            max_peers_per_swarm: 64,
            make_room_live: true,
            max_half_open_per_swarm: 16,
            half_open_timeout: Duration::from_secs(8),
            max_channels: 1024,
            keepalive_interval: Duration::from_secs(30),
            have_interval: Duration::from_millis(500),
            live_have_interval: Duration::from_millis(100),
            live_source_spread: 0.5,
            dead_timeout: Duration::from_secs(180),
            dead_datagrams: 3,
            handshake_retry: Duration::from_secs(1),
            handshake_attempts: 5,
            upload_slots: 0,
            choking: Choking::default(),
            upload_scheduling: UploadScheduling::default(),
            max_upload_queue_ranges: 4096,
            max_requests_per_peer: 2048,
            loss_threshold: 3,
            ack_every: 1,
            ack_delay: Duration::from_millis(10),
            upload_limit: None,
            download_limit: None,
            checkpoint_interval: Duration::from_secs(5),
            checkpoint_bytes: CHECKPOINT_BYTES,
            checkpoint_growth_percent: CHECKPOINT_GROWTH_PERCENT,
            checkpoint_max_bytes: CHECKPOINT_MAX_BYTES,
            pex_max_addresses: 32,
            pex_auto_connect: true,
            pex_connect_limit: 32,
            integrity_ahead: true,
            congestion: CongestionControl::default(),
            request_congestion: CongestionControl::default(),
        }
    }
}

impl EndpointConfig {
    /// How long a channel's new HAVEs wait for a datagram to ride on, in a
    /// live swarm or not.
    pub fn have_interval_for(&self, live: bool) -> Duration {
        if live {
            self.live_have_interval
        } else {
            self.have_interval
        }
    }
}
