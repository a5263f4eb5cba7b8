#!/usr/bin/env python3
"""`ppspp hash` against `sha1sum` on the same file, side by side.

Usage: bench/hash_vs_sha1sum.py [--size-mb 1024] [--runs 5] [--keep FILE]

Builds ppspp in release mode, writes a file of random bytes (once), warms the
page cache, then alternates the commands `--runs` times and prints the median
wall time, MB/s (10^6 bytes per second), and CPU seconds per run of each.
Both read the file from the page cache, so this compares hashing, not disks.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd):
    """Wall seconds and child CPU seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024, help="file size in MiB (default 1024)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--keep", help="use/keep the test file at this path")
    args = ap.parse_args()

    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ppspp"], cwd=ROOT, check=True)
    ppspp = os.path.join(ROOT, "target", "release", "ppspp")

    path = args.keep or os.path.join(tempfile.gettempdir(), f"ppspp-bench-{args.size_mb}MiB.bin")
    size = args.size_mb * 1024 * 1024
    if not (os.path.exists(path) and os.path.getsize(path) == size):
        with open(path, "wb") as f:
            for _ in range(args.size_mb):
                f.write(os.urandom(1024 * 1024))
    try:
        commands = {
            "sha1sum": ["sha1sum", path],
            "ppspp hash (sha1, 1 KiB chunks)": [ppspp, "hash", path],
            "ppspp hash (sha1, 8 KiB chunks)": [ppspp, "hash", path, "--chunk-size", "8192"],
            "ppspp hash (sha256, 1 KiB chunks)": [ppspp, "hash", path, "--hash", "sha256"],
        }
        if subprocess.run(["which", "sha256sum"], capture_output=True).returncode == 0:
            commands["sha256sum"] = ["sha256sum", path]
        for cmd in commands.values():  # warm the page cache and the binaries
            run(cmd)
        results = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, cmd in commands.items():
                results[name].append(run(cmd))
        print(f"file: {size / 1e6:.0f} MB, {args.runs} runs each, {os.cpu_count()} CPUs")
        print(f"{'command':<36} {'median s':>9} {'MB/s':>8} {'CPU s':>7}")
        base = statistics.median(w for w, _ in results["sha1sum"])
        for name, runs in results.items():
            wall = statistics.median(w for w, _ in runs)
            cpu = statistics.median(c for _, c in runs)
            print(f"{name:<36} {wall:>9.3f} {size / wall / 1e6:>8.0f} {cpu:>7.2f}")
        ours = statistics.median(w for w, _ in results["ppspp hash (sha1, 1 KiB chunks)"])
        print(f"ppspp hash (sha1, 1 KiB) vs sha1sum: {base / ours:.2f}x the speed")
    finally:
        if not args.keep:
            os.remove(path)


if __name__ == "__main__":
    sys.exit(main())
