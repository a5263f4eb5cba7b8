use super::*;
use ppspp_core::proto::{Choking, UploadScheduling};

fn err_of(text: &str) -> ScenarioError {
    parse(text, "test.toml").expect_err("should be refused")
}

#[test]
fn the_default_scenario_parses() {
    let s = parse(DEFAULT_TEXT, "<built-in>").unwrap();
    assert_eq!(s.name, DEFAULT_NAME);
    assert_eq!(s.peers.iter().map(|p| p.get_ref().count).sum::<u32>(), 51);
    assert_eq!(s.content.size, Bytes(4_000_000));
    assert_eq!(s.classes["home-near"].get_ref().up, Bitrate(1_000_000));
}

#[test]
fn unknown_key_names_line_and_hint() {
    let text = DEFAULT_TEXT.replace("tracker_peers = 5", "tracker_peer = 5");
    let e = err_of(&text);
    let line = text
        .lines()
        .position(|l| l.starts_with("tracker_peer "))
        .unwrap()
        + 1;
    assert_eq!(e.line, Some(line), "{e}");
    assert!(e.message.contains("unknown field `tracker_peer`"), "{e}");
    assert!(e.message.contains("tracker_peers"), "{e}");
    assert!(e.to_string().starts_with(&format!("test.toml:{line}: ")));
}

#[test]
fn bad_values_say_what_was_expected() {
    let e = err_of(&DEFAULT_TEXT.replace("up = \"1Mbit/s\"", "up = \"1 Mbananas\""));
    assert!(e.message.contains("is not a rate"), "{e}");
    assert!(e.line.is_some());
    let e = err_of(&DEFAULT_TEXT.replace("queue = \"100ms\"", "queue = \"lots\""));
    assert!(e.message.contains("queue limit"), "{e}");
    let e = err_of(&DEFAULT_TEXT.replace("kind = \"flash\", at", "kind = \"flood\", at"));
    assert!(e.message.contains("unknown variant `flood`"), "{e}");
}

#[test]
fn references_must_exist() {
    let e = err_of(&DEFAULT_TEXT.replace("class = \"home-far\"", "class = \"home-mars\""));
    assert!(e.message.contains("class 'home-mars'"), "{e}");
    let line = DEFAULT_TEXT
        .lines()
        .position(|l| l.contains("name = \"far\""))
        .unwrap()
        + 1;
    // The peer group's table starts on the line after [[peers]].
    assert!(e.line.is_some_and(|l| l.abs_diff(line) <= 1), "{e}");
    let e = err_of(&DEFAULT_TEXT.replace("group = \"far\"", "group = \"moon\""));
    assert!(e.message.contains("group 'moon'"), "{e}");
    let e = err_of(&DEFAULT_TEXT.replace("role = \"seeder\"", "role = \"leecher\""));
    assert!(e.message.contains("no seeder"), "{e}");
    let e = err_of(&DEFAULT_TEXT.replace("\"seeder.up\"", "\"nobody.up\""));
    assert!(e.message.contains("'nobody.up'"), "{e}");
    let text = DEFAULT_TEXT.replace(
        "role = \"leecher\"\n",
        "role = \"leecher\"\nalgorithm = \"psychic\"\n",
    );
    let e = err_of(&text);
    assert!(e.message.contains("unknown algorithm 'psychic'"), "{e}");
}

#[test]
fn an_unknown_policy_is_refused_at_its_line_with_the_known_names() {
    for (key, value, message) in [
        (
            "algorithm",
            "psychic",
            "algorithm = \"psychic\": unknown algorithm 'psychic' \
             (known: sequential, rarest-first, linear, std-vod, swift-vod, buffer-vod, live)",
        ),
        (
            "congestion",
            "cubic",
            "congestion = \"cubic\": unknown congestion controller 'cubic' (known: ledbat, fixed; \
             ledbat:<N>ms sets LEDBAT's target)",
        ),
    ] {
        let text = DEFAULT_TEXT.replace(
            "role = \"leecher\"\n",
            &format!("role = \"leecher\"\n{key} = \"{value}\"\n"),
        );
        let line = text
            .lines()
            .position(|l| l.starts_with(&format!("{key} = ")))
            .unwrap()
            + 1;
        let e = err_of(&text);
        assert_eq!(e.line, Some(line), "{e}");
        assert_eq!(e.message, message);
    }
}

#[test]
fn policies_are_read_by_name() {
    let s = parse(DEFAULT_TEXT, "<built-in>").unwrap();
    for g in &s.peers {
        // The defaults: the built-in scenario has no viewers.
        assert_eq!(g.get_ref().algorithm, None);
        assert_eq!(
            g.get_ref().picker(),
            ppspp_core::pick::PickerKind::RarestFirst
        );
        assert_eq!(g.get_ref().congestion.name(), "ledbat");
    }
    let text = DEFAULT_TEXT.replace(
        "role = \"leecher\"\n",
        "role = \"leecher\"\nalgorithm = \"swift-vod\"\ncongestion = \"fixed\"\n",
    );
    let s = parse(&text, "t.toml").unwrap();
    let leecher = s
        .peers
        .iter()
        .map(|g| g.get_ref())
        .find(|g| g.role == Role::Leecher)
        .unwrap();
    assert_eq!(leecher.picker(), ppspp_core::pick::PickerKind::SwiftVod);
    assert_eq!(leecher.congestion.name(), "fixed");
}

#[test]
fn a_viewer_group_without_an_algorithm_streams_with_the_default() {
    let text = DEFAULT_TEXT.replace(
        "role = \"leecher\"\n",
        "role = \"leecher\"\nplayer = { bitrate = \"1Mbit/s\", prebuffer = \"5s\", rebuffer = \"5s\" }\n",
    );
    let s = parse(&text, "t.toml").unwrap();
    for g in s.peers.iter().map(|g| g.get_ref()) {
        let want = if g.player.is_some() {
            ppspp_core::pick::PickerKind::DEFAULT_VOD
        } else {
            ppspp_core::pick::PickerKind::RarestFirst
        };
        assert_eq!(g.picker(), want, "{}", g.name);
    }
    assert!(s.peers.iter().any(|g| g.get_ref().player.is_some()));
    // Named, the algorithm is what the group gets, viewers or not.
    let named = text.replace(
        "role = \"leecher\"\n",
        "role = \"leecher\"\nalgorithm = \"linear\"\n",
    );
    let s = parse(&named, "t.toml").unwrap();
    for g in s
        .peers
        .iter()
        .map(|g| g.get_ref())
        .filter(|g| g.player.is_some())
    {
        assert_eq!(g.picker(), ppspp_core::pick::PickerKind::Linear);
    }
}

#[test]
fn a_tracker_notice_of_zero_is_refused() {
    let text = DEFAULT_TEXT.replace(
        "tracker_peers = 5",
        "tracker_peers = 5\ntracker_notice = \"0s\"",
    );
    assert!(text.contains("tracker_notice"));
    let e = err_of(&text);
    assert!(e.message.contains("tracker_notice"), "{e}");
    let fine = DEFAULT_TEXT.replace(
        "tracker_peers = 5",
        "tracker_peers = 5\ntracker_notice = \"10ms\"",
    );
    assert_eq!(
        parse(&fine, "t.toml").unwrap().swarm.tracker_notice.0,
        std::time::Duration::from_millis(10)
    );
}

#[test]
fn arrival_and_departure_checks() {
    let text = DEFAULT_TEXT.replacen(
        "arrival = { kind = \"flash\", at = \"1s\", spread = \"10s\" }",
        "arrival = { kind = \"times\", times = [\"1s\", \"2s\"] }",
        1,
    );
    assert!(err_of(&text)
        .message
        .contains("2 arrival times for 25 peers"));
    let text = DEFAULT_TEXT.replacen(
        "arrival = { kind = \"flash\", at = \"1s\", spread = \"10s\" }",
        "departure = { kind = \"weibull\", shape = 0.0, scale = \"60s\" }",
        1,
    );
    assert!(err_of(&text).message.contains("lifetime parameters"));
    // A departure at a fixed time, as a seeder leaving halfway.
    let at = |d: &str| {
        DEFAULT_TEXT.replacen(
            "role = \"seeder\"",
            &format!("role = \"seeder\"\ndeparture = {d}"),
            1,
        )
    };
    let s = parse(&at("{ kind = \"at\", time = \"60s\" }"), "t.toml").unwrap();
    assert!(matches!(
        s.peers[0].get_ref().departure,
        Some(Departure::At { time }) if time.0 == std::time::Duration::from_secs(60)
    ));
    let e = err_of(&at("{ kind = \"at\" }"));
    assert!(e.message.contains("missing field `time`"), "{e}");
    let text = DEFAULT_TEXT.replace(
        "delay = [[\"10ms\", \"40ms\"], [\"40ms\", \"10ms\"]]",
        "delay = [[\"10ms\"]]",
    );
    assert!(err_of(&text).message.contains("2×2 matrix"));
}

#[test]
fn nested_sites_parse_and_bad_nesting_is_refused() {
    let sites = |a: &str, b: &str| {
        format!(
            "{DEFAULT_TEXT}\n[sites.isp]\nup = \"100Mbit/s\"\ndown = \"100Mbit/s\"\n{a}\n\
             [sites.home]\nup = \"10Mbit/s\"\ndown = \"10Mbit/s\"\n{b}\n"
        )
    };
    let s = parse(&sites("", "parent = \"isp\""), "test.toml").unwrap();
    assert_eq!(s.sites["home"].get_ref().parent.as_deref(), Some("isp"));
    let e = err_of(&sites("", "parent = \"nowhere\""));
    assert!(e.message.contains("parent 'nowhere'"), "{e}");
    assert!(e.line.is_some(), "{e}");
    let e = err_of(&sites("parent = \"home\"", "parent = \"isp\""));
    assert!(e.message.contains("cycle"), "{e}");
}

#[test]
fn every_scenario_in_the_folder_parses() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.display().to_string();
            if let Err(e) = parse(&text, &name) {
                panic!("{e}");
            }
            n += 1;
        }
    }
    assert!(n >= 5, "{n} scenarios in {}", dir.display());
}

#[test]
fn a_quantity_without_a_unit_is_refused_with_key_line_and_hint() {
    let text = DEFAULT_TEXT.replacen("delay = \"5ms\"", "delay = \"5\"", 1);
    let line = text.lines().position(|l| l == "delay = \"5\"").unwrap() + 1;
    let e = err_of(&text);
    assert_eq!(e.line, Some(line), "{e}");
    assert_eq!(
        e.message,
        "delay = \"5\": a duration needs a unit, e.g. \"5ms\" or \"5s\""
    );
    assert!(e.hint.as_deref().is_some_and(|h| h.contains("unit")), "{e}");
    // A bare TOML number is no better, for sizes and rates too.
    let e = err_of(&DEFAULT_TEXT.replace("size = \"4MB\"", "size = 4000000"));
    assert!(
        e.message.starts_with("size = 4000000: a size needs a unit"),
        "{e}"
    );
    let e = err_of(&DEFAULT_TEXT.replace("up = \"20Mbit/s\"", "up = \"20\""));
    assert!(
        e.message.starts_with("up = \"20\": a rate needs a unit"),
        "{e}"
    );
    let e = err_of(&DEFAULT_TEXT.replace("queue = \"100ms\"", "queue = 64000"));
    assert!(e.message.contains("a queue limit needs a unit"), "{e}");
    // Packets are a unit of their own, and a queue holds at least one.
    for (text, limit) in [("300 packets", 300), ("25pkt", 25), ("1 packet", 1)] {
        let s = parse(
            &DEFAULT_TEXT.replace("queue = \"100ms\"", &format!("queue = \"{text}\"")),
            "q.toml",
        )
        .unwrap();
        let queues: Vec<Queue> = s.classes.values().map(|c| c.get_ref().queue).collect();
        assert!(
            queues.contains(&Queue::Packets(limit)),
            "{text}: {queues:?}"
        );
    }
    let e = err_of(&DEFAULT_TEXT.replace("queue = \"100ms\"", "queue = \"0 packets\""));
    assert!(e.message.contains("300 packets"), "{e}");
    let e =
        err_of(&DEFAULT_TEXT.replace("delay = \"5ms\"", "delay = \"5ms\"\ndelay_max = \"4ms\""));
    assert!(e.message.contains("delay_max is below delay"), "{e}");
    // Inside an array of arrays, the inner array is quoted.
    let e = err_of(&DEFAULT_TEXT.replace("[\"40ms\", \"10ms\"]]", "[\"40\", \"10ms\"]]"));
    assert!(
        e.message
            .starts_with("[\"40\", \"10ms\"]: a duration needs a unit, e.g. \"40ms\""),
        "{e}"
    );
}

#[test]
fn policies_are_chosen_by_name_and_unknown_names_refused() {
    let with = |line: &str| {
        DEFAULT_TEXT.replace(
            "role = \"leecher\"\n",
            &format!("role = \"leecher\"\n{line}\n"),
        )
    };
    let e = err_of(&with("choking = \"tit-for-tat\""));
    assert!(
        e.message
            .contains("unknown choking 'tit-for-tat' (known: rotation, unchoke-all, delay-slots)"),
        "{e}"
    );
    let e = err_of(&with("upload_scheduling = \"lifo\""));
    assert!(
        e.message
            .contains("unknown upload scheduling 'lifo' (known: fifo, wfq)"),
        "{e}"
    );
    let e = err_of(&with(
        "upload_scheduling = \"fifo\"\nweighted_uploads = true",
    ));
    assert!(e.message.contains("contradicts"), "{e}");
    let ok = parse(
        &with("upload_scheduling = \"wfq\"\nchoking = \"unchoke-all\""),
        "t",
    )
    .unwrap();
    let g = ok
        .peers
        .iter()
        .find(|g| g.get_ref().role == Role::Leecher)
        .unwrap();
    assert_eq!(g.get_ref().upload_scheduling(), Ok(UploadScheduling::Wfq));
    assert_eq!(g.get_ref().choking, Choking::UnchokeAll);
}

#[test]
fn every_swarm_with_leechers_needs_a_seeder() {
    // A second swarm of leechers with nobody to fetch from would never
    // finish: refused, naming the swarm and the group.
    let second = "\n[[peers]]\nname = \"lonely\"\ncount = 2\nclass = \"home-near\"\n\
                  role = \"leecher\"\nswarm = \"b\"\n";
    let e = err_of(&(DEFAULT_TEXT.to_owned() + second));
    assert!(e.message.contains("swarm 'b'"), "{e}");
    assert!(e.message.contains("'lonely'"), "{e}");
    assert!(e.line.is_some(), "{e}");
    // With a seeder of its own it is accepted.
    let seeded = second.to_owned()
        + "\n[[peers]]\nname = \"seed-b\"\nclass = \"home-near\"\nrole = \"seeder\"\nswarm = \"b\"\n";
    parse(&(DEFAULT_TEXT.to_owned() + &seeded), "t.toml").unwrap();
    // A BitTorrent seeder does not seed the ppspp swarm of the same name.
    let bt = second.to_owned()
        + "\n[[peers]]\nname = \"seed-b\"\nclass = \"home-near\"\nrole = \"seeder\"\nswarm = \"b\"\n\
           bittorrent = {}\n";
    let e = err_of(&(DEFAULT_TEXT.to_owned() + &bt));
    assert!(e.message.contains("swarm 'b' (ppspp)"), "{e}");
}

#[test]
fn hosts_and_cross_traffic_need_no_seeder() {
    let text = "name = \"hosts\"\nduration = \"5s\"\n[content]\nsize = \"1MB\"\n\
                [network]\ngroups = [\"all\"]\ndelay = [[\"5ms\"]]\n\
                [classes.home]\nup = \"1Mbit/s\"\ndown = \"1Mbit/s\"\n\
                [[peers]]\nname = \"h\"\ncount = 2\nclass = \"home\"\nrole = \"host\"\n\
                [[flows]]\nkind = \"cbr\"\nfrom = \"h[0]\"\nto = \"h[1]\"\nrate = \"8kbit/s\"\n";
    parse(text, "t.toml").unwrap();
    // Leechers alone are still refused, as before.
    let e = err_of(&text.replace("role = \"host\"", "role = \"leecher\""));
    assert!(
        e.message.contains("no seeder: nobody has the content"),
        "{e}"
    );
}
