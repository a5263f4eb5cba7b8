//! The scenario file's shape (TOML). Every table refuses keys it does not
//! know, so a typo is an error, not a silent default.

use std::collections::BTreeMap;

use ppspp_core::cc::CongestionControl;
use ppspp_core::pick::{self, PickerKind};
use ppspp_core::proto::{Choking, UploadScheduling};
use serde::Deserialize;
use toml::Spanned;

use super::value::{by_name, by_name_opt, Bitrate, Bytes, Dur, Probability, Queue};

fn default_seed() -> u64 {
    1
}
fn yes() -> bool {
    true
}
fn default_chunk_size() -> Bytes {
    Bytes(1024)
}
fn default_hash() -> String {
    "sha1".into()
}
fn default_queue() -> Queue {
    Queue::Time(std::time::Duration::from_secs(1))
}
fn one() -> u32 {
    1
}
fn default_tracker_peers() -> usize {
    5
}
fn default_interval() -> Dur {
    Dur(std::time::Duration::from_secs(1))
}

/// A whole experiment.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short name (used in folder names and reports).
    pub name: String,
    /// What the experiment shows.
    #[serde(default)]
    pub description: String,
    /// The experiment seed every random stream derives from.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Virtual time limit.
    pub duration: Dur,
    /// End as soon as every leecher has completed or left and no arrival
    /// is pending.
    #[serde(default = "yes")]
    pub stop_when_done: bool,
    /// A run in which no leecher completes is a valid outcome (e.g. a
    /// study of startup cut short on purpose); without it, `lab run` says
    /// so and fails, since it usually means a scenario mistake.
    #[serde(default)]
    pub allow_incomplete: bool,
    /// The content every peer fetches.
    pub content: Content,
    /// A live stream instead of static content (`[live]`).
    #[serde(default)]
    pub live: Option<super::live::LiveSpec>,
    /// How peers find each other.
    #[serde(default)]
    pub swarm: SwarmSpec,
    /// Delay groups and the core delays between them.
    #[serde(default)]
    pub network: NetworkSpec,
    /// Access-link classes by name.
    pub classes: BTreeMap<String, Spanned<Class>>,
    /// Sites (access routers with a shared uplink) by name.
    #[serde(default)]
    pub sites: BTreeMap<String, Spanned<Site>>,
    /// Groups of peers.
    pub peers: Vec<Spanned<PeerGroup>>,
    /// Cross-traffic flows between hosts.
    #[serde(default)]
    pub flows: Vec<Spanned<Flow>>,
    /// What to record beyond the defaults.
    #[serde(default)]
    pub record: Record,
}

/// Synthetic content.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Content {
    /// Bytes (required, except for a live stream, which has none).
    #[serde(default)]
    pub size: Bytes,
    /// Bytes per chunk.
    #[serde(default = "default_chunk_size")]
    pub chunk_size: Bytes,
    /// Merkle hash function.
    #[serde(default = "default_hash")]
    pub hash: String,
}

/// Peer discovery.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwarmSpec {
    /// Peers (besides seeders) a joining peer is told of, chosen at random
    /// among those present, as a tracker would; PEX finds the rest.
    #[serde(default = "default_tracker_peers")]
    pub tracker_peers: usize,
    /// Most channels a peer keeps in the swarm; it opens channels to peers
    /// learned through PEX only up to half of it, leaving the rest for
    /// peers that connect to it.
    #[serde(default)]
    pub max_peers: Option<usize>,
    /// How often a leecher with fewer channels than `tracker_peers` asks
    /// the tracker again (a newcomer refused by full peers is not stranded).
    #[serde(default = "default_reannounce")]
    pub reannounce: Dur,
    /// How long after a peer leaves the tracker stops naming it: the
    /// one-way trip of the peer's last announce. Must be above zero (the
    /// simulator's partitions run at most this far apart).
    #[serde(default = "default_tracker_notice")]
    pub tracker_notice: Dur,
    /// How long a verified chunk's HAVE may wait for a datagram to ride on
    /// before it gets one of its own (`EndpointConfig::have_interval`, or
    /// `live_have_interval` for a live stream); unset, the node's default.
    #[serde(default)]
    pub have_interval: Option<Dur>,
    /// How many later chunks a peer must answer before a request it passed
    /// over counts as lost and is asked again (`EndpointConfig::
    /// loss_threshold`; 0 waits for the request timeout); unset, the
    /// node's default.
    #[serde(default)]
    pub loss_threshold: Option<u64>,
    /// ACK once this many chunks from a peer wait (`EndpointConfig::
    /// ack_every`; 1 or 0 acknowledges each chunk); unset, the node's default.
    #[serde(default)]
    pub ack_every: Option<u64>,
    /// The longest an ACK waits for them (`EndpointConfig::ack_delay`);
    /// unset, the node's default.
    #[serde(default)]
    pub ack_delay: Option<Dur>,
}

fn default_reannounce() -> Dur {
    Dur(std::time::Duration::from_secs(15))
}

fn default_tracker_notice() -> Dur {
    Dur(std::time::Duration::from_millis(50))
}

impl Default for SwarmSpec {
    fn default() -> Self {
        SwarmSpec {
            tracker_peers: default_tracker_peers(),
            max_peers: None,
            reannounce: default_reannounce(),
            tracker_notice: default_tracker_notice(),
            have_interval: None,
            loss_threshold: None,
            ack_every: None,
            ack_delay: None,
        }
    }
}

/// Delay groups.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkSpec {
    /// Group names; a class names its group.
    #[serde(default)]
    pub groups: Vec<String>,
    /// One-way core delay `[from][to]` between groups.
    #[serde(default)]
    pub delay: Vec<Vec<Dur>>,
}

/// Random loss of a link.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "kebab-case")]
pub enum LossSpec {
    /// Independent loss.
    Bernoulli {
        /// Loss probability per packet.
        p: Probability,
    },
    /// Bursty loss (Gilbert–Elliott).
    GilbertElliott {
        /// Good → bad, per packet.
        p_good_to_bad: Probability,
        /// Bad → good, per packet.
        p_bad_to_good: Probability,
        /// Loss in the good state.
        #[serde(default)]
        loss_good: Option<Probability>,
        /// Loss in the bad state.
        loss_bad: Probability,
    },
}

/// One direction of an access link.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Class {
    /// Upload capacity.
    pub up: Bitrate,
    /// Download capacity.
    pub down: Bitrate,
    /// Queue limit of both directions.
    #[serde(default = "default_queue")]
    pub queue: Queue,
    /// One-way propagation delay of the access link (each direction).
    #[serde(default)]
    pub delay: Option<Dur>,
    /// With it, each host's access delay is drawn once, uniformly between
    /// `delay` (default 0) and this: hosts of one class at different
    /// distances, as seed paper 003's links of 1-50 ms. Per host, not per
    /// packet (that is `jitter`).
    #[serde(default)]
    pub delay_max: Option<Dur>,
    /// Random extra delay up to this (never reordering).
    #[serde(default)]
    pub jitter: Option<Dur>,
    /// Random loss on the uplink (packets leaving the host).
    #[serde(default)]
    pub loss: Option<LossSpec>,
    /// Delay group (default: the first).
    #[serde(default)]
    pub group: Option<String>,
    /// The site the hosts sit behind, if any.
    #[serde(default)]
    pub site: Option<String>,
}

/// An access router: its shared uplink and downlink.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Site {
    /// Uplink capacity.
    pub up: Bitrate,
    /// Downlink capacity.
    pub down: Bitrate,
    /// Queue limit of both directions.
    #[serde(default = "default_queue")]
    pub queue: Queue,
    /// Propagation delay of each direction.
    #[serde(default)]
    pub delay: Option<Dur>,
    /// The site this one sits in (an aggregation router above access
    /// routers), if any.
    #[serde(default)]
    pub parent: Option<String>,
}

/// What a peer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// Has the content from the start; in a live scenario, the source
    /// (`role = "source"` reads the same).
    #[serde(alias = "source")]
    Seeder,
    /// Fetches it.
    Leecher,
    /// A plain host with no PPSPP peer (an end of cross traffic).
    Host,
}

/// What a cross-traffic flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowKind {
    /// A TCP bulk transfer (NewReno unless `cc` says otherwise).
    Tcp,
    /// A uTP bulk transfer (BEP 29, libutp's LEDBAT) aiming at `target`
    /// queueing delay.
    Utp,
    /// Constant-bit-rate UDP.
    Cbr,
    /// Pareto on/off UDP.
    ParetoOnOff,
}

/// A cross-traffic flow from one host to another.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    /// What it is.
    pub kind: FlowKind,
    /// Sending host: `"GROUP"` (its first) or `"GROUP[i]"`.
    pub from: String,
    /// Receiving host, same form.
    pub to: String,
    /// When it starts.
    #[serde(default)]
    pub start: Option<Dur>,
    /// When a UDP flow stops (exclusive).
    #[serde(default)]
    pub stop: Option<Dur>,
    /// Bytes a TCP or uTP flow transfers (default: until the end).
    #[serde(default)]
    pub bytes: Option<Bytes>,
    /// A TCP flow's congestion control: `"newreno"` (default) or
    /// `"cubic"` (RFC 9438).
    #[serde(default)]
    pub cc: Option<crate::traffic::TcpCc>,
    /// A TCP flow with SACK (RFC 2018 blocks, RFC 6675 recovery) at both
    /// ends; off by default.
    #[serde(default)]
    pub sack: Option<bool>,
    /// A TCP flow that opens with a SYN / SYN-ACK exchange, or a uTP flow
    /// with an ST_SYN / ST_STATE exchange (one round trip and two packets
    /// before data); off by default.
    #[serde(default)]
    pub handshake: Option<bool>,
    /// A uTP flow's target queueing delay (`target = "25ms"`); BEP 29's
    /// and libutp's 100 ms by default. Only on uTP flows.
    #[serde(default)]
    pub target: Option<Dur>,
    /// Rate of a CBR flow, burst rate of an on/off flow.
    #[serde(default)]
    pub rate: Option<Bitrate>,
    /// UDP packet size on the wire (default 1000 bytes).
    #[serde(default)]
    pub packet_size: Option<Bytes>,
    /// Mean ON time of an on/off flow.
    #[serde(default)]
    pub mean_on: Option<Dur>,
    /// Mean OFF time of an on/off flow.
    #[serde(default)]
    pub mean_off: Option<Dur>,
    /// Pareto shape of an on/off flow (default 1.5).
    #[serde(default)]
    pub shape: Option<f64>,
}

/// When the peers of a group arrive.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "kebab-case")]
pub enum Arrival {
    /// All at once at `at`, or spread uniformly over `[at, at + spread]`.
    Flash {
        /// First arrival.
        #[serde(default)]
        at: Option<Dur>,
        /// Width of the window.
        #[serde(default)]
        spread: Option<Dur>,
    },
    /// A Poisson process of `rate` arrivals per second from `start`.
    Poisson {
        /// Arrivals per second.
        rate: f64,
        /// When the process starts.
        #[serde(default)]
        start: Option<Dur>,
    },
    /// Explicit times, one per peer (the count must match).
    Times {
        /// Arrival times.
        times: Vec<Dur>,
    },
}

/// When the peers of a group leave.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, tag = "kind", rename_all = "kebab-case")]
pub enum Departure {
    /// Never.
    Stay,
    /// As soon as the download completes (plus `linger`).
    LeaveWhenDone {
        /// Time spent seeding after completion.
        #[serde(default)]
        linger: Option<Dur>,
    },
    /// At a fixed virtual time (as it arrives, if that is later): e.g. a
    /// seeder that leaves halfway through a run.
    At {
        /// When it leaves.
        time: Dur,
    },
    /// After a Weibull-distributed lifetime.
    Weibull {
        /// Shape k.
        shape: f64,
        /// Scale λ.
        scale: Dur,
    },
    /// After a log-normal lifetime: ln(seconds) ~ N(mu, sigma²).
    Lognormal {
        /// Mean of ln(seconds).
        mu: f64,
        /// Standard deviation of ln(seconds).
        sigma: f64,
    },
    /// After a Pareto lifetime.
    Pareto {
        /// Shape α.
        shape: f64,
        /// Scale (the minimum lifetime).
        scale: Dur,
    },
}

/// A group of peers alike.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerGroup {
    /// Name (unique).
    pub name: String,
    /// How many.
    #[serde(default = "one")]
    pub count: u32,
    /// Access-link class, or classes: a list spreads the group's peers
    /// over them in turn (peer `i` gets class `i mod n`), so one group
    /// can mix link kinds and still be sized by one `count`.
    pub class: ClassNames,
    /// Seeder or leecher.
    pub role: Role,
    /// Arrivals (default: all at time 0).
    #[serde(default)]
    pub arrival: Option<Arrival>,
    /// Departures (default: stay).
    #[serde(default)]
    pub departure: Option<Departure>,
    /// Piece picker by name (an unknown name is refused when the file is
    /// read, with the known ones); left out, see [`PeerGroup::picker`].
    #[serde(default, deserialize_with = "by_name_opt")]
    pub algorithm: Option<PickerKind>,
    /// std-vod's and swift-vod's high-priority set, in media time
    /// (default 10 s, seed paper 000 §IV-B); for the live picker, its
    /// urgent set (default [`pick::live::URGENT`]).
    #[serde(default)]
    pub high_window: Option<Dur>,
    /// Their mid-priority set, in media time (default 40 s).
    #[serde(default)]
    pub mid_window: Option<Dur>,
    /// Congestion controller of DATA sent, by name (default LEDBAT; an
    /// unknown name is refused when the file is read, with the known ones).
    #[serde(default, deserialize_with = "by_name")]
    pub congestion: CongestionControl,
    /// Application upload rate limit.
    #[serde(default)]
    pub upload_limit: Option<Bitrate>,
    /// Application download rate limit.
    #[serde(default)]
    pub download_limit: Option<Bitrate>,
    /// Upload slots (0: unchoke everyone).
    #[serde(default)]
    pub upload_slots: Option<usize>,
    /// Weighted fair queuing of uploads across requesters (seed paper 000
    /// §III-B) instead of plain turns: `upload_scheduling = "wfq"`.
    #[serde(default)]
    pub weighted_uploads: bool,
    /// How requesters share the upload, by name (`fifo`, `wfq`; default
    /// `fifo`, or `wfq` with `weighted_uploads = true`).
    #[serde(default, deserialize_with = "by_name_opt")]
    pub upload_scheduling: Option<UploadScheduling>,
    /// Who of the interested peers is served, by name (`rotation`,
    /// `unchoke-all`; default `rotation`).
    #[serde(default, deserialize_with = "by_name")]
    pub choking: Choking,
    /// How far the group's clocks run ahead of the lab's: DATA carries the
    /// sender's wall clock (RFC 7574 §8.6), so peers of groups with other
    /// offsets see one-way delays off by the difference, which LEDBAT's
    /// base delay cancels (RFC 6817 §3.4). Default 0.
    #[serde(default)]
    pub clock_offset: Option<Dur>,
    /// A viewer watching the content while it downloads (leechers only).
    #[serde(default)]
    pub player: Option<PlayerSpec>,
    /// Run BitTorrent instead of ppspp (`bittorrent = {}` for the
    /// defaults; keys in [`super::bittorrent::BtGroupSpec`]). Its peers
    /// form their own swarm, with the scenario's content and tracker.
    #[serde(default)]
    pub bittorrent: Option<super::bittorrent::BtGroupSpec>,
    /// The swarm the group's peers join, by name: the tracker names a
    /// peer only to peers of the same swarm (and the same protocol), so
    /// one scenario can hold several swarms of the same content side by
    /// side, e.g. seed paper 003's BitTorrent clients behind one access
    /// router, each in a swarm of its own. Groups without one share the
    /// scenario's swarm.
    #[serde(default)]
    pub swarm: Option<String>,
}

/// One class name, or several.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum ClassNames {
    /// Every peer of the group in this class.
    One(String),
    /// Peer `i` of the group in class `i mod n`.
    Many(Vec<String>),
}

impl PeerGroup {
    /// The group's piece picker: `algorithm`, else the streaming default
    /// ([`PickerKind::DEFAULT_VOD`], what `ppspp stream` uses) for viewers
    /// and rarest-first for the others.
    pub fn picker(&self) -> PickerKind {
        self.algorithm.unwrap_or(if self.player.is_some() {
            PickerKind::DEFAULT_VOD
        } else {
            PickerKind::RarestFirst
        })
    }

    /// The streaming pickers' windows: `high_window` and `mid_window`,
    /// each defaulting to [`pick::VodWindows::default`]'s.
    pub fn vod_windows(&self) -> pick::VodWindows {
        let defaults = pick::VodWindows::default();
        pick::VodWindows {
            high: self.high_window.map_or(defaults.high, |d| d.0),
            mid: self.mid_window.map_or(defaults.mid, |d| d.0),
        }
    }

    /// The group's upload scheduling policy: `upload_scheduling`, else
    /// WFQ with `weighted_uploads = true`; the two disagreeing is an error.
    pub fn upload_scheduling(&self) -> Result<UploadScheduling, ContradictoryUploads> {
        match (self.upload_scheduling, self.weighted_uploads) {
            (Some(UploadScheduling::Fifo), true) => Err(ContradictoryUploads),
            (Some(p), _) => Ok(p),
            (None, true) => Ok(UploadScheduling::Wfq),
            (None, false) => Ok(UploadScheduling::default()),
        }
    }
}

/// `weighted_uploads = true` beside `upload_scheduling = "fifo"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("weighted_uploads = true contradicts upload_scheduling = \"fifo\"")]
pub struct ContradictoryUploads;

impl ClassNames {
    /// The names, in turn order.
    pub fn names(&self) -> &[String] {
        match self {
            ClassNames::One(n) => std::slice::from_ref(n),
            ClassNames::Many(v) => v,
        }
    }

    /// The class of the group's `i`-th peer (`None` for an empty list).
    pub fn of(&self, i: usize) -> Option<&str> {
        let names = self.names();
        names.get(i % names.len().max(1)).map(String::as_str)
    }
}

fn default_buffer() -> Dur {
    Dur(std::time::Duration::from_secs(5))
}

/// A viewer's player (seed paper 000's player model, §IV-A).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerSpec {
    /// The media bitrate: playback consumes the content at this rate.
    pub bitrate: Bitrate,
    /// Media time buffered before playback starts (default 5 s).
    #[serde(default = "default_buffer")]
    pub prebuffer: Dur,
    /// Media time buffered before playback resumes after a stall (default
    /// 5 s: the paper's player resumes "once the buffer has been filled
    /// again").
    #[serde(default = "default_buffer")]
    pub rebuffer: Dur,
    /// Seeks to random positions (default: none), e.g.
    /// `seek = { per_minute = 0.5 }`.
    #[serde(default)]
    pub seek: Option<SeekSpec>,
    /// A live viewer lagging further behind the newest chunk it has skips
    /// ahead (default 10 s; live only).
    #[serde(default)]
    pub max_lag: Option<Dur>,
    /// A live viewer plays faster than real time while well buffered
    /// (default: never; live only), e.g.
    /// `catch_up = { rate = 1.2, above = "1s" }`.
    #[serde(default)]
    pub catch_up: Option<CatchUpSpec>,
}

/// A live player's catch-up rule (`live::player::CatchUp`): play at
/// `rate` × real time while more than `above` of media is buffered.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatchUpSpec {
    /// Playback rate while catching up: above 1, at most
    /// [`CatchUpSpec::MAX_RATE`].
    pub rate: f64,
    /// Media buffered ahead of the playhead above which it catches up.
    pub above: Dur,
}

impl CatchUpSpec {
    /// The fastest catch-up accepted: beyond 2× speech is hard to follow.
    pub const MAX_RATE: f64 = 2.0;

    /// The rate in thousandths of real time, when valid.
    pub fn rate_permille(&self) -> Option<u32> {
        let ok = self.rate > 1.0 && self.rate <= Self::MAX_RATE;
        // Rounded to a thousandth; 1.0004 rounds to real time, refused.
        let permille = (self.rate * 1000.0).round();
        (ok && permille > 1000.0).then_some(permille as u32)
    }
}

/// A viewer's seeks: a Poisson process of `per_minute` seeks per minute
/// of playback, each to a uniformly random position
/// ([`ppspp_core::play::SeekModel`]).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeekSpec {
    /// Seeks per minute of playback, above 0 and at most
    /// [`ppspp_core::play::MAX_SEEKS_PER_MINUTE`].
    pub per_minute: f64,
}

/// What to record beyond per-peer results and link counters.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    /// Links whose queue occupancy is sampled after every dequeue:
    /// `"GROUP.up"` / `"GROUP.down"` (the group's first peer) or
    /// `"site:NAME.up"`.
    #[serde(default)]
    pub queues: Vec<String>,
    /// Peer groups whose outgoing PPSPP bytes are sampled over time (in
    /// `rates.csv`, beside every cross-traffic flow).
    #[serde(default)]
    pub rates: Vec<String>,
    /// Swarm progress sampling interval.
    #[serde(default = "default_interval")]
    pub interval: Dur,
    /// Flows whose every packet's queueing delay is kept at one link (in
    /// `waits.csv`); one flow per link.
    #[serde(default)]
    pub waits: Vec<Spanned<WaitSpec>>,
    /// A start-up size: each leecher's time from joining until it held
    /// this many bytes (`startup_bytes_s` in `peers.csv`) — a ppspp peer
    /// from the start of the content on, in order, a BitTorrent peer
    /// anywhere in it, as seed paper 000 §IV-B counts its 11.4 MB
    /// (`"11.4MB"`; capped at the content's size).
    #[serde(default)]
    pub startup_bytes: Option<Bytes>,
}

/// One flow's per-packet queueing delays at one link.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaitSpec {
    /// The link, as in `record.queues`: `"GROUP[i].up"`, `"GROUP.down"`,
    /// `"site:NAME.up"`.
    pub link: String,
    /// The flow: `"flowN"` (the N-th `[[flows]]`, from 0) or
    /// `"peer:GROUP[i]"` (that peer's packets, ppspp or BitTorrent;
    /// `"ppspp:GROUP[i]"` also). A link may trace several flows.
    pub flow: String,
}

impl Default for Record {
    fn default() -> Self {
        Record {
            queues: Vec::new(),
            rates: Vec::new(),
            interval: default_interval(),
            waits: Vec::new(),
            startup_bytes: None,
        }
    }
}
