#!/usr/bin/env python3
"""What a download checkpoint costs, by content size, and what a trigger policy adds up to.

Usage: bench/checkpoint_cost.py [--sizes-mib 100 1024] [--chunk-size 1024]

Runs `crates/ppspp-store/examples/checkpoint_cost.rs` (release build) per
size: it writes the content through a `FileStorage` as a download would and
checkpoints at 1, 10, 25, 50 and 100 % of it. The first table gives, per
point, the checkpoint's size, the time spent encoding it on the protocol
loop's thread, the time until it is durable including the flush of the
content written since the previous checkpoint, and without that flush (the
checkpoint's own cost). The second table sums, for a whole download of each
size, the checkpoints a progress policy takes (first after BYTES, then every
max(BYTES, GROWTH % of what is stored)) and the bytes they write, from the
measured bytes per chunk: the write overhead next to the content itself.
The time trigger (every 5 s) comes on top. Page-cache and disk dependent:
compare figures from one machine.
"""
import argparse
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIB = 1 << 20


def policy_total(size, per_byte, first, growth):
    """Checkpoints and bytes written by a progress policy over a download of `size`."""
    stored, count, written = 0, 0, 0.0
    while True:
        step = max(first, stored * growth // 100)
        stored = min(size, stored + step)
        count += 1
        written += stored * per_byte
        if stored >= size:
            return count, written


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes-mib", type=int, nargs="+", default=[100, 1024])
    ap.add_argument("--chunk-size", type=int, default=1024)
    args = ap.parse_args()
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "ppspp-store",
                    "--example", "checkpoint_cost"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "examples", "checkpoint_cost")
    print(f"{'content MiB':>11} {'verified MiB':>12} {'checkpoint MB':>13} {'encode ms':>9} "
          f"{'durable ms (with content flush)':>31} {'durable ms (alone)':>18}")
    per_byte = {}
    for mib in args.sizes_mib:
        out = subprocess.run([exe, str(mib), str(args.chunk_size)], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            v, b, enc, flush, alone = line.split("\t")
            print(f"{mib:>11} {float(v):>12.1f} {int(b) / 1e6:>13.2f} {float(enc):>9.1f} "
                  f"{float(flush):>31.1f} {float(alone):>18.1f}")
            per_byte[mib] = int(b) / (float(v) * MIB)
    print()
    print(f"{'content MiB':>11} {'policy (first, growth)':>24} {'checkpoints':>11} "
          f"{'MB written':>10} {'% of content':>12}")
    for mib in args.sizes_mib:
        size = mib * MIB
        for first, growth in [(1 * MIB, 0), (4 * MIB, 0), (16 * MIB, 0), (1 * MIB, 10),
                              (1 * MIB, 25), (1 * MIB, 50), (1 * MIB, 100)]:
            n, w = policy_total(size, per_byte[mib], first, growth)
            label = f"{first // MIB} MiB, {growth} %"
            print(f"{mib:>11} {label:>24} {n:>11} {w / 1e6:>10.1f} {100 * w / size:>12.1f}")


if __name__ == "__main__":
    main()
