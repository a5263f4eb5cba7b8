#!/usr/bin/env python3
"""Replays the attacks of issue 21 against ppspp on loopback; prints a
pass/fail table (markdown) with the numbers.

Usage: bench/attack.py [--ppspp target/release/ppspp] [--only NAME,...]
           [--quick] [--seed N] [--keep] [--get-timeout 120]
           [--flood-interval S] [--haves N] [--storm-rate DGRAMS_PER_S]
           [--slowloris-bound S]

Attacks (names for --only), one function each under bench/attacks/:
  flood     1 half-open handshakes from 70 addresses every 20 s (5 s with
              --quick) next to an honest `get`
  forged    2 a hostile peer forges the content size to a bare-id `get`
              (one peak of all 2^h chunks whose hash is the root)
  taller    2 the same with the peak at layer 28 (a claim of 2^28 chunks)
  pex       3 PEX answers naming own, unspecified, broadcast, multicast,
              private and link-local addresses (in a network namespace with
              only loopback, the downloader under strace)
  idle      4 2,000 HTTP clients that GET and never read
  slowloris 5 300 clients sending a header byte per second; 1,140 idle
              clients against a gateway under `ulimit -n 1024`
  ckpt      6 a tmpfs that holds the content but not its checkpoint
  kill      7 `get` SIGKILLed after random 0.2–4 s, 30 times (100 MB; 20 MB
              with --quick), in a network namespace: bytes on its loopback
  ids       8 channel ids of 1,000 handshake answers
  storm     9 millions of random HAVEs (4.4 M; 1 M with --quick) to a
              bare-id `get` before it knows the size

Needs root (network and mount namespaces, tmpfs, strace) and Python 3's
standard library only. Every process started is killed at the end of its
attack, on failure and on Ctrl-C; files go to a temp dir removed at the end
unless --keep. Exits 1 when an attack fails.
"""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the repository

from attacks import disk, handshakes, hostile, http, pex, procs  # noqa: E402
from attacks.common import Ctx, row  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (function, runs in its own network namespace)
ATTACKS = {
    "flood": (handshakes.half_open_flood, False),
    "forged": (hostile.forged_size, False),
    "taller": (hostile.forged_taller, False),
    "pex": (pex.pex_addresses, True),
    "idle": (http.non_reading, False),
    "slowloris": (http.slowloris, False),
    "ckpt": (disk.checkpoint_unwritable, False),
    "kill": (disk.kill_loop, True),
    "ids": (handshakes.channel_ids, False),
    "storm": (hostile.have_storm, False),
}


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ppspp", default=os.path.join(ROOT, "target", "release", "ppspp"))
    ap.add_argument("--only", default=",".join(ATTACKS), help="comma-separated names")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, shorter waits")
    ap.add_argument("--seed", type=int, default=1, help="content and random choices")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir")
    ap.add_argument("--get-timeout", type=float, default=120,
                    help="seconds a `get` may run before it counts as hung")
    ap.add_argument("--flood-interval", type=float, help="seconds between flood rounds")
    ap.add_argument("--haves", type=int, help="HAVEs in the storm")
    ap.add_argument("--storm-rate", type=float, default=5000,
                    help="most storm datagrams per second (also held back while "
                    "the node's receive queue is over 1 MiB)")
    ap.add_argument("--slowloris-bound", type=float,
                    help="seconds within which slow connections must be closed")
    ap.add_argument("--netns-child", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    a.ppspp = os.path.abspath(a.ppspp)
    unknown = set(a.only.split(",")) - set(ATTACKS)
    if unknown:
        ap.error(f"unknown attack(s) {', '.join(sorted(unknown))}; known: {', '.join(ATTACKS)}")
    return a


def run_here(name, args):
    """Runs one attack in this process; its rows."""
    tmp = tempfile.mkdtemp(prefix=f"ppspp-attack-{name}-")
    rng = random.Random(f"{args.seed}/{name}")
    try:
        return ATTACKS[name][0](Ctx(procs.Node(args.ppspp, tmp), args, rng))
    except Exception as e:  # an attack that breaks is a failed row, not a lost table
        traceback.print_exc()
        return [row(name, f"attack crashed: {type(e).__name__}: {e}", "-", False)]
    finally:
        procs.cleanup()
        if args.keep:
            print(f"{name}: files kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run_in_netns(name, argv, args):
    """Re-runs this script for one attack inside `unshare -n` (a network
    namespace with only loopback, brought up); its rows come back as JSON
    on the last line of its stdout."""
    child = [sys.executable, os.path.abspath(__file__), *argv, "--netns-child", name]
    p = subprocess.Popen(["unshare", "-n", "--", *child], stdout=subprocess.PIPE,
                         text=True, start_new_session=True)
    procs.adopt(p, polite=True)
    out, _ = p.communicate()
    lines = out.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        return [row(name, f"namespace run failed (exit {p.returncode})", "-", False)]


def table(rows):
    out = ["| attack | measured | threshold | result |", "|---|---|---|---|"]
    for r in rows:
        verdict = {True: "PASS", False: "FAIL", None: "n/a"}[None if r["ok"] is None
                                                          else bool(r["ok"])]
        cells = [r["attack"], r["measured"], r["threshold"], verdict]
        out.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return "\n".join(out)


def on_signal(signum, _frame):
    procs.cleanup()
    sys.exit(128 + signum)


def main():
    argv = sys.argv[1:]
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    if args.netns_child:
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        rows = run_here(args.netns_child, args)
        print(json.dumps(rows))
        return 0
    if not os.access(args.ppspp, os.X_OK):
        sys.exit(f"no ppspp binary at {args.ppspp} (cargo build --release -p ppspp)")
    if os.geteuid() != 0:
        print("warning: not root: namespaces, tmpfs and strace attacks will fail",
              file=sys.stderr)
    rows = []
    for name in args.only.split(","):
        t0 = time.monotonic()
        print(f"== {name}", file=sys.stderr, flush=True)
        netns = ATTACKS[name][1]
        got = run_in_netns(name, argv, args) if netns else run_here(name, args)
        for r in got:
            print(f"   {'PASS' if r['ok'] else 'FAIL'}: {r['measured']}", file=sys.stderr)
        print(f"   ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)
        rows += got
    print(f"ppspp: {args.ppspp}; {'quick' if args.quick else 'full'} run, seed {args.seed}\n")
    print(table(rows))
    return 0 if all(r["ok"] or r["ok"] is None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
