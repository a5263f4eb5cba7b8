#!/usr/bin/env python3
"""A live stream to many viewer processes on loopback: lag, decoding errors, source CPU.

Usage: bench/live_loopback.py [--viewers 20] [--bitrate 4M] [--seconds 40]
                              [--fanout 3] [--delay 1] [--binary PATH] [--seed 1]

The goal of issue 24: a 4 Mbit/s live stream to 20 viewer processes in a
chain/mesh on one machine, every viewer's lag <= 2 s, no decoding error,
the source under 10 % of a core.

ffmpeg encodes its test pattern in real time (`-re`, 320x240 so that 20
decoders fit on the machine, constant bitrate padded to --bitrate) as
MPEG-TS into `ppspp live -`. Viewers (`ppspp stream URL --live-delay D`)
start one by one; the first --fanout fetch from the source, each later one
from a random earlier viewer (a seeded RNG), and PEX adds more peers: a
mesh grown from a chain. Once all run, one ffmpeg per viewer decodes its
endless MPEG-TS response for --seconds, and the viewers' /stats are sampled
every second meanwhile: `lag_s` is the age of the chunk being sent, by the
source's signing time (one machine: one clock).

Prints one row per viewer (lag p50 / p95 / max over the samples, decoding
errors, frames decoded, chunks skipped, its first peer) and a summary row
against the goal: the worst viewer's p95 lag, the total decoding errors,
and the source's CPU (user + system time from /proc over the decoding
window, as % of one core).
"""
import argparse
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_seconds(pid):
    """User + system CPU seconds of a process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf(os.sysconf_names["SC_CLK_TCK"])
    return (int(fields[11]) + int(fields[12])) / ticks


def first_line(proc, timeout=60):
    """The first line a process prints on stdout."""
    out = []
    t = threading.Thread(target=lambda: out.append(proc.stdout.readline()))
    t.start()
    t.join(timeout)
    if not out or not out[0]:
        sys.exit(f"no URL from {proc.args}")
    return out[0].decode().strip()


def stats(url):
    try:
        with urllib.request.urlopen(url + "/stats", timeout=2) as r:
            return json.load(r)
    except OSError:
        return None


def percentile(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--viewers", type=int, default=20)
    ap.add_argument("--bitrate", default="4M", help="ffmpeg bitrate, e.g. 4M")
    ap.add_argument("--seconds", type=int, default=40, help="media decoded per viewer")
    ap.add_argument("--fanout", type=int, default=3, help="viewers fed by the source")
    ap.add_argument("--delay", type=float, default=1.0, help="--live-delay of viewers")
    ap.add_argument("--binary", default=os.path.join(ROOT, "target/release/ppspp"))
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    for tool in ("ffmpeg",):
        if not shutil.which(tool):
            sys.exit(f"{tool} is needed")
    if not os.path.exists(a.binary):
        sys.exit(f"no {a.binary}: cargo build --release -p ppspp")
    rng = random.Random(a.seed)
    procs = []
    try:
        total = a.seconds + 20 + a.viewers
        enc = subprocess.Popen(
            ["ffmpeg", "-nostdin", "-v", "error", "-re", "-f", "lavfi", "-i",
             f"testsrc=duration={total}:size=320x240:rate=25",
             "-c:v", "libx264", "-preset", "ultrafast", "-tune", "zerolatency",
             "-g", "25", "-b:v", a.bitrate, "-minrate", a.bitrate, "-maxrate", a.bitrate,
             "-bufsize", a.bitrate, "-x264-params", "nal-hrd=cbr", "-pix_fmt", "yuv420p",
             "-f", "mpegts", "-"],
            stdout=subprocess.PIPE)
        procs.append(enc)
        src = subprocess.Popen(
            [a.binary, "live", "-", "--listen", "127.0.0.1:0"],
            stdin=enc.stdout, stdout=subprocess.PIPE)
        procs.append(src)
        url = first_line(src)
        src_addr = re.match(r"ppspp://([^/]+)/", url).group(1)
        path = url.split("/", 3)[3]
        viewers = []
        for i in range(a.viewers):
            peer = src_addr if i < a.fanout else viewers[rng.randrange(i)]["udp"]
            # A fixed UDP port per viewer, so later viewers can name it.
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            s.close()
            p = subprocess.Popen(
                [a.binary, "stream", f"ppspp://{peer}/{path}", "--listen", f"127.0.0.1:{port}",
                 "--http", "127.0.0.1:0", "--bitrate", f"{a.bitrate}bit/s",
                 "--live-delay", str(a.delay)],
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            procs.append(p)
            http = first_line(p)
            viewers.append({"udp": f"127.0.0.1:{port}", "http": http, "peer": peer, "lags": []})
            time.sleep(0.2)
        # Let the last viewers hook in.
        time.sleep(3)
        cpu0, t0 = cpu_seconds(src.pid), time.monotonic()
        decoders = []
        for v in viewers:
            d = subprocess.Popen(
                ["ffmpeg", "-nostdin", "-v", "error", "-rw_timeout", "20000000", "-i", v["http"],
                 "-t", str(a.seconds), "-f", "null", "-progress", "pipe:1", "-"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            decoders.append(d)
            procs.append(d)
        outputs = [None] * len(decoders)

        def collect(i, d):
            outputs[i] = d.communicate()

        threads = [threading.Thread(target=collect, args=(i, d)) for i, d in enumerate(decoders)]
        for t in threads:
            t.start()
        while any(t.is_alive() for t in threads):
            time.sleep(1)
            for v in viewers:
                s = stats(v["http"])
                if s and s.get("lag_s") is not None:
                    v["lags"].append(s["lag_s"])
                    v["skipped"] = s.get("chunks_skipped", 0)
        cpu = (cpu_seconds(src.pid) - cpu0) / (time.monotonic() - t0)
        print(f"# {a.viewers} viewers of a {a.bitrate}bit/s live stream on loopback, "
              f"{a.seconds} s decoded each, --live-delay {a.delay}, fanout {a.fanout}, seed {a.seed}")
        print(f"| viewer | first peer | lag p50 s | lag p95 s | lag max s | frames | decode errors | skipped |")
        print("|---|---|---|---|---|---|---|---|")
        worst, errors = 0.0, 0
        for i, (v, (out, err)) in enumerate(zip(viewers, outputs)):
            frames = max([int(x) for x in re.findall(rb"frame=(\d+)", out)] or [0])
            errs = len([l for l in err.decode(errors="replace").splitlines() if l.strip()])
            errors += errs
            p95 = percentile(v["lags"], 95)
            worst = max(worst, p95) if v["lags"] else float("inf")
            peer = "source" if v["peer"] == src_addr else v["peer"]
            print(f"| {i} | {peer} | {percentile(v['lags'], 50):.2f} | {p95:.2f} | "
                  f"{max(v['lags'] or [float('nan')]):.2f} | {frames} | {errs} | {v.get('skipped', 0)} |")
        print()
        print("| goal | measured | target | met |")
        print("|---|---|---|---|")
        print(f"| worst viewer's p95 lag | {worst:.2f} s | <= 2 s | {'yes' if worst <= 2 else 'no'} |")
        print(f"| decoding errors | {errors} | 0 | {'yes' if errors == 0 else 'no'} |")
        print(f"| source CPU | {100 * cpu:.1f} % of a core | <= 10 % | {'yes' if cpu <= 0.10 else 'no'} |")
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass


if __name__ == "__main__":
    main()
