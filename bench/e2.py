#!/usr/bin/env python3
"""E2 (seed paper 000 §IV-B, Figs. 7-11): ppspp against BitTorrent, one
seeder and 4 ... 208 leechers, in a flash crowd and in steady state.

Usage: bench/e2.py FIGURE [--sizes 4,8,...,208] [--seeds 1,2,3] [--jobs 2]
                   [--cdf-leechers 128] [--set KEY=VALUE ...]
                   [--binary target/release/ppspp] [--out lab-results/e2]

FIGURE is one of
  fig7   mean completion time against the number of leechers, flash crowd
  fig8   start-up time (mean and interquartile range), flash crowd, the
         six largest swarms (48 ... 208 leechers, as the paper shows)
  fig9   as fig7 in steady state (Poisson arrivals, 1 peer/s)
  fig10  as fig8 in steady state
  fig11  completion-time CDF, 128 leechers in steady state
  all    the five

The scenarios are scenarios/e2-ppspp.toml, e2-ppspp-steady.toml,
e2-bittorrent.toml and e2-bittorrent-steady.toml (the scale, 1/64 of the
paper's bytes and rates, and every chosen value are explained there); the
number of leechers is set with `--set peers.leechers.count=N`. Each is run
once per seed with the release binary (`cargo build --release -p ppspp`
first), `--jobs` at a time, into OUT/<scenario>-n<N>-s<seed> (a run
already there is not run again).

Completion time is a leecher's download time from its arrival (the
paper's clients' relative time); start-up is its time to hold the first
11.4 MB scaled (178,125 B, `record.startup_bytes`): for ppspp in order from
the start, for BitTorrent anywhere in the file, as the paper counts it.
Means are over every leecher of every seed; the spread column is the
standard deviation of the per-seed means. Each figure writes
OUT/<figure>.csv, OUT/<figure>.svg and OUT/<figure>.html, and prints its
table. The paper averages 10 runs; 3 seeds are the default here because a
208-leecher ppspp run takes minutes (see the scenario files).
"""
import argparse
import csv
import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figreport  # noqa: E402
from labrun import lab_run, rows  # noqa: E402
from svgplot import Plot  # noqa: E402

SIZES = [4, 8, 16, 24, 32, 48, 64, 96, 128, 176, 208]
PROTOCOLS = [("ppspp", "ppspp (swift-vod)"), ("bittorrent", "BitTorrent")]
FIGURES = {
    "fig7": ("flash", "completion", "E2 Fig. 7: completion time, flash crowd"),
    "fig8": ("flash", "startup", "E2 Fig. 8: start-up time, flash crowd"),
    "fig9": ("steady", "completion", "E2 Fig. 9: completion time, steady state"),
    "fig10": ("steady", "startup", "E2 Fig. 10: start-up time, steady state"),
    "fig11": ("steady", "cdf", "E2 Fig. 11: completion-time CDF, 128 leechers, steady state"),
}


def scenario_name(protocol, arrivals):
    return f"e2-{protocol}" + ("-steady" if arrivals == "steady" else "")


def load(folder):
    """Download and start-up times of every leecher of one run."""
    leechers = [p for p in rows(os.path.join(folder, "peers.csv")) if p["role"] == "leecher"]
    return {
        "download": [float(p["download_s"]) for p in leechers if p["download_s"]],
        "startup": [float(p["startup_bytes_s"]) for p in leechers if p["startup_bytes_s"]],
        "leechers": len(leechers),
    }


def quartiles(xs):
    xs = sorted(xs)
    if not xs:
        return None, None
    q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
    return q[0], q[2]


def cdf(values):
    xs = sorted(values)
    return [(x, (k + 1) / len(xs)) for k, x in enumerate(xs)]


def sizes_of(fig, args):
    if fig == "fig11":
        return [args.cdf_leechers]
    if FIGURES[fig][1] == "startup":
        return [n for n in args.sizes if n >= 48] or args.sizes
    return args.sizes


def summarize(runs, key):
    pooled = [x for r in runs for x in r[key]]
    per_seed = [statistics.mean(r[key]) for r in runs if r[key]]
    q1, q3 = quartiles(pooled)
    return {
        "mean": statistics.mean(pooled) if pooled else None,
        "sd_seeds": statistics.stdev(per_seed) if len(per_seed) > 1 else 0.0,
        "q1": q1,
        "q3": q3,
        "max": max(pooled) if pooled else None,
        "n": len(pooled),
        "done": sum(len(r["download"]) for r in runs),
        "leechers": sum(r["leechers"] for r in runs),
    }


def fmt(x, spec=".1f"):
    return "—" if x is None else format(x, spec)


def figure(fig, args, results):
    arrivals, kind, title = FIGURES[fig]
    if kind == "cdf":
        title = title.replace("128", str(args.cdf_leechers))
    command = "bench/e2.py " + " ".join(sys.argv[1:])
    if kind == "cdf":
        p = Plot("completion time (s)", "CDF", title)
        head = ["protocol", "leechers", "completed", "mean s", "p25 s", "p50 s", "p75 s", "p90 s", "max s"]
        table, out = [], []
        for proto, label in PROTOCOLS:
            runs = results[(proto, arrivals, args.cdf_leechers)]
            xs = sorted(x for r in runs for x in r["download"])
            if not xs:
                continue
            q = statistics.quantiles(xs, n=20, method="inclusive")
            p.line(cdf(xs), label)
            row = [label, args.cdf_leechers, f"{len(xs)}/{sum(r['leechers'] for r in runs)}", fmt(statistics.mean(xs)),
                   fmt(q[4]), fmt(q[9]), fmt(q[14]), fmt(q[17]), fmt(xs[-1])]
            table.append(row)
            out.append(dict(zip(["protocol", "leechers", "completed", "mean_s", "p25_s", "p50_s", "p75_s", "p90_s",
                                 "max_s"], [proto] + row[1:])))
    else:
        key = "download" if kind == "completion" else "startup"
        ylabel = "mean completion time (s)" if kind == "completion" else "start-up time (s)"
        p = Plot("leechers (1 seeder)", ylabel, title)
        head = ["protocol", "leechers", "completed", "mean s", "sd of seed means s", "p25 s", "p75 s", "max s"]
        table, out = [], []
        for proto, label in PROTOCOLS:
            pts, lo, hi = [], [], []
            for n in sizes_of(fig, args):
                s = summarize(results[(proto, arrivals, n)], key)
                if s["mean"] is None:
                    continue
                pts.append((n, s["mean"]))
                lo.append((n, s["q1"]))
                hi.append((n, s["q3"]))
                row = [label, n, f"{s['done']}/{s['leechers']}", fmt(s["mean"]), fmt(s["sd_seeds"], ".2f"),
                       fmt(s["q1"]), fmt(s["q3"]), fmt(s["max"])]
                table.append(row)
                out.append(dict(zip(["protocol", "leechers", "completed", "mean_s", "sd_seed_means_s", "p25_s", "p75_s",
                                     "max_s"], [proto] + row[1:])))
            p.line(pts, f"{label}, mean", group=label, marks=True)
            if kind == "startup":
                p.line(lo, f"{label}, p25/p75", group=label, dash=True)
                p.line(hi, None, group=label, dash=True)
    print(f"### {fig}: {title} (seeds {','.join(map(str, args.seeds))})")
    print("\n".join(figreport.markdown_rows(head, table)))
    with open(os.path.join(args.out, f"{fig}.csv"), "w", newline="") as f:
        if out:
            w = csv.DictWriter(f, fieldnames=list(out[0]))
            w.writeheader()
            w.writerows(out)
    svg = os.path.join(args.out, f"{fig}.svg")
    p.save(svg)
    figreport.write(os.path.join(args.out, f"{fig}.html"), title, command,
                    [f"Seeds {','.join(map(str, args.seeds))}; 1/64 of the paper's bytes and rates "
                     "(scenarios/e2-*.toml say why). Completion is each leecher's download time; start-up its "
                     "time to the first 178,125 B (ppspp in order, BitTorrent anywhere)."],
                    head, table, [svg])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("figure", choices=list(FIGURES) + ["all"])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cdf-leechers", type=int, default=128, help="fig11's swarm size (the paper's 128)")
    ap.add_argument("--set", action="append", default=[], dest="sets", metavar="KEY=VALUE",
                    help="passed to every run's `lab run --set` (e.g. content.size=100KB for a quick look); the "
                         "run folders do not carry it, so use a fresh --out")
    ap.add_argument("--binary", default="target/release/ppspp")
    ap.add_argument("--out", default="lab-results/e2")
    args = ap.parse_args()
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.sizes = [int(n) for n in args.sizes.split(",")]
    figures = list(FIGURES) if args.figure == "all" else [args.figure]
    os.makedirs(args.out, exist_ok=True)
    cases = sorted({(proto, FIGURES[f][0], n) for f in figures for proto, _ in PROTOCOLS for n in sizes_of(f, args)})
    jobs = [(c, s) for c in cases for s in args.seeds]
    # The largest ppspp runs first, so that the two jobs end together.
    jobs.sort(key=lambda j: -j[0][2] * (8 if j[0][0] == "ppspp" else 1))

    def run(job):
        (proto, arrivals, n), seed = job
        name = scenario_name(proto, arrivals)
        lab_run(args.binary, f"scenarios/{name}.toml", seed, os.path.join(args.out, f"{name}-n{n}-s{seed}"),
                [f"peers.leechers.count={n}"] + args.sets)

    with ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(run, jobs))
    results = {c: [load(os.path.join(args.out, f"{scenario_name(c[0], c[1])}-n{c[2]}-s{s}")) for s in args.seeds]
               for c in cases}
    for fig in figures:
        figure(fig, args, results)


if __name__ == "__main__":
    main()
