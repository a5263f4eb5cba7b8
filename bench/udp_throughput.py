#!/usr/bin/env python3
"""Loopback throughput of ppspp: seeder and leecher as separate processes.

Usage: bench/udp_throughput.py [--size-mb 200] [--runs 5] [--rss-mb 1000] [--chunk-sizes 1024,8192]

For each chunk size: seeds a file of random bytes, downloads it `--runs`
times with `ppspp get` (fresh output each time), and prints the median
download time (the leecher's own duration_s), MB/s (10^6 bytes/s), and CPU
seconds of each side per run. Then downloads a `--rss-mb` file once with
1 KiB chunks and prints the leecher's peak RSS.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PPSPP = os.path.join(ROOT, "target", "release", "ppspp")
TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid):
    """CPU seconds (user + system) a running process has used."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def make_file(path, size):
    if os.path.exists(path) and os.path.getsize(path) == size:
        return
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 20)
            f.write(os.urandom(n))
            left -= n


def seed(path, cs):
    p = subprocess.Popen(
        [PPSPP, "seed", path, "--listen", "127.0.0.1:0", "--chunk-size", str(cs)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = p.stdout.readline().strip()
    if not url.startswith("ppspp://"):
        p.kill()
        sys.exit(f"seeder printed {url!r}")
    return p, url


def get(url, out, stats):
    for f in (out, out + ".ppspp"):
        if os.path.exists(f):
            os.remove(f)
    t0 = time.perf_counter()
    p = subprocess.Popen([PPSPP, "get", url, "-o", out, "--listen", "127.0.0.1:0", "--stats-json", stats],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if status != 0:
        sys.exit(f"ppspp get failed with status {status}")
    with open(stats) as f:
        s = json.load(f)
    # This child's own rusage: CPU seconds and peak RSS in KiB.
    return s["duration_s"], wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--rss-mb", type=int, default=1000, help="0 to skip the RSS run")
    ap.add_argument("--chunk-sizes", default="1024,8192")
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ppspp"], cwd=ROOT, check=True)
    tmp = tempfile.mkdtemp(prefix="ppspp-bench-")
    src = os.path.join(tmp, "content")
    size = args.size_mb * 1_000_000
    make_file(src, size)
    out, stats = os.path.join(tmp, "out"), os.path.join(tmp, "stats.json")
    print(f"loopback, {size / 1e6:.0f} MB, median of {args.runs}, {os.cpu_count()} CPUs")
    print(f"{'chunk':>6} {'median s':>9} {'MB/s':>8} {'leecher CPU s':>14} {'seeder CPU s':>13}")
    for cs in [int(c) for c in args.chunk_sizes.split(",")]:
        seeder, url = seed(src, cs)
        rows = []
        try:
            for _ in range(args.runs):
                s0 = cpu_of(seeder.pid)
                d, wall, cpu, _ = get(url, out, stats)
                rows.append((d, cpu, cpu_of(seeder.pid) - s0))
        finally:
            seeder.kill()
            seeder.wait()
        d = statistics.median(r[0] for r in rows)
        lc = statistics.median(r[1] for r in rows)
        sc = statistics.median(r[2] for r in rows)
        print(f"{cs:>6} {d:>9.3f} {size / d / 1e6:>8.0f} {lc:>14.2f} {sc:>13.2f}")
    if args.rss_mb:
        big = os.path.join(tmp, "big")
        make_file(big, args.rss_mb * 1_000_000)
        seeder, url = seed(big, 1024)
        try:
            d, _, _, rss = get(url, out, stats)
        finally:
            seeder.kill()
            seeder.wait()
        print(f"{args.rss_mb} MB with 1 KiB chunks in {d:.2f} s: leecher peak RSS {rss / 1024:.1f} MB")
    subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
