//! `record.startup_bytes`: each leecher's time to hold a start-up size —
//! a ppspp peer in order from the start, a BitTorrent peer anywhere — as
//! seed paper 000 §IV-B times its 11.4 MB.

use ppspp_lab::run::run;
use ppspp_lab::scenario::Role;
use ppspp_lab::sim::PeerResult;

const SMALL: &str = include_str!("small_swarm.toml");

fn leechers(text: &str) -> Vec<PeerResult> {
    let o = run(text, "t.toml", None, None, |_| {}).unwrap();
    o.peers
        .into_iter()
        .filter(|p| p.role == Role::Leecher)
        .collect()
}

fn with(algorithm: &str, startup: &str) -> String {
    SMALL
        .replace(
            "role = \"leecher\"",
            &format!("role = \"leecher\"\nalgorithm = \"{algorithm}\""),
        )
        .replace(
            "[record]",
            &format!("[record]\nstartup_bytes = \"{startup}\""),
        )
}

fn download(p: &PeerResult) -> f64 {
    p.complete_s.unwrap() - p.join_s.unwrap()
}

#[test]
fn ppspp_counts_the_prefix_in_order() {
    // A quarter of the 200 KB content: sequential holds it early in its
    // download; rarest-first, which fetches in no order, near the end.
    let seq = leechers(&with("sequential", "50KB"));
    let rarest = leechers(&with("rarest-first", "50KB"));
    let mean = |ps: &[PeerResult]| {
        ps.iter()
            .map(|p| p.startup_bytes_s.unwrap() / download(p))
            .sum::<f64>()
            / ps.len() as f64
    };
    for p in seq.iter().chain(&rarest) {
        let s = p.startup_bytes_s.expect("every leecher got there");
        assert!(s > 0.0 && s <= download(p) + 1e-9, "{s} of {}", download(p));
    }
    let (s, r) = (mean(&seq), mean(&rarest));
    // Seed 7: sequential 0.59 (the first round trips weigh on a 0.4 s
    // download), rarest-first 0.94.
    assert!(s < 0.75, "sequential at {s} of its download");
    assert!(r > s + 0.25, "rarest-first at {r}, sequential at {s}");
}

#[test]
fn the_whole_content_is_the_completion_and_no_record_leaves_it_empty() {
    for p in leechers(&with("rarest-first", "10MB")) {
        let s = p.startup_bytes_s.unwrap();
        assert!(
            (s - download(&p)).abs() < 1e-6,
            "{s} against {}",
            download(&p)
        );
    }
    let none = leechers(SMALL);
    assert!(none.iter().all(|p| p.startup_bytes_s.is_none()));
}

#[test]
fn bittorrent_counts_pieces_anywhere() {
    // 16 pieces of 64 KB; a quarter is 4 pieces, wherever they are:
    // rarest-first BitTorrent holds them well before it completes.
    let text = SMALL
        .replace("size = \"200KB\"", "size = \"1024KB\"")
        .replace(
            "role = \"seeder\"",
            "role = \"seeder\"\nbittorrent = { piece_size = \"64KiB\" }",
        )
        .replace(
            "role = \"leecher\"",
            "role = \"leecher\"\nbittorrent = { piece_size = \"64KiB\" }",
        )
        .replace("[record]", "[record]\nstartup_bytes = \"256KB\"");
    let ls = leechers(&text);
    assert_eq!(ls.len(), 5);
    for p in &ls {
        let s = p.startup_bytes_s.expect("held a quarter");
        assert!(s > 0.0 && s < 0.6 * download(p), "{s} of {}", download(p));
    }
}
