#!/usr/bin/env python3
"""The emulator against the simulator (issue 27, "Fidelity"): the same
scenarios and seeds run by `ppspp lab run` (virtual time) and `ppspp lab
emulate` (real nodes, real time), and their headline figures side by side
with the emulator's difference from the simulator's mean over seeds.

    python3 bench/emulate_fidelity.py [--case flash-100,vod-small,vod-stalls,live-small,live-stalls] [--seeds 1,2,3,4,5]

Runs already in --out are not repeated. The simulations run first; the
emulations then one at a time, so that nothing else shares the cores
with them. Each emulation takes the scenario's real time: about 95 s for
flash-100, 50-60 s for vod-small and vod-stalls, 65 s for the live cases.
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labrun import lab_run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (scenario, --set overrides)
CASES = {
    # The built-in flash crowd with 100 leechers in place of 50.
    "flash-100": ("scenarios/flash-crowd.toml", ["peers.near.count=50", "peers.far.count=50"]),
    "vod-small": ("scenarios/vod-small.toml", []),
    # vod-small with a 1.6 Mbit/s video: the viewers stall (about 1.5
    # stalls each), so that stalls are compared on more than a handful.
    "vod-stalls": ("scenarios/vod-small.toml", ["peers.viewers.player.bitrate=1.6Mbit/s"]),
    # 20 viewers of a 1 Mbit/s live stream; the viewers' uplinks (1.5
    # Mbit/s) carry most of it.
    "live-small": ("scenarios/live-small.toml", []),
    # live-small on 1.1 Mbit/s viewer uplinks and a 3 Mbit/s source: the
    # swarm can barely carry the stream, and viewers stall and skip.
    "live-stalls": ("scenarios/live-small.toml", ["classes.home.up=1.1Mbit/s", "classes.source.up=3Mbit/s"]),
}

# (label, path in summary.json)
FIGURES = [
    ("download s mean", ("download_s", "mean")),
    ("download s p95", ("download_s", "p95")),
    ("startup s mean", ("playback", "startup_s", "mean")),
    ("startup s p95", ("playback", "startup_s", "p95")),
    ("stalls per viewer", ("playback", "stalls_per_viewer")),
    ("stall s per viewer", ("playback", "stall_s_per_viewer")),
]

# A live run's own figures (summary.json's `live`): its "download time" is
# when a viewer played the stream to its end, so it is left out.
LIVE_FIGURES = [
    ("startup s mean", ("live", "startup_s", "mean")),
    ("startup s p95", ("live", "startup_s", "p95")),
    ("lag s p50", ("live", "lag_s", "p50")),
    ("lag s p95", ("live", "lag_s", "p95")),
    ("continuity", ("live", "continuity", "mean")),
    ("stalls per viewer", ("live", "stalls_per_viewer")),
    ("stall s per viewer", ("live", "stall_s_per_viewer")),
    ("skips per viewer", ("live", "skips_per_viewer")),
    ("delivery s p50", ("live", "delivery_s", "p50")),
]


def get(summary, path):
    v = summary
    for k in path:
        if not isinstance(v, dict):
            return None
        v = v.get(k)
    return v if isinstance(v, (int, float)) else None


def spread(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    return statistics.mean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def cell(m, sd):
    return "—" if m is None else f"{m:.2f} ± {sd:.2f}"


def table(case, sims, emus):
    print(f"\n### {case}: simulator ({len(sims)} seeds) and emulator ({len(emus)} seeds)\n")
    print("| figure | simulator | emulator | emulator − simulator |")
    print("|---|---|---|---|")
    live = any(s.get("live") for s in sims)
    for label, path in LIVE_FIGURES if live else FIGURES:
        sm, ssd = spread([get(s, path) for s in sims])
        em, esd = spread([get(s, path) for s in emus])
        if sm is None and em is None:
            continue
        if sm is None or em is None:
            diff = "—"
        elif sm == 0 and em == 0:
            diff = "0 (both none)"
        elif sm == 0:
            diff = f"+{em:.2f} (simulator none)"
        else:
            diff = f"{100 * (em / sm - 1):+.1f} %"
        print(f"| {label} | {cell(sm, ssd)} | {cell(em, esd)} | {diff} |")
    e = [s.get("emulation") or {} for s in emus]
    cores, _ = spread([x.get("cpu_cores") for x in e])
    shaper = max((x.get("lateness_us", {}).get("p99", 0) for x in e), default=0)
    timers = max((x.get("timer_lateness_us", {}).get("p99", 0) for x in e), default=0)
    wall, _ = spread([s.get("wall_s") for s in emus])
    if cores is not None:
        print(f"\nemulator: {cores:.2f} CPU cores on average over {wall:.0f} s runs; "
              f"p99 lateness, worst run: shaper {shaper / 1e3:.2f} ms, node timers {timers / 1e3:.2f} ms")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/ppspp"))
    ap.add_argument("--case", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--emu-seeds", default=None, help="seeds of the emulations (default: --seeds)")
    ap.add_argument("--out", default="/tmp/emulate-fidelity")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",")]
    emu_seeds = [int(s) for s in (a.emu_seeds or a.seeds).split(",")]
    cases = [c for c in a.case.split(",") if c]
    for c in cases:
        if c not in CASES:
            sys.exit(f"unknown case {c}; known: {', '.join(CASES)}")
    folders = {}
    for c in cases:
        scenario, sets = CASES[c]
        path = os.path.join(ROOT, scenario)
        sims = []
        for s in seeds:
            out = os.path.join(a.out, c, f"sim-seed{s}")
            lab_run(a.binary, path, s, out, sets)
            sims.append(out)
        folders[c] = (path, sets, sims)
    for c in cases:
        path, sets, _ = folders[c]
        for s in emu_seeds:
            lab_run(a.binary, path, s, os.path.join(a.out, c, f"emu-seed{s}"), sets, verb="emulate")
    for c in cases:
        _, _, sims = folders[c]
        load = lambda d: json.load(open(os.path.join(d, "summary.json")))
        emus = [os.path.join(a.out, c, f"emu-seed{s}") for s in emu_seeds]
        table(c, [load(d) for d in sims], [load(d) for d in emus])


if __name__ == "__main__":
    main()
