#!/usr/bin/env python3
"""E3 (seed paper 001, "Is uTP a good idea?"): BitTorrent swarms over TCP,
uTP and their mixtures, one command per figure of the paper.

Usage: bench/e3.py FIGURE [--binary target/release/ppspp] [--seeds 1,2,3]
                   [--jobs 2] [--out lab-results/e3] [--uplink RATE]
                   [--utp-target DELAY] [--set KEY=VALUE ...]

FIGURE is one of
  fig2      homogeneous swarms: scenarios/e3-default (31), e3-utp (10),
            e3-tcp (5): completion-time CDF and access-queue CCDF per case;
            beside them scenarios/e3-ppspp, the same swarm with ppspp, and
            e3-ppspp-slots, ppspp with delay-steered upload slots
  fig3      heterogeneous swarms: scenarios/e3-mix-25-75, -50-50, -75-25
            (13 prefers TCP, 14 uTP): the same, and per class
  fig4      completion time against the TCP byte share and against the mean
            buffer occupancy, every case above, with a least-squares line
            over the cases that carry TCP (runs what fig2/fig3 did not)
  all       the three

Runs each scenario once per seed with the release binary (`cargo build
--release -p ppspp` first), `--jobs` at a time, into OUT/<scenario>-s<seed>
(a run already there is not run again: delete it to redo it). `--set` is
passed to every run; `--uplink 2Mbit/s` sets every uplink's rate C (the
queue stays B/C = 1 s) and `--utp-target 25ms` every BitTorrent group's uTP
target, whatever the scenario names its groups (give each its own `--out`,
e.g. `--uplink 2Mbit/s --out lab-results/e3-2mbit`). Prints one table row per case:
completion time mean and sd over all leechers of all seeds (the paper's
E[T] and sigma[T]), the TCP/uTP byte shares, the mean queue over every
uplink in KB and in ms at the uplink's rate (E[Q]), uplink utilisation and
drops, the share of dequeues that leave the queue non-empty on the
recorded leecher uplinks (the paper: about 80 %), and the simulator's speed (median over seeds of virtual ÷ wall time
and events per second, one thread per run: issue 25's speed goal is a
76-peer E3 faster than real time). Writes OUT/<figure>-*.svg (the queue
CCDF in KB and, as the paper's second axis, in ms) and
OUT/<figure>.csv (the table).

Queue occupancy is sampled after every dequeue (as the paper's kernel
instrumentation did) on the uplinks the scenarios record (the seed's and a
few leechers'); E[Q] comes from every uplink's mean over all its dequeues
(link_stats.csv).
"""
import argparse
import csv
import json
import os
import statistics
import sys
import tomllib
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import lab_run, rows  # noqa: E402
from svgplot import Plot  # noqa: E402

HOMOGENEOUS = [("e3-default", "31 (default)"), ("e3-utp", "10 (uTP only)"), ("e3-tcp", "5 (TCP only)")]
# Issue 25's third column: the same swarm running ppspp over LEDBAT.
# e3-ppspp-slots: the same with the core's delay-steered upload slots.
PPSPP = [("e3-ppspp", "ppspp (LEDBAT)"), ("e3-ppspp-slots", "ppspp, delay-slots")]
MIXTURES = [("e3-mix-75-25", "13/14 at 75/25"), ("e3-mix-50-50", "13/14 at 50/50"), ("e3-mix-25-75", "13/14 at 25/75")]


def scenario_sets(scenario, args):
    """The `--set`s of one run: the user's, the uplink rate, and the uTP
    target on every BitTorrent group of this scenario (group names differ
    between scenarios, so a plain `--set` cannot name them all)."""
    sets = list(args.sets)
    if args.uplink:
        sets.append(f"classes.adsl.up={args.uplink}")
    if args.utp_target:
        with open(f"scenarios/{scenario}.toml", "rb") as f:
            groups = tomllib.load(f).get("peers", [])
        sets += [f"peers.{g['name']}.bittorrent.utp_target={args.utp_target}" for g in groups if "bittorrent" in g]
    return sets


def load(folder):
    """One run's figures."""
    peers = rows(os.path.join(folder, "peers.csv"))
    bt = {r["id"]: r for r in rows(os.path.join(folder, "bittorrent.csv"))}
    links = rows(os.path.join(folder, "link_stats.csv"))
    ct = {}
    for p in peers:
        if p["role"] == "leecher" and p["download_s"]:
            ct.setdefault(p["group"], []).append(float(p["download_s"]))
    tcp = sum(int(r["bytes_down_tcp"]) for r in bt.values())
    utp = sum(int(r["bytes_down_utp"]) for r in bt.values())
    share = tcp / (tcp + utp) if tcp + utp > 0 else None
    end = max(float(p["complete_s"] or 0) for p in peers)
    ups = [r for r in links if r["name"].endswith(".up")]
    q_bytes = statistics.mean(float(r["mean_backlog_bytes"]) for r in ups)
    rate = statistics.mean(int(r["capacity_bps"]) for r in ups)
    util = statistics.mean(int(r["bytes_out"]) * 8 / int(r["capacity_bps"]) / end for r in ups)
    # Per-group mean queue (a link is named GROUP.up or GROUP[i].up).
    q_group = {}
    for r in ups:
        g = r["name"].split("[")[0].removesuffix(".up")
        q_group.setdefault(g, []).append(float(r["mean_backlog_bytes"]))
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    samples = []
    with open(os.path.join(folder, "links.csv")) as f:
        for r in csv.DictReader(f):
            if not r["name"].startswith("seed"):
                samples.append((float(r["backlog_bytes"]), float(r["backlog_ms"])))
    return {
        "ct": ct,
        "tcp_share": share,
        "q_bytes": q_bytes,
        "q_ms": q_bytes * 8 / rate * 1000,
        "q_group_ms": {g: statistics.mean(v) * 8 / rate * 1000 for g, v in q_group.items()},
        "util": util,
        "drops": sum(int(r["drops_queue"]) for r in ups),
        "samples": samples,
        "speed": summary["virtual_s"] / summary["wall_s"],
        "events_per_s": summary["events_per_s"],
    }


def cdf(values):
    v = sorted(values)
    return [(x, (i + 1) / len(v)) for i, x in enumerate(v)]


def ccdf(values, points=200):
    v = sorted(values)
    n = len(v)
    if n == 0:
        return []
    out = []
    step = max(1, n // points)
    for i in range(0, n, step):
        out.append((v[i], 1 - i / n))
    out.append((v[-1], 1 / n))
    return out


def case(args, scenario, label):
    folders = [os.path.join(args.out, f"{scenario}-s{s}") for s in args.seeds]
    runs = [load(f) for f in folders]
    all_ct = [t for r in runs for g in r["ct"].values() for t in g]
    return {
        "scenario": scenario,
        "label": label,
        "runs": runs,
        "mean_t": statistics.mean(all_ct),
        "sd_t": statistics.pstdev(all_ct),
        "tcp_share": None if runs[0]["tcp_share"] is None else statistics.mean(r["tcp_share"] for r in runs),
        "q_kb": statistics.mean(r["q_bytes"] for r in runs) / 1000,
        "q_ms": statistics.mean(r["q_ms"] for r in runs),
        "util": statistics.mean(r["util"] for r in runs),
        "drops": statistics.mean(r["drops"] for r in runs),
        "busy": statistics.mean(sum(1 for q in r["samples"] if q[0] > 0) / max(1, len(r["samples"])) for r in runs),
        "speed": statistics.median(r["speed"] for r in runs),
        "events_per_s": statistics.median(r["events_per_s"] for r in runs),
    }


def table(cases, path):
    head = ["case", "E[T] s", "sd[T] s", "TCP/uTP bytes %", "E[Q] KB", "E[Q] ms", "P(Q>0)", "uplink util", "drops/run",
            "× real time", "events/s"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scenario", "mean_t_s", "sd_t_s", "tcp_share", "q_kb", "q_ms", "util", "drops"])
        for c in cases:
            share = "—" if c["tcp_share"] is None else f"{100 * c['tcp_share']:.0f}/{100 * (1 - c['tcp_share']):.0f}"
            print(f"| {c['label']} | {c['mean_t']:.0f} | {c['sd_t']:.1f} | {share} | {c['q_kb']:.1f} | "
                  f"{c['q_ms']:.0f} | {c['busy']:.2f} | {c['util']:.3f} | {c['drops']:.0f} | {c['speed']:.1f} | "
                  f"{c['events_per_s'] / 1000:.0f} k |")
            w.writerow([c["scenario"], f"{c['mean_t']:.1f}", f"{c['sd_t']:.2f}", "" if c["tcp_share"] is None else f"{c['tcp_share']:.4f}",
                        f"{c['q_kb']:.2f}", f"{c['q_ms']:.1f}", f"{c['util']:.4f}", f"{c['drops']:.0f}"])


def per_class(cases):
    for c in cases:
        groups = sorted({g for r in c["runs"] for g in r["ct"]})
        parts = []
        for g in groups:
            ts = [t for r in c["runs"] for t in r["ct"].get(g, [])]
            qs = [r["q_group_ms"].get(g) for r in c["runs"] if g in r["q_group_ms"]]
            parts.append(f"{g}: E[T] {statistics.mean(ts):.0f} s, E[Q] {statistics.mean(qs):.0f} ms")
        print(f"- {c['label']}: " + "; ".join(parts))


def figures(cases, out, fig):
    t = Plot("completion time (s)", "CDF", f"{fig}: completion time CDF, every seed")
    # The paper draws one CCDF with two x axes (KB and ms at the uplink's
    # rate); here they are two plots.
    q = Plot("queue after dequeue (KB)", "CCDF", f"{fig}: uplink occupancy CCDF (recorded leecher uplinks)", logy=True)
    q_ms = Plot("queue after dequeue (ms at the uplink's rate)", "CCDF",
                f"{fig}: uplink occupancy CCDF in delay (recorded leecher uplinks)", logy=True)
    for c in cases:
        for k, r in enumerate(c["runs"]):
            name = c["label"] if k == 0 else None
            t.line(cdf([x for g in r["ct"].values() for x in g]), name, group=c["label"])
            q.line([(b / 1000, p) for b, p in ccdf([s[0] for s in r["samples"]])], name, group=c["label"])
            q_ms.line(ccdf([s[1] for s in r["samples"]]), name, group=c["label"])
    t.save(os.path.join(out, f"{fig}-completion-cdf.svg"))
    q.save(os.path.join(out, f"{fig}-queue-ccdf.svg"))
    q_ms.save(os.path.join(out, f"{fig}-queue-ccdf-ms.svg"))


def fit(points):
    n = len(points)
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        return None
    b = sum((p[0] - mx) * (p[1] - my) for p in points) / sxx
    return my - b * mx, b


def fig4(cases, out):
    for key, xlabel, name in [("tcp_share", "TCP byte share (%)", "share"), ("q_kb", "mean buffer occupancy E[Q] (KB)", "queue")]:
        p = Plot(xlabel, "completion time (s)", f"fig4: E[T] against {xlabel}")
        pts = []
        for c in cases:
            for r in c["runs"]:
                ts = [x for g in r["ct"].values() for x in g]
                x = 100 * r["tcp_share"] if key == "tcp_share" else r["q_bytes"] / 1000
                pts.append((x, statistics.mean(ts), r["tcp_share"] > 0))
            p.point(100 * c["tcp_share"] if key == "tcp_share" else c["q_kb"], c["mean_t"], c["label"])
        line = fit([(x, y) for x, y, tcp in pts if tcp])
        if line:
            a, b = line
            xs = [x for x, _, tcp in pts if tcp]
            p.line([(min(xs), a + b * min(xs)), (max(xs), a + b * max(xs))], f"fit (non-0 TCP): {a:.0f} + {b:.2f}·x")
            print(f"- fig4 {name}: E[T] = {a:.1f} + {b:.3f}·x over {len([1 for *_, t in pts if t])} runs with TCP")
        p.save(os.path.join(out, f"fig4-{name}.svg"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("figure", choices=["fig2", "fig3", "fig4", "all"])
    ap.add_argument("--binary", default="target/release/ppspp")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="lab-results/e3")
    ap.add_argument("--set", action="append", default=[], dest="sets")
    ap.add_argument("--uplink", help="every uplink's rate C, e.g. 2Mbit/s (the queue stays 1 s)")
    ap.add_argument("--utp-target", help="uTP's target delay on every BitTorrent peer, e.g. 25ms")
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    os.makedirs(args.out, exist_ok=True)
    wanted = {
        "fig2": HOMOGENEOUS + PPSPP,
        "fig3": MIXTURES,
        "fig4": HOMOGENEOUS + MIXTURES,
    }.get(args.figure, HOMOGENEOUS + PPSPP + MIXTURES)
    jobs = [(s, seed) for s, _ in wanted for seed in args.seeds]
    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(lambda j: lab_run(args.binary, f"scenarios/{j[0]}.toml", j[1],
                                        os.path.join(args.out, f"{j[0]}-s{j[1]}"), scenario_sets(j[0], args)), jobs))
    if args.figure in ("fig2", "all"):
        cases = [case(args, s, l) for s, l in HOMOGENEOUS + PPSPP]
        print("### fig2: homogeneous swarms (and ppspp's column)")
        table(cases, os.path.join(args.out, "fig2.csv"))
        figures(cases, args.out, "fig2")
    if args.figure in ("fig3", "all"):
        cases = [case(args, s, l) for s, l in MIXTURES]
        print("### fig3: heterogeneous swarms")
        table(cases, os.path.join(args.out, "fig3.csv"))
        per_class(cases)
        figures(cases, args.out, "fig3")
    if args.figure in ("fig4", "all"):
        cases = [case(args, s, l) for s, l in HOMOGENEOUS + MIXTURES]
        print("### fig4: completion time against TCP share and buffer occupancy")
        table(cases, os.path.join(args.out, "fig4.csv"))
        fig4(cases, args.out)


if __name__ == "__main__":
    main()
