#!/usr/bin/env python3
"""How the lab's simulator scales: `scenarios/scale-1000.toml` (home peers,
1 Mbit/s up, 8 Mbit/s down, one 20 Mbit/s seeder, 20 MB, flash crowd) run
at several swarm sizes, one process per run.

Usage: bench/lab_scale.py [--peers 100,1000] [--size 20MB] [--seed 1]
                          [--threads N] [--set KEY=VALUE ...] [--keep DIR]
                          [--bin PATH]

For each size prints: peers that completed, virtual and wall seconds,
wall/virtual (below 1: faster than real time), events, events per wall
second and the peak RSS of the run (the child's ru_maxrss), with the
threads the run used (`--threads`, default one per core). The leechers
are split evenly over the scenario's five regions. Build first:
`cargo build --release`.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPSPP = os.path.join(ROOT, "target", "release", "ppspp")
SCENARIO = os.path.join(ROOT, "scenarios", "scale-1000.toml")
GROUPS = ["home0", "home1", "home2", "home3", "home4"]


def run_one(peers, args, out):
    """Runs one size in a child process; returns the summary and peak RSS."""
    sets = []
    base, extra = divmod(peers, len(GROUPS))
    for i, g in enumerate(GROUPS):
        sets += ["--set", f"peers.{g}.count={base + (1 if i < extra else 0)}"]
    sets += ["--set", f"content.size={args.size}"]
    for kv in args.set:
        sets += ["--set", kv]
    cmd = [args.bin, "lab", "run", SCENARIO, "--seed", str(args.seed), "--out", out] + sets
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        sys.exit(f"run of {peers} peers failed:\n{p.stderr}")
    # ru_maxrss of the children is the largest of any child so far: runs go
    # smallest first, so each run's figure is its own.
    rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    return summary, max(rss_kb, before) / 1024, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default="100,1000", help="comma-separated swarm sizes")
    ap.add_argument("--size", default="20MB", help="content size")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], help="extra scenario override")
    ap.add_argument("--threads", type=int, help="simulation threads (default: one per core)")
    ap.add_argument("--keep", help="keep results folders under this directory")
    ap.add_argument("--bin", default=PPSPP, help="the ppspp binary (default: the release build)")
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit("build first: cargo build --release")
    sizes = sorted(int(x) for x in args.peers.split(","))
    root = args.keep or tempfile.mkdtemp(prefix="lab-scale-")
    print(f"scenario {os.path.relpath(SCENARIO, ROOT)}, content {args.size}, seed {args.seed}")
    print(
        "| leechers | threads | completed | virtual s | wall s | wall/virtual "
        "| events | events/s | peak RSS MB |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        out = os.path.join(root, f"n{n}")
        s, rss, _ = run_one(n, args, out)
        wall, virt = s["wall_s"], s["virtual_s"]
        print(
            f"| {n} | {s.get('threads', 1)} | {s['completed']} | {virt:.1f} | {wall:.1f} | {wall / virt:.3f} "
            f"| {s['events']} | {s['events'] / wall:.0f} | {rss:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
