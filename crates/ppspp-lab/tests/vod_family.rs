//! `scenarios/vod-family/`: the scenarios that differ from E1 along the
//! axes deployments differ on (issue 23). Every one parses and builds, says
//! what it stands for, and the E1 copies at 32, 96 and 208 viewers stay
//! E1 (`scenarios/e1-vod.toml`) but for their name and size.

use std::path::{Path, PathBuf};

use ppspp_lab::family::Family;
use ppspp_lab::scenario::parse;
use ppspp_lab::sim::Simulation;

fn scenarios() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

#[test]
fn every_scenario_of_the_family_parses_builds_and_says_what_it_is() {
    let dir = scenarios().join("vod-family");
    let (family, texts) = Family::read(&dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(family.name, "vod-family");
    let names: Vec<&str> = family.scenarios.iter().map(|m| m.name.as_str()).collect();
    for want in ["e1-32", "e1-96", "e1-208"] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    // At least eight besides E1's sizes.
    assert!(names.len() >= 11, "{names:?}");
    for (m, text) in family.scenarios.iter().zip(&texts) {
        // A header comment says what it stands for; the name is the
        // file's, so tables and files agree.
        assert!(text.starts_with("# "), "{}: no header comment", m.file);
        assert_eq!(format!("{}.toml", m.name), m.file);
        assert!(!m.description.is_empty(), "{}", m.file);
        let s = parse(text, &m.file).unwrap();
        let viewers: u32 = s
            .peers
            .iter()
            .map(|p| p.get_ref())
            .filter(|p| p.player.is_some())
            .map(|p| p.count)
            .sum();
        assert!(viewers > 0, "{}: no viewers", m.file);
        let sim = Simulation::new(s, None).unwrap_or_else(|e| panic!("{}: {e}", m.file));
        assert_eq!(sim.scenario().name, m.name);
    }
}

/// The scenario `text` as a TOML table without the keys a size copy of E1
/// changes: name, description and the viewers' count.
fn without_size(text: &str) -> toml::Table {
    let mut t: toml::Table = toml::from_str(text).unwrap();
    t.remove("name");
    t.remove("description");
    let peers = t.get_mut("peers").and_then(|p| p.as_array_mut()).unwrap();
    let leechers = peers
        .iter_mut()
        .filter_map(|p| p.as_table_mut())
        .find(|p| p.get("name").and_then(|n| n.as_str()) == Some("leechers"))
        .unwrap();
    leechers.remove("count");
    t
}

#[test]
fn the_e1_sizes_are_e1_but_for_the_count() {
    let e1 = std::fs::read_to_string(scenarios().join("e1-vod.toml")).unwrap();
    for n in [32, 96, 208] {
        let file = scenarios().join(format!("vod-family/e1-{n}.toml"));
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            without_size(&text),
            without_size(&e1),
            "{} differs from e1-vod.toml beyond name, description and count: \
             keep it in sync",
            file.display()
        );
        let s = parse(&text, "x").unwrap();
        let leechers = s.peers.iter().find(|p| p.get_ref().name == "leechers");
        assert_eq!(leechers.unwrap().get_ref().count, n);
    }
}
