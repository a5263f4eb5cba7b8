#!/usr/bin/env python3
"""Issue 24's live goal: 500 viewers of a 1 Mbit/s live stream (viewer
uplinks 1.5 Mbit/s, source uplink 5 Mbit/s, flash crowd, 10 virtual
minutes) should see continuity >= 99.5 %, p95 lag <= 5 s, with the source
sending at most 5x the stream rate.

Usage: bench/live_goal.py [--binary target/release/ppspp]
                          [--scenario scenarios/live-500.toml]
                          [--seeds 1,2,3] [--out lab-results/live-goal]
                          [--set KEY=VALUE ...]

Runs the scenario once per seed with the release binary (`cargo build
--release -p ppspp` first) and prints one row per seed: continuity (mean
over viewers, and the worst viewer's), lag p50 and p95 over every viewer's
samples (one a second), the source's upload as a multiple of the stream
rate, stalls and skips per viewer, startup p95, wall time; then the goal
and, per figure, by how much the worst seed misses it (blank when met).
The figures come from each run's summary.json (its `live` object).
"""
import argparse
import json
import os
import subprocess
import sys
import time

GOAL_CONTINUITY = 0.995
GOAL_LAG_P95_S = 5.0
GOAL_SOURCE_X = 5.0


def run(binary, scenario, seed, out, sets):
    cmd = [binary, "lab", "run", scenario, "--seed", str(seed), "--out", out, "--force"]
    for s in sets:
        cmd += ["--set", s]
    started = time.time()
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.time() - started
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        sys.exit(f"seed {seed}: lab run failed ({done.returncode})")
    with open(os.path.join(out, "summary.json")) as f:
        live = json.load(f).get("live")
    if not live:
        sys.exit(f"seed {seed}: no live figures in {out}/summary.json")
    return live, wall


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--binary", default="target/release/ppspp")
    ap.add_argument("--scenario", default="scenarios/live-500.toml")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--out", default="lab-results/live-goal")
    ap.add_argument("--set", action="append", default=[], dest="sets")
    a = ap.parse_args()
    seeds = [int(s) for s in a.seeds.split(",") if s]
    print(f"{a.scenario}, seeds {a.seeds}" + (f", --set {' '.join(a.sets)}" if a.sets else ""))
    head = ("| seed | viewers | continuity mean | continuity min | lag p50 s | lag p95 s "
            "| source x stream | stalls/viewer | skips/viewer | startup p95 s | wall s |")
    print(head)
    print("|" + "|".join(["---:"] * (head.count("|") - 1)) + "|")
    rows = []
    for seed in seeds:
        live, wall = run(a.binary, a.scenario, seed, f"{a.out}-seed{seed}", a.sets)
        rows.append(live)
        c = live["continuity"]
        print(f"| {seed} | {live['viewers']} | {fmt(c['mean'], '.4f')} | {fmt(c['min'], '.4f')} "
              f"| {fmt(live['lag_s']['p50'], '.2f')} | {fmt(live['lag_s']['p95'], '.2f')} "
              f"| {fmt(live['source_upload_x'], '.2f')} | {fmt(live['stalls_per_viewer'], '.2f')} "
              f"| {fmt(live['skips_per_viewer'], '.2f')} | {fmt(live['startup_s']['p95'], '.2f')} "
              f"| {wall:.0f} |", flush=True)
    worst_c = min((r["continuity"]["mean"] or 0.0) for r in rows)
    worst_lag = max((r["lag_s"]["p95"] or float("inf")) for r in rows)
    worst_x = max((r["source_upload_x"] or float("inf")) for r in rows)
    print()
    print("| figure | goal | worst seed | miss |")
    print("|---|---:|---:|---:|")
    miss = lambda bad, by: by if bad else ""
    print(f"| continuity (mean over viewers) | >= {GOAL_CONTINUITY:.3f} | {worst_c:.4f} "
          f"| {miss(worst_c < GOAL_CONTINUITY, f'{GOAL_CONTINUITY - worst_c:.4f} short')} |")
    print(f"| lag p95 (s) | <= {GOAL_LAG_P95_S:.1f} | {worst_lag:.2f} "
          f"| {miss(worst_lag > GOAL_LAG_P95_S, f'{worst_lag - GOAL_LAG_P95_S:.2f} s over')} |")
    print(f"| source upload (x stream rate) | <= {GOAL_SOURCE_X:.1f} | {worst_x:.2f} "
          f"| {miss(worst_x > GOAL_SOURCE_X, f'{worst_x - GOAL_SOURCE_X:.2f} over')} |")
    met = worst_c >= GOAL_CONTINUITY and worst_lag <= GOAL_LAG_P95_S and worst_x <= GOAL_SOURCE_X
    print(f"\ngoal {'MET' if met else 'MISSED'} over {len(rows)} seed(s)")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
