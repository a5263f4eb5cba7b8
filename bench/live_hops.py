#!/usr/bin/env python3
"""Where a live chunk's delivery time goes, hop by hop (issue 24).

Usage: bench/live_hops.py [--binary target/release/ppspp]
                          [--scenario scenarios/live-500.toml] [--seed 1]
                          [--set KEY=VALUE ...] [--skip-chunks 600]
                          [--out lab-results/live-hops]

Runs a live scenario once with the core's per-chunk trace lines on
(`RUST_LOG=ppspp_lab=info,ppspp_core::proto::channel=trace`: "have
received", "chunks requested", "chunk sent", "chunk verified", each in
the peer's span at virtual time) and reads them from the run's stderr as
they come, so nothing is stored but the tables. Without `--set` it
runs `live-500` with 200 viewers for 20 s of stream (`--set
peers.viewers.count=200 --set live.duration=20s --set duration=30s`,
about two minutes of wall time); any `--set` replaces those three. The
trace is large (3.4 M lines for that run), so keep runs short.

It prints:
- how many hops from the source each verified copy of a chunk is (the
  chain of `from` peers back to the source), with the delivery delay (the
  chunk made -> verified there) per depth;
- one peer-to-peer hop split in four: the sender verified the chunk ->
  its HAVE reached the receiver; HAVE -> the receiver's REQUEST; REQUEST
  -> the sender's DATA left; DATA left -> verified at the receiver;
- the same from the source (from the chunk being made).

The first `--skip-chunks` chunks (about 5 s of a 1 Mbit/s stream of 1 KiB
chunks) are left out: the flash crowd's start is another regime.
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tomllib

TRACE = "ppspp_lab=info,ppspp_core::proto::channel=trace"
LINE = re.compile(
    r"^\s*([\d.]+)s TRACE peer\{name=([^\]}]+?)(?:\[(\d+)\])?\}.*?: "
    r"(chunk verified|chunks requested|chunk sent|have received) (.*)$"
)
# The lab's addresses: host h is 10.x.y.z with x.y.z = h + 1
# (`ppspp-lab/src/sim/peer.rs`, `addr_of`).
ADDR = re.compile(r"10\.(\d+)\.(\d+)\.(\d+):\d+")


def host_of_addr(a):
    m = ADDR.fullmatch(a)
    return ((int(m[1]) << 16) | (int(m[2]) << 8) | int(m[3])) - 1


def host_offsets(scenario, sets):
    """Group name -> (first host, count): a scenario's hosts are its
    groups' in file order, consecutive (as the lab's peer names are)."""
    groups = [(g["name"], int(g.get("count", 1))) for g in scenario["peers"]]
    for s in sets:
        key, _, value = s.partition("=")
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "peers" and parts[2] == "count":
            groups = [(n, int(value) if n == parts[1] else c) for n, c in groups]
    out, first = {}, 0
    for name, count in groups:
        out[name] = (first, count)
        first += count
    return out


def quantile(v, q):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[int(q * (len(v) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default="target/release/ppspp")
    ap.add_argument("--scenario", default="scenarios/live-500.toml")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="lab-results/live-hops")
    ap.add_argument("--skip-chunks", type=int, default=600)
    ap.add_argument("--set", action="append", dest="sets", default=None)
    a = ap.parse_args()
    sets = a.sets if a.sets is not None else [
        "peers.viewers.count=200", "live.duration=20s", "duration=30s"]
    with open(a.scenario, "rb") as f:
        scenario = tomllib.load(f)
    offsets = host_offsets(scenario, sets)
    chunk_s = chunk_seconds(scenario, sets)
    source = source_group(scenario)

    cmd = [a.binary, "lab", "run", a.scenario, "--seed", str(a.seed), "--out", a.out, "--force"]
    for s in sets:
        cmd += ["--set", s]
    print(" ".join(cmd), flush=True)
    env = dict(os.environ, RUST_LOG=TRACE)
    verified = {}  # (host, chunk) -> (t, from host)
    requested = {}  # (host, to, chunk) -> last request time
    sent = {}  # (receiver, sender, chunk) -> last DATA time
    have = {}  # (host, from, chunk) -> first HAVE time
    pending = []  # (receiver, chunk, t, sender) seen verified, split at the end
    with subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True) as p:
        for line in p.stderr:
            m = LINE.match(line)
            if not m:
                continue
            first, _ = offsets.get(m[2], (None, 0))
            if first is None:
                continue
            me = first + (int(m[3]) if m[3] is not None else 0)
            t = float(m[1])
            kv = dict(x.split("=", 1) for x in m[5].split())
            what = m[4]
            if what == "chunk verified":
                c = int(kv["chunk"])
                f = host_of_addr(kv["from"])
                verified[(me, c)] = (t, f)
                if c >= a.skip_chunks:
                    pending.append((me, c, t, f))
            elif what == "chunks requested":
                to = host_of_addr(kv["to"])
                for c in range(int(kv["first"]), int(kv["last"]) + 1):
                    requested[(me, to, c)] = t
            elif what == "chunk sent":
                sent[(host_of_addr(kv["to"]), me, int(kv["chunk"]))] = t
            else:
                f = host_of_addr(kv["from"])
                lo, hi = int(kv["first"]), int(kv["last"])
                # A HAVE of many chunks is a catch-up on connecting, not the
                # news of a chunk just verified.
                if hi - lo < 64:
                    for c in range(lo, hi + 1):
                        have.setdefault((me, f, c), t)
    if p.returncode != 0:
        sys.exit(f"lab run failed ({p.returncode})")
    if not pending:
        sys.exit("no trace lines: is this a release build of this tree?")
    report(verified, requested, sent, have, pending, offsets[source][0], chunk_s)


def chunk_seconds(scenario, sets):
    """Media seconds per chunk of the scenario's live stream."""
    size = scenario["content"]["chunk_size"]
    rate = scenario["live"]["bitrate"]
    for s in sets:
        key, _, value = s.partition("=")
        if key == "content.chunk_size":
            size = value
        if key == "live.bitrate":
            rate = value
    return parse_bytes(size) * 8 / parse_bits(rate)


def parse_bytes(s):
    for unit, k in (("KiB", 1024), ("B", 1)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * k
    return float(s)


def parse_bits(s):
    for unit, k in (("Mbit/s", 1e6), ("kbit/s", 1e3), ("bit/s", 1)):
        if s.endswith(unit):
            return float(s[: -len(unit)]) * k
    return float(s)


def source_group(scenario):
    """The name of the scenario's source group."""
    for g in scenario["peers"]:
        if g.get("role") == "source":
            return g["name"]
    sys.exit("the scenario has no source")


def report(verified, requested, sent, have, pending, source, chunk_s):
    memo = {}

    def depth(h, c):
        if h == source:
            return 0
        if (h, c) in memo:
            return memo[(h, c)]
        memo[(h, c)] = None  # a cycle reads as unknown
        r = verified.get((h, c))
        d = None if r is None else depth(r[1], c)
        memo[(h, c)] = None if d is None else d + 1
        return memo[(h, c)]

    by_depth = collections.defaultdict(list)
    parts = collections.defaultdict(list)
    src = collections.defaultdict(list)
    for v, c, t, f in pending:
        made = (c + 1) * chunk_s
        by_depth[depth(v, c)].append(t - made)
        r, s = requested.get((v, f, c)), sent.get((v, f, c))
        if r is None or s is None or r > t or s > t:
            continue
        if f == source:
            src["made -> REQUEST"].append(r - made)
            src["REQUEST -> DATA left"].append(s - r)
            src["DATA left -> verified"].append(t - s)
            src["whole hop"].append(t - made)
            continue
        h = have.get((v, f, c))
        if h is None or h > r:
            continue
        start = verified[(f, c)][0]
        parts["sender verified -> HAVE in"].append(h - start)
        parts["HAVE in -> REQUEST"].append(r - h)
        parts["REQUEST -> DATA left"].append(s - r)
        parts["DATA left -> verified"].append(t - s)
        parts["whole hop"].append(t - start)

    print("\n| hops from the source | copies | share | delivery p50 s | delivery p95 s |")
    print("|---:|---:|---:|---:|---:|")
    total = sum(len(x) for x in by_depth.values())
    for d in sorted(by_depth, key=lambda k: (k is None, k or 0)):
        x = by_depth[d]
        print(f"| {'?' if d is None else d} | {len(x)} | {len(x) / total:.3f} "
              f"| {quantile(x, 0.5):.3f} | {quantile(x, 0.95):.3f} |")
    for title, table in (("peer to peer", parts), ("from the source", src)):
        print(f"\n| one hop, {title} (s) | n | p10 | p50 | p90 | p99 | mean |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for k, x in table.items():
            print(f"| {k} | {len(x)} | {quantile(x, 0.1):.3f} | {quantile(x, 0.5):.3f} "
                  f"| {quantile(x, 0.9):.3f} | {quantile(x, 0.99):.3f} | {sum(x) / len(x):.3f} |")


if __name__ == "__main__":
    sys.exit(main())
