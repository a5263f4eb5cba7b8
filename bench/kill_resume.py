#!/usr/bin/env python3
"""What a download costs when it is killed again and again: bytes moved / file size.

Usage: bench/kill_resume.py [--size-mb 100] [--kills 30] [--kill-after 0.2 4]
                            [--upload-limit 25MB/s] [--seeds 1] [--get-binary PATH]
                            [--config LABEL=GET-ARGS ...] [--sizes-mb 20 100 ...]

Seeds a file of random bytes with `ppspp seed` on loopback under an upload
limit (so that a download takes a few seconds and the kills land mid-way),
then runs `ppspp get` on it again and again, killing each run with SIGKILL
after a random 0.2-4 s (a seeded RNG), until a run completes before its kill
or `--kills` kills happened; then one last run without a kill completes the
file. The bytes moved are the seeder's own counter (`seed --stats-json`,
written when it is interrupted at the end): every payload byte it sent, to
all the runs. The table prints, per configuration, file size and RNG seed:
the kills, the megabytes moved, the file size, their ratio (1.0 is a
download without kills), and the seconds the whole loop took.

Each `get` runs with `--force`, so that older builds (`--get-binary`),
whose runs killed before the first checkpoint left a content file without
one, do not stop the loop; current builds checkpoint at open.

`--config LABEL=ARGS` (repeatable) runs `get` with extra arguments, e.g.
`--config 'time-only=--checkpoint-bytes 0'` or
`--config 'fixed 4MiB=--checkpoint-bytes 4MiB --checkpoint-growth 0'`;
without one, `get` runs with its defaults. `--get-binary` runs another
build's `get` (e.g. one built from an older commit) against this build's
seeder. 10^6 bytes are a MB.
"""
import argparse
import filecmp
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def random_file(size_mb, seed):
    """A file of `size_mb` MiB of seeded random bytes (made once, kept in /tmp)."""
    path = os.path.join(tempfile.gettempdir(), f"ppspp-kill-resume-{size_mb}MiB-{seed}.bin")
    size = size_mb * 1024 * 1024
    if not (os.path.exists(path) and os.path.getsize(path) == size):
        rng = random.Random(seed)
        with open(path + ".part", "wb") as f:
            for _ in range(size_mb):
                f.write(rng.randbytes(1024 * 1024))
        os.replace(path + ".part", path)
    return path


def start_seeder(ppspp, path, limit, stats):
    proc = subprocess.Popen(
        [ppspp, "seed", path, "--listen", "127.0.0.1:0", "--upload-limit", limit,
         "--stats-json", stats],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = proc.stdout.readline().strip()
    if not url.startswith("ppspp://"):
        proc.kill()
        sys.exit(f"seeder printed {url!r}")
    return proc, url


def kill_loop(ppspp, get_bin, src, args, extra, rng_seed):
    """Runs the loop once; returns (kills, bytes moved, seconds, complete-before-last-run)."""
    rng = random.Random(rng_seed)
    work = tempfile.mkdtemp(prefix="ppspp-kill-resume-")
    out = os.path.join(work, "out")
    seeder_stats = os.path.join(work, "seeder.json")
    seeder, url = start_seeder(ppspp, src, args.upload_limit, seeder_stats)
    # --force for older builds (see the module notes).
    get = [get_bin, "get", url, "-o", out, "--listen", "127.0.0.1:0", "--idle-timeout", "30",
           "--force"]
    get += extra
    kills = 0
    done = False
    t0 = time.perf_counter()
    try:
        while kills < args.kills and not done:
            after = rng.uniform(*args.kill_after)
            p = subprocess.Popen(get, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                rc = p.wait(timeout=after)
                if rc != 0:
                    sys.exit(f"get exited with {rc} before its kill: {shlex.join(get)}")
                done = True
            except subprocess.TimeoutExpired:
                p.send_signal(signal.SIGKILL)
                p.wait()
                kills += 1
        before_last = done
        if not done:
            subprocess.run(get, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=600)
        elapsed = time.perf_counter() - t0
        if not filecmp.cmp(src, out, shallow=False):
            sys.exit("the downloaded file differs from the source")
    finally:
        seeder.send_signal(signal.SIGINT)
        seeder.wait(timeout=30)
    with open(seeder_stats) as f:
        moved = json.load(f)["payload_bytes_sent"]
    subprocess.run(["rm", "-rf", work])
    return kills, moved, elapsed, before_last


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes-mb", type=int, nargs="+", default=[100], help="file sizes, MiB")
    ap.add_argument("--kills", type=int, default=30, help="most kills per loop (default 30)")
    ap.add_argument("--kill-after", type=float, nargs=2, default=[0.2, 4.0],
                    metavar=("MIN", "MAX"), help="kill each run after U(MIN, MAX) s")
    ap.add_argument("--upload-limit", default="25MB/s", help="the seeder's (default 25MB/s)")
    ap.add_argument("--seeds", type=int, default=1, help="loops per row, RNG seeds 1..N")
    ap.add_argument("--config", action="append", default=[],
                    help="LABEL=GET-ARGS: a get configuration (repeatable)")
    ap.add_argument("--get-binary", help="run this ppspp's get (default: this build's)")
    ap.add_argument("--no-build", action="store_true")
    args = ap.parse_args()

    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "ppspp"], cwd=ROOT, check=True)
    ppspp = os.path.join(ROOT, "target", "release", "ppspp")
    get_bin = args.get_binary or ppspp
    configs = [c.split("=", 1) for c in args.config] or [["defaults", ""]]

    lo, hi = args.kill_after
    print(f"get: {get_bin}; seeder upload limit {args.upload_limit}; "
          f"kills after U({lo}, {hi}) s, at most {args.kills}")
    head = f"{'config':<28} {'size MB':>8} {'seed':>4} {'kills':>5} {'moved MB':>9} " \
           f"{'ratio':>6} {'seconds':>8} {'done before last run':>21}"
    print(head)
    print("-" * len(head))
    for label, extra in configs:
        for size_mb in args.sizes_mb:
            src = random_file(size_mb, 1)
            size = os.path.getsize(src)
            ratios = []
            for seed in range(1, args.seeds + 1):
                kills, moved, secs, early = kill_loop(
                    ppspp, get_bin, src, args, shlex.split(extra), seed)
                ratios.append(moved / size)
                print(f"{label:<28} {size / 1e6:>8.1f} {seed:>4} {kills:>5} {moved / 1e6:>9.1f} "
                      f"{moved / size:>6.2f} {secs:>8.1f} {('yes' if early else 'no'):>21}",
                      flush=True)
            if args.seeds > 1:
                print(f"{label:<28} {size / 1e6:>8.1f} {'mean':>4} {'':>5} {'':>9} "
                      f"{sum(ratios) / len(ratios):>6.2f}", flush=True)


if __name__ == "__main__":
    main()
