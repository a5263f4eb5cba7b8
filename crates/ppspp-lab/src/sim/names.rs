//! Links by the names a scenario gives them, so results and reports say
//! `seeder.up` or `site:isp.down` rather than a link number.

use super::Simulation;
use crate::net::{LinkId, SiteId};
use crate::packet::HostId;

impl Simulation {
    /// Every link's name, indexed by [`LinkId`]: as `record.queues` or
    /// `record.waits` spells it when they name the link (so `near.up`
    /// stays `near.up` everywhere), else `GROUP.up` / `GROUP.down` for the
    /// only peer of a group, `GROUP[i].up` for the `i`-th of several, and
    /// `site:NAME.up` for a site's. Each is a reference the scenario
    /// accepts in `record.queues`.
    pub fn link_names(&self) -> Vec<String> {
        let net = self.network();
        let s = self.scenario();
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
        for (h, plan) in self.shared.plans.iter().enumerate() {
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
