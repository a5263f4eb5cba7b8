//! What of a scenario the emulator cannot run in real time, refused with
//! the reason before anything starts (issue 27: "scenario features that
//! cannot run in real time are refused with a clear reason").

use ppspp_lab::scenario::Scenario;

/// Why a scenario cannot be emulated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// BitTorrent peers are the simulator's model, not a node.
    #[error(
        "peer group '{0}' runs BitTorrent: the lab's BitTorrent peer is a model that runs only \
         in virtual time (`ppspp lab run`); the emulator runs real ppspp nodes"
    )]
    BitTorrent(String),
    /// Cross-traffic sources have no real-time driver yet.
    #[error(
        "the scenario has {0} [[flows]] of cross traffic: their sources (CBR, on/off, TCP, uTP) \
         are simulator agents with no real-time driver yet"
    )]
    CrossTraffic(usize),
    /// The real node's player has no seek model yet.
    #[error(
        "peer group '{0}' has viewers that seek (`player.seek`): the real node's player does not \
         seek on its own yet; leave `seek` out to emulate"
    )]
    Seeks(String),
    /// A real node reads the real clock.
    #[error(
        "peer group '{0}' has a `clock_offset`: a real node's DATA timestamps come from the \
         machine's clock, which the emulator does not shift"
    )]
    ClockOffset(String),
    /// Each peer needs a loopback address of its own.
    #[error(
        "{0} peers: the emulator gives each its own address in 127.0.0.0/8 and takes at most \
         {MAX_PEERS}"
    )]
    TooManyPeers(u64),
}

/// Most peers one emulation runs: one loopback address each, leaving
/// 127.0.0.0/16 (where 127.0.0.1 and the machine's own services live) alone.
pub const MAX_PEERS: u64 = 65_536;

/// The first reason `s` cannot be emulated, if any.
pub fn check(s: &Scenario) -> Result<(), Refusal> {
    if let Some(g) = s.peers.iter().find(|g| g.get_ref().bittorrent.is_some()) {
        return Err(Refusal::BitTorrent(g.get_ref().name.clone()));
    }
    if !s.flows.is_empty() {
        return Err(Refusal::CrossTraffic(s.flows.len()));
    }
    let seeks = |g: &&ppspp_lab::scenario::PeerGroup| g.player.is_some_and(|p| p.seek.is_some());
    if let Some(g) = s.peers.iter().map(|g| g.get_ref()).find(seeks) {
        return Err(Refusal::Seeks(g.name.clone()));
    }
    let offset =
        |g: &&ppspp_lab::scenario::PeerGroup| g.clock_offset.is_some_and(|d| !d.0.is_zero());
    if let Some(g) = s.peers.iter().map(|g| g.get_ref()).find(offset) {
        return Err(Refusal::ClockOffset(g.name.clone()));
    }
    let peers: u64 = s.peers.iter().map(|g| u64::from(g.get_ref().count)).sum();
    if peers > MAX_PEERS {
        return Err(Refusal::TooManyPeers(peers));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ppspp_lab::scenario::parse;

    fn scenario(extra: &str, leechers: u32) -> Scenario {
        let text = format!(
            r#"
name = "t"
duration = "60s"
[content]
size = "1MB"
[classes.dsl]
up = "1Mbit/s"
down = "8Mbit/s"
[[peers]]
name = "seed"
class = "dsl"
role = "seeder"
[[peers]]
name = "leechers"
count = {leechers}
class = "dsl"
role = "leecher"
{extra}
"#
        );
        parse(&text, "t.toml").unwrap()
    }

    #[test]
    fn an_on_demand_swarm_and_a_live_one_are_taken() {
        assert_eq!(check(&scenario("", 10)), Ok(()));
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/live-small.toml"
        );
        let live = parse(&std::fs::read_to_string(path).unwrap(), path).unwrap();
        assert_eq!(check(&live), Ok(()));
    }

    #[test]
    fn what_cannot_run_in_real_time_is_refused_with_its_reason() {
        let bt = scenario(
            "[[peers]]\nname = \"btseed\"\nclass = \"dsl\"\nrole = \"seeder\"\nswarm = \"b\"\n\
             bittorrent = { disposition = 5 }\n\
             [[peers]]\nname = \"bt\"\nclass = \"dsl\"\nrole = \"leecher\"\nswarm = \"b\"\n\
             bittorrent = { disposition = 5 }\n",
            10,
        );
        let e = check(&bt).unwrap_err();
        assert_eq!(e, Refusal::BitTorrent("btseed".into()));
        assert!(e.to_string().contains("'btseed' runs BitTorrent"), "{e}");

        let flows = scenario(
            "[[flows]]\nkind = \"cbr\"\nfrom = \"seed\"\nto = \"leechers[0]\"\nrate = \"100kbit/s\"\npacket_size = \"500B\"\n",
            10,
        );
        assert_eq!(check(&flows), Err(Refusal::CrossTraffic(1)));

        let seeks = scenario(
            "player = { bitrate = \"500kbit/s\", seek = { per_minute = 1.0 } }\n",
            10,
        );
        assert_eq!(check(&seeks), Err(Refusal::Seeks("leechers".into())));
        let offset = scenario("clock_offset = \"2s\"\n", 10);
        assert_eq!(check(&offset), Err(Refusal::ClockOffset("leechers".into())));
        assert_eq!(check(&scenario("clock_offset = \"0s\"\n", 10)), Ok(()));

        let many = scenario("", 70_000);
        let e = check(&many).unwrap_err();
        assert_eq!(e, Refusal::TooManyPeers(70_001));
        assert!(e.to_string().contains("65536"), "{e}");
    }
}
