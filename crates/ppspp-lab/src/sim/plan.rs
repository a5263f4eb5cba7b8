//! From a scenario to a concrete plan: one host per peer with its links,
//! arrival and departure times drawn from the scenario's distributions with
//! the experiment seed.

use std::time::Duration;

use rand::RngExt;
use rand_distr::{Distribution, LogNormal, Pareto, Weibull};

use crate::net::{LinkConfig, LossModel, Network, QueueLimit, SiteId};
use crate::rng::{rng, Stream};
use crate::scenario::{Arrival, Class, Departure, LossSpec, Queue, Role, Scenario, Site};

/// How a peer leaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Leave {
    /// Never (until the end).
    Stay,
    /// `linger` after completing.
    WhenDone(Duration),
    /// After this lifetime from its arrival.
    After(Duration),
}

/// One peer as planned.
#[derive(Clone, Debug)]
pub struct PeerPlan {
    /// Index of its peer group in the scenario.
    pub group: usize,
    /// Seeder or leecher.
    pub role: Role,
    /// When it joins.
    pub arrival: Duration,
    /// How it leaves.
    pub leave: Leave,
    /// It runs BitTorrent (its group has a `bittorrent` table), not ppspp.
    pub bittorrent: bool,
    /// Its swarm: 0 for the scenario's, else 1 + the index of its group's
    /// `swarm` name among the names in group order.
    pub swarm: u32,
}

fn queue(q: Queue) -> QueueLimit {
    match q {
        Queue::Time(d) => QueueLimit::Time(d),
        Queue::Bytes(b) => QueueLimit::Bytes(b),
        Queue::Packets(n) => QueueLimit::Packets(n),
        Queue::Unlimited => QueueLimit::Unlimited,
    }
}

fn loss(l: &Option<LossSpec>) -> LossModel {
    match l {
        None => LossModel::None,
        Some(LossSpec::Bernoulli { p }) => LossModel::Bernoulli { p: p.0 },
        Some(LossSpec::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_good,
            loss_bad,
        }) => LossModel::GilbertElliott {
            p_good_to_bad: p_good_to_bad.0,
            p_bad_to_good: p_bad_to_good.0,
            loss_good: loss_good.map_or(0.0, |p| p.0),
            loss_bad: loss_bad.0,
        },
    }
}

/// The uplink and downlink of a host of `class`.
pub fn access_links(class: &Class) -> (LinkConfig, LinkConfig) {
    let delay = class.delay.map_or(Duration::ZERO, |d| d.0);
    let jitter = class.jitter.map_or(Duration::ZERO, |d| d.0);
    let mut up = LinkConfig::new(Some(class.up.0), queue(class.queue), delay);
    up.jitter = jitter;
    up.loss = loss(&class.loss);
    let mut down = LinkConfig::new(Some(class.down.0), queue(class.queue), delay);
    down.jitter = jitter;
    (up, down)
}

fn site_links(site: &Site) -> (LinkConfig, LinkConfig) {
    let delay = site.delay.map_or(Duration::ZERO, |d| d.0);
    (
        LinkConfig::new(Some(site.up.0), queue(site.queue), delay),
        LinkConfig::new(Some(site.down.0), queue(site.queue), delay),
    )
}

/// Builds the network (one host per peer, in peer order) and the plan.
pub fn build(s: &Scenario, seed: u64) -> (Network, Vec<PeerPlan>) {
    let mut net = Network::new(seed);
    let mut sites = std::collections::BTreeMap::<&str, SiteId>::new();
    for (name, site) in &s.sites {
        let (up, down) = site_links(site.get_ref());
        sites.insert(name, net.add_site(up, down));
    }
    // Nesting was checked with the scenario (no cycle, not too deep).
    for (name, site) in &s.sites {
        let parent = site.get_ref().parent.as_deref().and_then(|p| sites.get(p));
        if let (Some(&child), Some(&parent)) = (sites.get(name.as_str()), parent) {
            net.set_site_parent(child, parent);
        }
    }
    let group_index = |g: &Option<String>| {
        g.as_ref()
            .and_then(|g| s.network.groups.iter().position(|x| x == g))
            .unwrap_or(0)
    };
    net.set_group_delays(
        s.network
            .delay
            .iter()
            .map(|row| row.iter().map(|d| d.0).collect())
            .collect(),
    );
    let mut plans = Vec::new();
    let mut churn = rng(seed, Stream::Churn, 0);
    let mut swarm_names: Vec<&str> = Vec::new();
    for (gi, group) in s.peers.iter().enumerate() {
        let g = group.get_ref();
        let arrivals = arrivals(g.arrival.as_ref(), g.count, &mut churn);
        let swarm = g.swarm.as_deref().map_or(0, |name| {
            let k = swarm_names
                .iter()
                .position(|n| *n == name)
                .unwrap_or_else(|| {
                    swarm_names.push(name);
                    swarm_names.len() - 1
                });
            k as u32 + 1
        });
        for (k, arrival) in arrivals.into_iter().enumerate() {
            let name = g.class.of(k).expect("checked: a group names a class");
            let class = s.classes[name].get_ref();
            let (mut up, mut down) = access_links(class);
            if let Some(max) = class.delay_max {
                // One draw per host, from its own stream: adding a host
                // leaves the others' delays as they were.
                let min = class.delay.map_or(Duration::ZERO, |d| d.0);
                let mut r = rng(seed, Stream::Topology, plans.len() as u64);
                let d = Duration::from_micros(r.random_range(
                    ppspp_core::time::duration_micros(min)
                        ..=ppspp_core::time::duration_micros(max.0),
                ));
                (up.delay, down.delay) = (d, d);
            }
            let site = class.site.as_deref().and_then(|n| sites.get(n).copied());
            net.add_host(up, down, site, group_index(&class.group));
            let leave = departure(g.departure.as_ref(), arrival, &mut churn);
            plans.push(PeerPlan {
                group: gi,
                role: g.role,
                arrival,
                leave,
                bittorrent: g.bittorrent.is_some(),
                swarm,
            });
        }
    }
    (net, plans)
}

fn arrivals(a: Option<&Arrival>, count: u32, r: &mut impl rand::Rng) -> Vec<Duration> {
    let n = count as usize;
    match a {
        None => vec![Duration::ZERO; n],
        Some(Arrival::Flash { at, spread }) => {
            let at = at.map_or(Duration::ZERO, |d| d.0);
            let spread = spread.map_or(0.0, |d| d.0.as_secs_f64());
            let mut v: Vec<Duration> = (0..n)
                .map(|_| at + Duration::from_secs_f64(r.random::<f64>() * spread))
                .collect();
            v.sort();
            v
        }
        Some(Arrival::Poisson { rate, start }) => {
            let mut t = start.map_or(0.0, |d| d.0.as_secs_f64());
            (0..n)
                .map(|_| {
                    // Exponential gaps by inversion.
                    let u: f64 = r.random::<f64>();
                    t += -(1.0 - u).ln() / rate;
                    Duration::from_secs_f64(t)
                })
                .collect()
        }
        Some(Arrival::Times { times }) => times.iter().map(|d| d.0).collect(),
    }
}

/// How a peer arriving at `arrival` leaves; draws from `r` for the
/// random lifetimes only.
fn departure(d: Option<&Departure>, arrival: Duration, r: &mut impl rand::Rng) -> Leave {
    let secs = |x: f64| Leave::After(Duration::from_secs_f64(x.clamp(0.0, 1e9)));
    match d {
        None | Some(Departure::Stay) => Leave::Stay,
        Some(Departure::LeaveWhenDone { linger }) => {
            Leave::WhenDone(linger.map_or(Duration::ZERO, |d| d.0))
        }
        // A lifetime to that time; zero (leave as it joins) if it is past.
        Some(Departure::At { time }) => Leave::After(time.0.saturating_sub(arrival)),
        Some(Departure::Weibull { shape, scale }) => {
            match Weibull::new(scale.0.as_secs_f64(), *shape) {
                Ok(w) => secs(w.sample(r)),
                Err(_) => Leave::Stay,
            }
        }
        Some(Departure::Lognormal { mu, sigma }) => match LogNormal::new(*mu, *sigma) {
            Ok(l) => secs(l.sample(r)),
            Err(_) => Leave::Stay,
        },
        Some(Departure::Pareto { shape, scale }) => {
            match Pareto::new(scale.0.as_secs_f64(), *shape) {
                Ok(p) => secs(p.sample(r)),
                Err(_) => Leave::Stay,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::HostId;
    use crate::scenario::{parse, DEFAULT_TEXT};

    #[test]
    fn plan_follows_the_scenario() {
        let s = parse(DEFAULT_TEXT, "x").unwrap();
        let (net, plans) = build(&s, 1);
        assert_eq!(plans.len(), 51);
        assert_eq!(net.host_count(), 51);
        assert_eq!(plans[0].role, Role::Seeder);
        assert_eq!(plans[0].arrival, Duration::ZERO);
        for p in &plans[1..] {
            assert!(p.arrival >= Duration::from_secs(1) && p.arrival <= Duration::from_secs(11));
        }
        // Same seed, same plan; another seed, other times.
        let again = build(&s, 1).1;
        assert!(plans
            .iter()
            .zip(&again)
            .all(|(a, b)| a.arrival == b.arrival));
        let other = build(&s, 2).1;
        assert!(plans
            .iter()
            .zip(&other)
            .any(|(a, b)| a.arrival != b.arrival));
    }

    #[test]
    fn delay_max_draws_each_hosts_delay_once_in_the_range() {
        let text = DEFAULT_TEXT.replacen(
            "delay = \"5ms\"\ngroup = \"near\"",
            "delay = \"1ms\"\ndelay_max = \"50ms\"\ngroup = \"near\"",
            1,
        );
        let s = parse(&text, "x").unwrap();
        let delays = |seed: u64| -> Vec<(Duration, Duration)> {
            let (net, _) = build(&s, seed);
            // Hosts 1..=25 are the group "near", of class home-near.
            (1..=25)
                .map(|h| {
                    let (up, down) = net.access_links(HostId(h)).unwrap();
                    (net.link(up).config().delay, net.link(down).config().delay)
                })
                .collect()
        };
        let a = delays(1);
        let ms = Duration::from_millis;
        assert!(
            a.iter()
                .all(|(u, d)| u == d && (ms(1)..=ms(50)).contains(u)),
            "{a:?}"
        );
        // Spread over the range, not one value.
        let (lo, hi) = (a.iter().map(|x| x.0).min(), a.iter().map(|x| x.0).max());
        assert!(lo < Some(ms(10)) && hi > Some(ms(40)), "{lo:?} {hi:?}");
        assert_eq!(a, delays(1));
        assert_ne!(a, delays(2));
        // The other classes keep their fixed delay.
        let (net, _) = build(&s, 1);
        let (up, _) = net.access_links(HostId(26)).unwrap();
        assert_eq!(net.link(up).config().delay, ms(5));
    }

    #[test]
    fn a_class_list_spreads_a_group_over_its_classes_in_turn() {
        let text = DEFAULT_TEXT.replacen(
            "class = \"home-near\"",
            "class = [\"home-near\", \"server\", \"home-far\"]",
            1,
        );
        let s = parse(&text, "x").unwrap();
        let (net, plans) = build(&s, 1);
        assert_eq!(plans.len(), 51);
        // Hosts 1..=25 are the group "near": home-near, server, home-far, …
        let up = |h: u32| {
            let (up, _) = net.access_links(HostId(h)).unwrap();
            net.link(up).config().capacity_bps
        };
        let delay = |h: u32, to: u32| net.core_delay(HostId(h), HostId(to));
        for k in 0..25u32 {
            let h = k + 1;
            let want = if k % 3 == 1 { 20_000_000 } else { 1_000_000 };
            assert_eq!(up(h), Some(want), "host {h}");
            // home-far sits in the far delay group, the others near.
            let far = k % 3 == 2;
            let to_seeder = if far { 40 } else { 10 };
            assert_eq!(delay(h, 0), Duration::from_millis(to_seeder), "host {h}");
        }
        let e =
            crate::scenario::parse(&text.replace("\"server\", \"home-far\"]", "\"mars\"]"), "x")
                .unwrap_err();
        assert!(e.message.contains("class 'mars'"), "{e}");
    }

    #[test]
    fn a_departure_time_is_a_lifetime_from_the_arrival() {
        let d = Departure::At {
            time: crate::scenario::Dur(Duration::from_secs(60)),
        };
        let mut r = rng(5, Stream::Churn, 0);
        let untouched = r.clone();
        let secs = Duration::from_secs;
        assert_eq!(
            departure(Some(&d), secs(10), &mut r),
            Leave::After(secs(50))
        );
        // Arriving after the time: it leaves as it joins.
        assert_eq!(
            departure(Some(&d), secs(70), &mut r),
            Leave::After(Duration::ZERO)
        );
        // Nothing was drawn: the other peers' times stay as they were.
        assert_eq!(r, untouched);
    }

    #[test]
    fn poisson_and_lifetimes() {
        let mut r = rng(5, Stream::Churn, 0);
        let a = arrivals(
            Some(&Arrival::Poisson {
                rate: 2.0,
                start: None,
            }),
            20_000,
            &mut r,
        );
        // Mean gap 0.5 s: the 20 000th arrival near 10 000 s (±3 %).
        let last = a.last().unwrap().as_secs_f64();
        assert!((last - 10_000.0).abs() < 300.0, "{last}");
        let d = Departure::Weibull {
            shape: 1.0,
            scale: crate::scenario::Dur(Duration::from_secs(100)),
        };
        let mean: f64 = (0..20_000)
            .map(|_| match departure(Some(&d), Duration::ZERO, &mut r) {
                Leave::After(t) => t.as_secs_f64(),
                other => panic!("{other:?}"),
            })
            .sum::<f64>()
            / 20_000.0;
        // Weibull with k = 1 is exponential with mean λ.
        assert!((mean - 100.0).abs() < 3.0, "{mean}");
    }
}
