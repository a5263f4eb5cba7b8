//! At trace level the core says, per chunk, what `bench/live_hops.py`
//! follows a chunk through a swarm with: "have received", "chunks
//! requested", "chunk sent" and "chunk verified", in the peer's span at
//! virtual time, each naming the other peer. Every verified chunk of a
//! small swarm can be traced back through the other three lines.

mod common;

use std::collections::HashMap;

use common::traced::run_traced;
use ppspp_lab::run::run;
use tracing::Level;

const SMALL: &str = include_str!("small_swarm.toml");

/// One of the four lines: when, at which peer (its lab address), what,
/// the other peer's address, and the chunks named.
#[derive(Debug)]
struct Line {
    at: f64,
    peer: String,
    what: &'static str,
    other: String,
    first: u64,
    last: u64,
}

/// The lab's address of a `small_swarm.toml` peer by its span name: the
/// seeder is host 0, leecher i host i + 1 (`sim::peer::addr_of`).
fn addr_of(name: &str) -> String {
    let host = match name {
        "seeder" => 0,
        _ => {
            let i: u32 = name
                .trim_start_matches("leechers[")
                .trim_end_matches(']')
                .parse()
                .unwrap();
            i + 1
        }
    };
    format!("10.0.0.{}:6778", host + 1)
}

fn parse(line: &str) -> Option<Line> {
    const KINDS: [&str; 4] = [
        "have received",
        "chunks requested",
        "chunk sent",
        "chunk verified",
    ];
    let what = KINDS
        .into_iter()
        .find(|k| line.contains(&format!(": {k} ")))?;
    let at: f64 = line
        .split_whitespace()
        .next()?
        .trim_end_matches('s')
        .parse()
        .ok()?;
    let name = line.split("peer{name=").nth(1)?.split('}').next()?;
    let fields: HashMap<&str, &str> = line
        .split(&format!(": {what} "))
        .nth(1)?
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .collect();
    let other = fields.get("from").or(fields.get("to"))?.to_string();
    let (first, last) = match fields.get("chunk") {
        Some(c) => (c.parse().ok()?, c.parse().ok()?),
        None => (fields["first"].parse().ok()?, fields["last"].parse().ok()?),
    };
    Some(Line {
        at,
        peer: addr_of(name),
        what,
        other,
        first,
        last,
    })
}

#[test]
fn every_verified_chunk_traces_back_to_its_have_request_and_data() {
    let untraced = run(SMALL, "small_swarm.toml", None, None, |_| {}).unwrap();
    let (traced, text) = run_traced(SMALL, "small_swarm.toml", Level::TRACE);
    let lines: Vec<Line> = text.lines().filter_map(parse).collect();

    let verified: Vec<&Line> = lines
        .iter()
        .filter(|l| l.what == "chunk verified")
        .collect();
    // 200 KB in 1 KiB chunks, to each of the five leechers.
    assert_eq!(verified.len(), 5 * 196, "{}", &text[..text.len().min(4000)]);
    let before = |what: &str, at: f64, peer: &str, other: &str, chunk: u64| {
        lines.iter().any(|l| {
            l.what == what
                && l.at <= at
                && l.peer == peer
                && l.other == other
                && (l.first..=l.last).contains(&chunk)
        })
    };
    for v in &verified {
        let c = v.first;
        assert!(
            before("chunk sent", v.at, &v.other, &v.peer, c),
            "no DATA sent before {v:?}"
        );
        assert!(
            before("chunks requested", v.at, &v.peer, &v.other, c),
            "no REQUEST before {v:?}"
        );
        assert!(
            before("have received", v.at, &v.peer, &v.other, c),
            "no HAVE before {v:?}"
        );
    }
    // Tracing changes nothing in the run.
    assert_eq!(traced.summary.trace_hash, untraced.summary.trace_hash);
}
