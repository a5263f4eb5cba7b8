#!/usr/bin/env python3
"""Issue 23's goal, checked over sweeps: does a VoD algorithm stall no more
often and no longer than the best of the others, and start within 0.5 s
of the best, on every scenario?

Usage: bench/vod_goal.py SWEEP_DIR [SWEEP_DIR ...] [--candidate buffer-vod]
                         [--others linear,std-vod,swift-vod]
                         [--startup-slack 0.5]

Each SWEEP_DIR is the folder of a `ppspp lab sweep` (its
`sweep_summary.csv`): a family sweep (`scenarios/vod-family`, rows per
scenario and algorithm) or an E1 sweep over `peers.leechers.count` and
`peers.leechers.algorithm` (rows named `e1-N`). Several folders are
merged, so the candidate and the others may come from separate sweeps of
the same scenarios and seeds; a later folder's row replaces an earlier
one's. Prints one row per scenario: the candidate's mean stalls per
viewer, stall seconds per viewer and startup seconds, the best of the
others on each (and whose it is), and by how much the candidate misses
each goal (blank when met), then how many scenarios meet all three.
"""
import argparse
import csv
import os
import sys


def algorithm_of(row):
    for key in ("algorithm", "peers.leechers.algorithm"):
        if row.get(key):
            return row[key]
    return None


def scenario_of(row):
    if row.get("scenario"):
        return row["scenario"]
    count = row.get("peers.leechers.count") or row.get("leechers")
    return f"e1-{count}" if count else None


def load(dirs):
    """(scenario, algorithm) -> (stalls, stall s, startup s, seeds)."""
    cells = {}
    order = []
    for d in dirs:
        path = os.path.join(d, "sweep_summary.csv")
        with open(path, newline="") as f:
            for row in csv.DictReader(f):
                scenario, algo = scenario_of(row), algorithm_of(row)
                if scenario is None or algo is None:
                    sys.exit(f"{path}: a row names no scenario or algorithm: {row}")
                if scenario not in order:
                    order.append(scenario)
                cells[(scenario, algo)] = (
                    float(row["stalls_per_viewer_mean"]),
                    float(row["stall_s_per_viewer_mean"]),
                    float(row["startup_mean_s_mean"]),
                    int(row["seeds"]),
                )
    return cells, order


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--candidate", default="buffer-vod")
    ap.add_argument("--others", default="linear,std-vod,swift-vod")
    ap.add_argument("--startup-slack", type=float, default=0.5)
    args = ap.parse_args()
    cells, order = load(args.dirs)
    others = args.others.split(",")
    print(
        "| scenario | seeds | candidate stalls / stall s / startup s "
        "| best stalls | best stall s | best startup s "
        "| stalls over | stall s over | startup over best + slack |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    met = 0
    checked = 0
    for scenario in order:
        mine = cells.get((scenario, args.candidate))
        theirs = {a: cells[(scenario, a)] for a in others if (scenario, a) in cells}
        if mine is None or not theirs:
            continue
        checked += 1
        seeds = {mine[3]} | {v[3] for v in theirs.values()}
        bests = []
        for i in range(3):
            who = min(theirs, key=lambda a: theirs[a][i])
            bests.append((theirs[who][i], who))
        slack = (0.0, 0.0, args.startup_slack)
        misses = [mine[i] - (bests[i][0] + slack[i]) for i in range(3)]
        if all(m <= 1e-9 for m in misses):
            met += 1
        cols = [
            scenario,
            "/".join(str(s) for s in sorted(seeds)),
            f"{mine[0]:.2f} / {mine[1]:.1f} / {mine[2]:.1f}",
            f"{bests[0][0]:.2f} ({bests[0][1]})",
            f"{bests[1][0]:.1f} ({bests[1][1]})",
            f"{bests[2][0]:.1f} ({bests[2][1]})",
        ] + [f"+{m:.2f}" if m > 1e-9 else "" for m in misses]
        print("| " + " | ".join(cols) + " |")
    print(f"\n{args.candidate} meets all three goals on {met} of {checked} scenarios.")
    if checked == 0:
        sys.exit("no scenario has both the candidate and another algorithm")


if __name__ == "__main__":
    main()
