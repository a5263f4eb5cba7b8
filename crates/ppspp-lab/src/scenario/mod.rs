//! Scenario files (TOML): everything an experiment is — seed, duration,
//! content, access-link classes, sites, delay groups, peers with their
//! roles, algorithms, limits, arrivals and departures, and what to record.
//! Unknown keys and bad values are errors that name the file, the line and
//! what was expected.

pub mod bittorrent;
pub mod live;
mod overrides;
mod spec;
mod value;

pub use overrides::{apply_overrides, Override, OverrideError};
pub use spec::{
    Arrival, CatchUpSpec, Class, ClassNames, Content, Departure, Flow, FlowKind, LossSpec,
    NetworkSpec, PeerGroup, PlayerSpec, Record, Role, Scenario, SeekSpec, Site, SwarmSpec,
};
pub use value::{Bitrate, Bytes, Dur, Probability, Queue, ValueError};

use std::collections::BTreeSet;
use std::fmt;
use std::ops::Range;

use ppspp_core::play::SeekModel;
use ppspp_core::{ChunkSize, HashFunction};

use crate::net::MAX_SITE_DEPTH;

/// The built-in default scenario: a flash crowd behind home-like links.
pub const DEFAULT_NAME: &str = "flash-crowd";
/// Its text (the file `scenarios/flash-crowd.toml`).
pub const DEFAULT_TEXT: &str = include_str!("../../../../scenarios/flash-crowd.toml");

/// A scenario that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file (or `<built-in>`).
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// What would be right.
    pub hint: Option<String>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.file, l, self.message)?,
            None => write!(f, "{}: {}", self.file, self.message)?,
        }
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ScenarioError {}

fn line_of(text: &str, span: Option<Range<usize>>) -> Option<usize> {
    let at = span?.start.min(text.len());
    Some(text[..at].bytes().filter(|b| *b == b'\n').count() + 1)
}

/// The value an error's `span` covers, quoted as written: `key = value`
/// when the span is the value of a key on its line, the bare value when it
/// is an array element; `None` for keys, tables and multi-line values.
fn quote_value(text: &str, span: Option<Range<usize>>) -> Option<String> {
    let span = span?;
    let value = text.get(span.clone())?.trim();
    if value.is_empty() || value.contains('\n') {
        return None;
    }
    let line_start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
    let before = text[line_start..span.start].trim_end();
    if let Some(lhs) = before.strip_suffix('=') {
        // The key is the last word before `=` (inline tables hold several).
        let key = lhs.trim_end().rsplit([' ', '{', ',', '\t']).next()?;
        return (!key.is_empty()).then(|| format!("{key} = {value}"));
    }
    // An array element; a bare word after `,` is a key of an inline table.
    let literal = value.starts_with(|c: char| matches!(c, '"' | '\'' | '[') || c.is_ascii_digit());
    (literal && before.ends_with(['[', ','])).then(|| value.to_string())
}

/// Reads a scenario from `text` (named `file` in errors) and checks that
/// everything it names exists and every value is usable.
pub fn parse(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    read(text, file, true)
}

/// As [`parse`]; `quote` shows a bad value as written before the message.
/// Not for text the program wrote itself (a scenario with `--set`
/// overrides), whose lines and spellings the user never saw.
fn read(text: &str, file: &str, quote: bool) -> Result<Scenario, ScenarioError> {
    let scenario: Scenario = toml::from_str(text).map_err(|e| {
        let mut message = e.message().trim().to_string();
        // A bad value is shown as written, so the message stands alone
        // (`delay = "5": a duration needs a unit, e.g. …`).
        if let Some(quoted) = quote.then(|| quote_value(text, e.span())).flatten() {
            message = format!("{quoted}: {message}");
        }
        let hint = if message.contains("unknown field") || message.contains("unknown variant") {
            Some("check the spelling; the keys allowed here are listed above".into())
        } else if message.contains("missing field") {
            Some("add the key; see scenarios/flash-crowd.toml for a complete example".into())
        } else if message.contains("needs a unit") {
            Some(
                "a plain number could be seconds or milliseconds, bytes or bits: \
                 every duration, size and rate in a scenario says its unit"
                    .into(),
            )
        } else {
            None
        };
        ScenarioError {
            file: file.into(),
            line: line_of(text, e.span()),
            message,
            hint,
        }
    })?;
    check(&scenario, text, file)?;
    Ok(scenario)
}

fn check(s: &Scenario, text: &str, file: &str) -> Result<(), ScenarioError> {
    let err = |span: Option<Range<usize>>, message: String, hint: &str| ScenarioError {
        file: file.into(),
        line: line_of(text, span),
        message,
        hint: (!hint.is_empty()).then(|| hint.to_string()),
    };
    match &s.live {
        Some(l) => live::check(s, l).map_err(|(m, h)| err(None, m, h))?,
        None if s.content.size.0 == 0 => {
            return Err(err(None, "content.size must be at least 1 byte".into(), ""));
        }
        None => {}
    }
    if s.swarm.tracker_notice.0.is_zero() {
        return Err(err(
            None,
            "swarm.tracker_notice must be above zero".into(),
            "50ms is the default",
        ));
    }
    ChunkSize::new(s.content.chunk_size.0).map_err(|e| {
        err(
            None,
            format!("content.chunk_size: {e}"),
            "1024 is the RFC default",
        )
    })?;
    if HashFunction::from_name(&s.content.hash).is_none() {
        return Err(err(
            None,
            format!("content.hash: unknown hash function '{}'", s.content.hash),
            "sha1 or sha256",
        ));
    }
    let groups = s.network.groups.len().max(1);
    if !s.network.groups.is_empty()
        && (s.network.delay.len() != groups || s.network.delay.iter().any(|r| r.len() != groups))
    {
        return Err(err(
            None,
            format!("network.delay must be a {groups}×{groups} matrix, one row per group"),
            "delay = [[\"10ms\", \"40ms\"], [\"40ms\", \"10ms\"]] for two groups",
        ));
    }
    for (name, class) in &s.classes {
        let span = Some(class.span());
        if let Some(g) = &class.get_ref().group {
            if !s.network.groups.contains(g) {
                return Err(err(
                    span,
                    format!("class '{name}' names group '{g}', which network.groups does not list"),
                    &format!("groups: {:?}", s.network.groups),
                ));
            }
        }
        if let Some(site) = &class.get_ref().site {
            if !s.sites.contains_key(site) {
                return Err(err(
                    span,
                    format!("class '{name}' names site '{site}', which is not defined"),
                    "add a [sites.NAME] table",
                ));
            }
        }
        let c = class.get_ref();
        if let Some(max) = c.delay_max {
            let min = c.delay.map_or(std::time::Duration::ZERO, |d| d.0);
            if max.0 < min {
                return Err(err(
                    span,
                    format!("class '{name}': delay_max is below delay"),
                    "hosts' delays are drawn between delay and delay_max",
                ));
            }
        }
        if let Queue::Bytes(b) = class.get_ref().queue {
            if b < 1500 {
                return Err(err(
                    span,
                    format!("class '{name}': a queue of {b} bytes cannot hold one packet"),
                    "at least 1500 bytes",
                ));
            }
        }
    }
    let mut names = std::collections::BTreeSet::new();
    // The swarms (protocol, `swarm` name) that have a seeder, and those
    // that have leechers: every swarm a leecher joins needs a seeder. A
    // scenario of plain hosts and cross traffic needs none.
    let mut seeded = std::collections::BTreeSet::new();
    let mut leeching = std::collections::BTreeMap::new();
    for group in &s.peers {
        let span = Some(group.span());
        let g = group.get_ref();
        if !names.insert(g.name.as_str()) {
            return Err(err(
                span,
                format!("two peer groups are called '{}'", g.name),
                "names must be unique",
            ));
        }
        if g.class.names().is_empty() {
            return Err(err(
                span,
                format!("peer group '{}' has an empty class list", g.name),
                "name at least one class",
            ));
        }
        if let Some(missing) = g.class.names().iter().find(|c| !s.classes.contains_key(*c)) {
            let known: Vec<&String> = s.classes.keys().collect();
            return Err(err(
                span,
                format!(
                    "peer group '{}' names class '{}', which is not defined",
                    g.name, missing
                ),
                &format!("classes: {known:?}"),
            ));
        }
        if let Err(e) = g.upload_scheduling() {
            return Err(err(span, e.to_string(), "say one of them"));
        }
        if let Some(player) = &g.player {
            if g.role != Role::Leecher {
                return Err(err(
                    span,
                    format!("peer group '{}' has a player but is not a leecher", g.name),
                    "only leechers watch what they download: remove `player`",
                ));
            }
            if player.bitrate.0 == 0 {
                return Err(err(
                    span,
                    format!("peer group '{}' has a player of bitrate 0", g.name),
                    "give the media bitrate, e.g. `bitrate = \"1Mbit/s\"`",
                ));
            }
            if player.max_lag.is_some() && s.live.is_none() {
                return Err(err(
                    span,
                    format!("peer group '{}': max_lag is for live viewers", g.name),
                    "remove `max_lag`, or add a [live] stream",
                ));
            }
            if let Some(cu) = player.catch_up {
                if s.live.is_none() {
                    return Err(err(
                        span,
                        format!("peer group '{}': catch_up is for live viewers", g.name),
                        "remove `catch_up`, or add a [live] stream",
                    ));
                }
                if cu.rate_permille().is_none() {
                    return Err(err(
                        span,
                        format!(
                            "peer group '{}': catch-up rate {} is not above 1 and at most {}",
                            g.name,
                            cu.rate,
                            CatchUpSpec::MAX_RATE
                        ),
                        "e.g. `catch_up = { rate = 1.2, above = \"1s\" }`",
                    ));
                }
            }
            if let Some(seek) = player.seek {
                if let Err(e) = SeekModel::per_minute(seek.per_minute) {
                    return Err(err(
                        span,
                        format!("peer group '{}': {e}", g.name),
                        "e.g. `seek = { per_minute = 0.5 }`; leave `seek` out for no seeks",
                    ));
                }
            }
        }
        let swarm = (g.bittorrent.is_some(), g.swarm.clone());
        match g.role {
            Role::Seeder if g.count > 0 => {
                seeded.insert(swarm);
            }
            Role::Leecher if g.count > 0 => {
                leeching
                    .entry(swarm)
                    .or_insert((span.clone(), g.name.clone()));
            }
            _ => {}
        }
        if let Some(bt) = &g.bittorrent {
            bittorrent::check(s, g, bt).map_err(|(m, h)| err(span.clone(), m, h))?;
        }
        check_arrival(g).map_err(|(m, h)| err(span.clone(), m, h))?;
        check_departure(g).map_err(|(m, h)| err(span.clone(), m, h))?;
    }
    for (swarm, (span, name)) in &leeching {
        if seeded.contains(swarm) {
            continue;
        }
        let protocol = if swarm.0 { "BitTorrent" } else { "ppspp" };
        let message = match &swarm.1 {
            _ if seeded.is_empty() => "no seeder: nobody has the content".into(),
            None => format!(
                "no seeder in peer group '{name}''s swarm (the scenario's, {protocol}): \
                 nobody there has the content"
            ),
            Some(w) => format!(
                "no seeder in swarm '{w}' ({protocol}) of peer group '{name}': \
                 nobody there has the content"
            ),
        };
        let at = if seeded.is_empty() {
            None
        } else {
            span.clone()
        };
        return Err(err(
            at,
            message,
            "add a [[peers]] group with role = \"seeder\" (and the same `swarm` and protocol)",
        ));
    }
    for (name, site) in &s.sites {
        check_site_nesting(s, name).map_err(|(m, h)| err(Some(site.span()), m, h))?;
    }
    for flow in &s.flows {
        check_flow(s, flow.get_ref()).map_err(|(m, h)| err(Some(flow.span()), m, h))?;
    }
    for r in &s.record.rates {
        if !names.contains(r.as_str()) {
            return Err(err(
                None,
                format!("record.rates: no peer group '{r}'"),
                "name a [[peers]] group",
            ));
        }
    }
    for q in &s.record.queues {
        if !link_ref_ok(s, q) {
            return Err(err(
                None,
                format!("record.queues: '{q}' names no link"),
                LINK_HINT,
            ));
        }
    }
    let mut traced = BTreeSet::new();
    for w in &s.record.waits {
        let spec = w.get_ref();
        let problem = if !link_ref_ok(s, &spec.link) {
            Some((
                format!("record.waits: '{}' names no link", spec.link),
                LINK_HINT,
            ))
        } else if !flow_ref_ok(s, &spec.flow) {
            Some((
                format!("record.waits: '{}' names no flow", spec.flow),
                "\"flowN\" (the N-th [[flows]], from 0) or \"peer:GROUP[i]\"",
            ))
        } else if !traced.insert((spec.link.as_str(), spec.flow.as_str())) {
            Some((
                format!(
                    "record.waits: link '{}' already traces '{}'",
                    spec.link, spec.flow
                ),
                "each flow once per link",
            ))
        } else {
            None
        };
        if let Some((m, h)) = problem {
            return Err(err(Some(w.span()), m, h));
        }
    }
    Ok(())
}

const LINK_HINT: &str =
    "\"GROUP.up\", \"GROUP[i].down\" (a peer's access link; GROUP is its first) or \"site:NAME.up\"";

/// A site's parents exist, never lead back to it, and nest at most
/// [`MAX_SITE_DEPTH`] deep.
fn check_site_nesting(s: &Scenario, name: &str) -> Result<(), Problem> {
    let mut at = name;
    for _ in 0..MAX_SITE_DEPTH {
        let Some(parent) = s.sites.get(at).and_then(|x| x.get_ref().parent.as_deref()) else {
            return Ok(());
        };
        if !s.sites.contains_key(parent) {
            return Err((
                format!("site '{at}' names parent '{parent}', which is not defined"),
                "add a [sites.NAME] table",
            ));
        }
        at = parent;
    }
    Err((
        format!("site '{name}' nests more than {MAX_SITE_DEPTH} deep, or its parents form a cycle"),
        "a site's parent chain must end at a site without parent",
    ))
}

/// Whether `r` names a link: `"HOST.up|down"` or `"site:NAME.up|down"`.
fn link_ref_ok(s: &Scenario, r: &str) -> bool {
    match r.rsplit_once('.') {
        Some((who, "up" | "down")) => match who.strip_prefix("site:") {
            Some(site) => s.sites.contains_key(site),
            None => host_ref(s, who).is_some(),
        },
        _ => false,
    }
}

/// Whether `r` names a flow: `"flowN"` or `"peer:HOST"`.
fn flow_ref_ok(s: &Scenario, r: &str) -> bool {
    if let Some(host) = peer_flow(r) {
        return host_ref(s, host).is_some();
    }
    r.strip_prefix("flow")
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|n| n < s.flows.len())
}

type Problem = (String, &'static str);

/// The host whose packets a flow reference names: `"peer:GROUP[i]"` (a
/// ppspp or BitTorrent peer's packets; `"ppspp:GROUP[i]"` as well, its
/// older name).
pub fn peer_flow(r: &str) -> Option<&str> {
    r.strip_prefix("peer:").or_else(|| r.strip_prefix("ppspp:"))
}

/// The peer group index and member index a host reference names
/// (`"GROUP"` or `"GROUP[i]"`), if valid.
pub fn host_ref(s: &Scenario, r: &str) -> Option<(usize, u32)> {
    let (name, index) = match r.strip_suffix(']').and_then(|x| x.split_once('[')) {
        Some((n, i)) => (n, i.trim().parse().ok()?),
        None => (r, 0),
    };
    let g = s.peers.iter().position(|p| p.get_ref().name == name)?;
    (index < s.peers[g].get_ref().count).then_some((g, index))
}

fn check_flow(s: &Scenario, f: &Flow) -> Result<(), Problem> {
    for end in [&f.from, &f.to] {
        if host_ref(s, end).is_none() {
            return Err((
                format!("flow end '{end}' names no host"),
                "\"GROUP\" (its first peer) or \"GROUP[i]\" with i below the group's count",
            ));
        }
    }
    if host_ref(s, &f.from) == host_ref(s, &f.to) {
        return Err(("a flow from a host to itself".into(), "pick two hosts"));
    }
    match f.kind {
        _ if f.target.is_some() && f.kind != FlowKind::Utp => Err((
            "only a uTP flow has a target delay".into(),
            "drop `target`, or make it kind = \"utp\"",
        )),
        FlowKind::Tcp => Ok(()),
        FlowKind::Utp if f.cc.is_some() || f.sack.is_some() => Err((
            "a uTP flow has libutp's LEDBAT and selective ACK, no `cc` or `sack`".into(),
            "drop `cc` and `sack`; `target` sets its delay target",
        )),
        FlowKind::Utp if f.target.is_some_and(|t| t.0.is_zero()) => Err((
            "a uTP flow's target must be above zero".into(),
            "target = \"100ms\" (BEP 29) or \"25ms\"",
        )),
        FlowKind::Utp => Ok(()),
        _ if f.cc.is_some() || f.sack.is_some() || f.handshake.is_some() => Err((
            "only a TCP flow has a congestion control, SACK or a handshake".into(),
            "drop `cc`, `sack` and `handshake`, or make it kind = \"tcp\"",
        )),
        FlowKind::Cbr | FlowKind::ParetoOnOff if f.rate.is_none() => {
            Err(("a UDP flow needs a rate".into(), "rate = \"750kbit/s\""))
        }
        FlowKind::ParetoOnOff
            if f.mean_on.is_none_or(|d| d.0.is_zero())
                || f.mean_off.is_none()
                || f.shape.is_some_and(|k| !(k > 1.0 && k.is_finite())) =>
        {
            Err((
                "an on/off flow needs mean_on > 0, mean_off, and shape > 1".into(),
                "mean_on = \"1s\", mean_off = \"2s\", shape = 1.5",
            ))
        }
        _ if f.packet_size.is_some_and(|b| !(28..=65_535).contains(&b.0)) => Err((
            "packet_size must be 28 to 65535 bytes".into(),
            "500 or 1500",
        )),
        _ => Ok(()),
    }
}

fn check_arrival(g: &PeerGroup) -> Result<(), Problem> {
    match &g.arrival {
        Some(Arrival::Poisson { rate, .. }) if !(*rate > 0.0 && rate.is_finite()) => Err((
            format!("peer group '{}': Poisson rate must be positive", g.name),
            "rate = 1.0 means one arrival per second on average",
        )),
        Some(Arrival::Times { times }) if times.len() != g.count as usize => Err((
            format!(
                "peer group '{}': {} arrival times for {} peers",
                g.name,
                times.len(),
                g.count
            ),
            "give one time per peer",
        )),
        _ => Ok(()),
    }
}

fn check_departure(g: &PeerGroup) -> Result<(), Problem> {
    let positive = |x: f64| x > 0.0 && x.is_finite();
    let ok = match &g.departure {
        Some(Departure::Weibull { shape, scale }) => positive(*shape) && !scale.0.is_zero(),
        Some(Departure::Pareto { shape, scale }) => positive(*shape) && !scale.0.is_zero(),
        Some(Departure::Lognormal { mu, sigma }) => mu.is_finite() && positive(*sigma),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err((
            format!(
                "peer group '{}': lifetime parameters must be positive",
                g.name
            ),
            "shape > 0, scale > 0 (sigma > 0 for lognormal)",
        ))
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
