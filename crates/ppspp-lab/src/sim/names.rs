//! Hosts and links by the names a scenario gives them, so results and
//! reports say `seeder.up` or `site:isp.down` rather than a link number,
//! and `record.queues` / `record.waits` find what they name. The simulator
//! and the real-time emulator both read a scenario's names through
//! [`Layout`].

use super::cross::CROSS_FLOW_BASE;
use super::plan::PeerPlan;
use super::Simulation;
use crate::net::{LinkId, Network, SiteId};
use crate::packet::{FlowId, HostId};
use crate::scenario::{host_ref, Scenario};

/// A traced flow (`record.waits`): its link, the flow, and both as the
/// scenario names them.
pub type Traced = (LinkId, FlowId, String, String);

/// A scenario laid out on a network: its plan and the network built from
/// it ([`super::plan::build`]).
#[derive(Clone, Copy)]
pub struct Layout<'a> {
    /// The scenario.
    pub scenario: &'a Scenario,
    /// Its peers' plans, by host.
    pub plans: &'a [PeerPlan],
    /// The network built for them.
    pub net: &'a Network,
}

/// What a scenario's `record` table asks to be recorded, resolved to
/// links and flows.
#[derive(Clone, Debug, Default)]
pub struct Records {
    /// Links whose queue occupancy is sampled (`record.queues`).
    pub queues: Vec<LinkId>,
    /// Flows whose per-packet waits are traced (`record.waits`).
    pub traced: Vec<Traced>,
}

impl Records {
    /// Sets up `net`'s links to record what was asked.
    pub fn apply(&self, net: &mut Network) {
        for &id in &self.queues {
            net.link_mut(id).record_samples();
        }
        for (id, flow, _, _) in &self.traced {
            net.link_mut(*id).trace_flow(*flow);
        }
    }
}

impl Layout<'_> {
    /// The host a `"GROUP[i]"` reference names.
    pub fn host_named(&self, r: &str) -> Option<HostId> {
        let (g, i) = host_ref(self.scenario, r)?;
        let first = self.plans.iter().position(|p| p.group == g)?;
        Some(HostId(first as u32 + i))
    }

    /// The link a `"HOST.up"`, `"HOST.down"` or `"site:NAME.up"` reference
    /// names (HOST as in [`Layout::host_named`]).
    pub fn link_named(&self, r: &str) -> Option<LinkId> {
        let (who, dir) = r.rsplit_once('.')?;
        let (up, down) = match who.strip_prefix("site:") {
            Some(site) => {
                let i = self.scenario.sites.keys().position(|k| k == site)?;
                self.net.site_links(SiteId(i as u32))?
            }
            None => self.net.access_links(self.host_named(who)?)?,
        };
        Some(if dir == "up" { up } else { down })
    }

    /// The scenario's `record` table resolved; references that name
    /// nothing are left out.
    pub fn records(&self) -> Records {
        let record = &self.scenario.record;
        let queues = record.queues.iter().filter_map(|q| self.link_named(q));
        let mut traced = Vec::new();
        for w in &record.waits {
            let w = w.get_ref();
            let flow = match crate::scenario::peer_flow(&w.flow) {
                Some(host) => self.host_named(host).map(|h| FlowId(h.0)),
                None => w
                    .flow
                    .strip_prefix("flow")
                    .and_then(|n| n.parse::<u32>().ok())
                    .map(|n| FlowId(CROSS_FLOW_BASE + n)),
            };
            if let (Some(id), Some(flow)) = (self.link_named(&w.link), flow) {
                traced.push((id, flow, w.link.clone(), w.flow.clone()));
            }
        }
        Records {
            queues: queues.collect(),
            traced,
        }
    }

    /// Every link's name, indexed by [`LinkId`]: as `record.queues` or
    /// `record.waits` spells it when they name the link (so `near.up`
    /// stays `near.up` everywhere), else `GROUP.up` / `GROUP.down` for the
    /// only peer of a group, `GROUP[i].up` for the `i`-th of several, and
    /// `site:NAME.up` for a site's. Each is a reference the scenario
    /// accepts in `record.queues`.
    pub fn link_names(&self) -> Vec<String> {
        let (net, s) = (self.net, self.scenario);
        let mut names: Vec<String> = (0..net.link_count()).map(|i| format!("link {i}")).collect();
        let mut name = |id: LinkId, n: String| {
            if let Some(slot) = names.get_mut(id.0 as usize) {
                *slot = n;
            }
        };
        for (i, site) in s.sites.keys().enumerate() {
            if let Some((up, down)) = net.site_links(SiteId(i as u32)) {
                name(up, format!("site:{site}.up"));
                name(down, format!("site:{site}.down"));
            }
        }
        // A group's first host, where its index starts.
        let mut first: Vec<Option<usize>> = vec![None; s.peers.len()];
        for (h, plan) in self.plans.iter().enumerate() {
            let group = s.peers[plan.group].get_ref();
            let first = *first[plan.group].get_or_insert(h);
            let host = if group.count == 1 {
                group.name.clone()
            } else {
                format!("{}[{}]", group.name, h - first)
            };
            if let Some((up, down)) = net.access_links(HostId(h as u32)) {
                name(up, format!("{host}.up"));
                name(down, format!("{host}.down"));
            }
        }
        let recorded = s.record.queues.iter();
        for r in recorded.chain(s.record.waits.iter().map(|w| &w.get_ref().link)) {
            if let Some(id) = self.link_named(r) {
                name(id, r.clone());
            }
        }
        names
    }
}

impl Simulation {
    /// Every link's name, indexed by [`LinkId`] ([`Layout::link_names`]).
    pub fn link_names(&self) -> Vec<String> {
        self.layout().link_names()
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::{parse, DEFAULT_TEXT};
    use crate::sim::Simulation;

    #[test]
    fn links_are_named_as_the_scenario_names_them() {
        let text =
            format!("{DEFAULT_TEXT}\n[sites.isp]\nup = \"100Mbit/s\"\ndown = \"100Mbit/s\"\n")
                .replace(
                    "queues = [\"seeder.up\", \"near.up\"]",
                    "queues = [\"near[1].down\", \"near.up\"]",
                );
        let sim = Simulation::new(parse(&text, "x").unwrap(), None).unwrap();
        let names = sim.link_names();
        // The site's two links come first, then two per host in order.
        assert_eq!(names.len(), 2 + 2 * 51);
        assert_eq!(
            &names[..4],
            ["site:isp.up", "site:isp.down", "seeder.up", "seeder.down"]
        );
        // near[0]'s uplink as record.queues spells it.
        assert_eq!(
            &names[4..8],
            ["near.up", "near[0].down", "near[1].up", "near[1].down"]
        );
        assert_eq!(names.last().unwrap(), "far[24].down");
    }
}
