#!/usr/bin/env python3
"""Interoperability and speed of ppspp with libswift over loopback UDP.

Usage: bench/libswift_interop.py [--swift PATH] [--ppspp PATH]
           [--sizes 100000000] [--runs 3] [--timeout 300] [--keep DIR]
           [--directions libswift->libswift,ppspp->libswift,libswift->ppspp,ppspp->ppspp]

Defaults: --swift ../shared/tools/libswift/swift beside the repository,
--ppspp target/release/ppspp (build it first: cargo build --release).

For each size a file of pattern bytes (byte i is i % 251) is made, then each
direction runs --runs times:
  libswift->ppspp  `swift -f FILE -l 127.0.0.1:PORT -z 1024` seeds it and
                   `ppspp get ppspp://127.0.0.1:PORT/<root>?cs=1024&hf=sha1&cl=N`
                   downloads it;
  ppspp->libswift  `ppspp seed FILE --listen 127.0.0.1:0 --chunk-size 1024 --hash sha1`
                   serves it and `swift -t 127.0.0.1:PORT -h <root> -o DIR -z 1024`
                   downloads it (libswift exits once the download is complete);
  libswift->libswift and ppspp->ppspp, the references.
A run is ok when the downloaded file is byte-identical to the source and the
root hash that libswift printed (when it printed one) equals `ppspp hash`.
Prints every run, then a table per direction and size: runs ok, median
seconds, MB/s (MB = 10^6 bytes) and the ratio to libswift->libswift's median
of the same size (the issue's goal: at most 1.5 for every direction at
100 MB). A libswift downloader exits on the first 1-second tick after it
completes, so its times are up to 1 s long; ppspp get exits at completion.
Exits 1 if any run failed.

This script never builds or fetches libswift. Only 1024-byte chunks and
SHA-1 are used, libswift's defaults. Every process it starts is bounded by
--timeout and killed at the end.
"""
import argparse
import filecmp
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

CHUNK = 1024


def make_file(path, size):
    block = bytes(i % 251 for i in range(251)) * 4096  # 251 * 4096 bytes
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, len(block))
            f.write(block[:n])  # len(block) is a multiple of 251
            left -= n


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Proc:
    """A child process whose output lines are collected by a thread."""

    def __init__(self, argv, cwd, log_path):
        self.argv = argv
        self.log = open(log_path, "w")
        self.lines = []
        self.cond = threading.Condition()
        self.p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True,
                                  errors="replace")
        self.t = threading.Thread(target=self._pump, daemon=True)
        self.t.start()

    def _pump(self):
        for line in self.p.stdout:
            self.log.write(line)
            self.log.flush()
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_line(self, regex, timeout):
        """First match of regex in the output, or None at timeout/exit."""
        pat = re.compile(regex)
        deadline = time.monotonic() + timeout
        seen = 0
        with self.cond:
            while True:
                for line in self.lines[seen:]:
                    m = pat.search(line)
                    if m:
                        return m
                seen = len(self.lines)
                left = deadline - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and not self.t.is_alive()):
                    return None
                self.cond.wait(min(left, 0.2))

    def wait(self, timeout):
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.t.join(timeout=5)
        self.log.close()

    def tail(self, n=3):
        return " | ".join(self.lines[-n:])


def udp_port_bound(port):
    """Whether some socket on this machine is bound to UDP port `port`."""
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    local = line.split()[1]
                    if int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def ppspp_root(ppspp, path):
    out = subprocess.run([ppspp, "hash", path, "--chunk-size", str(CHUNK), "--hash", "sha1"],
                         capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise RuntimeError(f"ppspp hash failed: {out.stderr.strip()}")
    return out.stdout.strip()


def swift_argv(swift, *args):
    # libswift prints with stdio; line-buffer it so we see "Root hash:" at once.
    stdbuf = shutil.which("stdbuf")
    return ([stdbuf, "-oL", "-eL"] if stdbuf else []) + [swift, *args]


class Failed(Exception):
    """A step of a transfer went wrong: the run fails with this note."""


def start_libswift_seeder(a, d, src, root):
    """Seeds a copy of `src` (libswift writes FILE.mhash / FILE.mbinmap
    beside the file it seeds); returns the process, its port and a note."""
    seedfile = os.path.join(d, "content")
    shutil.copyfile(src, seedfile)
    port = free_udp_port()
    seeder = Proc(swift_argv(a.swift, "-f", seedfile, "-l", f"127.0.0.1:{port}",
                             "-z", str(CHUNK)),
                  d, os.path.join(d, "swift-seed.log"))
    m = seeder.wait_line(r"Root hash: ([0-9a-fA-F]{40})", a.timeout)
    note = "libswift printed no root hash"
    if m is not None:
        if m.group(1).lower() != root:
            seeder.stop()
            raise Failed(f"root differs: libswift {m.group(1).lower()} ppspp {root}")
        note = "roots agree"
    deadline = time.monotonic() + a.timeout
    while not udp_port_bound(port):
        if seeder.p.poll() is not None or time.monotonic() > deadline:
            seeder.stop()
            raise Failed(f"libswift seeder not listening: {seeder.tail()}")
        time.sleep(0.1)
    return seeder, port, note


def start_ppspp_seeder(a, d, src, root):
    seeder = Proc([a.ppspp, "seed", src, "--listen", "127.0.0.1:0",
                   "--chunk-size", str(CHUNK), "--hash", "sha1"],
                  d, os.path.join(d, "ppspp-seed.log"))
    m = seeder.wait_line(r"ppspp://127\.0\.0\.1:(\d+)/([0-9a-f]+)", a.timeout)
    if m is None:
        seeder.stop()
        raise Failed(f"ppspp seed printed no URL: {seeder.tail()}")
    if m.group(2) != root:
        seeder.stop()
        raise Failed(f"ppspp seed root {m.group(2)} != ppspp hash {root}")
    return seeder, int(m.group(1)), ""


def start_libswift_get(a, d, port, size, root):
    """Returns the process and where the file lands: DIR/<root> (`-o DIR`;
    this libswift's `-f OUT` wants OUT to exist already)."""
    outdir = os.path.join(d, "downloaded")
    os.makedirs(outdir)
    getter = Proc(swift_argv(a.swift, "-t", f"127.0.0.1:{port}", "-h", root,
                             "-o", outdir, "-z", str(CHUNK)),
                  d, os.path.join(d, "swift-get.log"))
    return getter, os.path.join(outdir, root)


def start_ppspp_get(a, d, port, size, root):
    out = os.path.join(d, "downloaded")
    url = f"ppspp://127.0.0.1:{port}/{root}?cs={CHUNK}&hf=sha1&cl={size}"
    getter = Proc([a.ppspp, "get", url, "-o", out, "--listen", "127.0.0.1:0",
                   "--idle-timeout", str(a.idle_timeout)],
                  d, os.path.join(d, "ppspp-get.log"))
    return getter, out


SEEDERS = {"libswift": start_libswift_seeder, "ppspp": start_ppspp_seeder}
GETTERS = {"libswift": start_libswift_get, "ppspp": start_ppspp_get}


def transfer(a, work, src, size, root, direction):
    """One download from a fresh seeder; (ok, seconds, note)."""
    seed_kind, get_kind = direction.split("->")
    d = os.path.join(work, f"{seed_kind}-to-{get_kind}-{size}")
    os.makedirs(d)
    seeder = getter = None
    try:
        seeder, port, note = SEEDERS[seed_kind](a, d, src, root)
        t0 = time.perf_counter()
        getter, out = GETTERS[get_kind](a, d, port, size, root)
        rc = getter.wait(a.timeout)
        secs = time.perf_counter() - t0
        if rc is None:
            got = os.path.getsize(out) if os.path.exists(out) else 0
            return False, secs, f"{get_kind} still running after {a.timeout}s ({got} B on disk)"
        if rc != 0:
            return False, secs, f"{get_kind} exit {rc}: {getter.tail()}"
        if not os.path.exists(out):
            return False, secs, "no downloaded file"
        if not filecmp.cmp(src, out, shallow=False):
            return False, secs, "downloaded file differs from source"
        return True, secs, note
    except Failed as e:
        return False, None, str(e)
    finally:
        for p in (getter, seeder):
            if p:
                p.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--swift", help="libswift's swift binary",
                    default=os.path.join(repo, "..", "shared", "tools", "libswift", "swift"))
    ap.add_argument("--ppspp", help="ppspp binary",
                    default=os.path.join(repo, "target", "release", "ppspp"))
    ap.add_argument("--sizes", default="100000000",
                    help="comma-separated file sizes in bytes")
    ap.add_argument("--runs", type=int, default=3, help="runs per direction and size")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds any one step may take")
    ap.add_argument("--idle-timeout", type=int, default=30,
                    help="ppspp get --idle-timeout")
    ap.add_argument("--directions",
                    default="libswift->libswift,ppspp->libswift,libswift->ppspp,ppspp->ppspp")
    ap.add_argument("--keep", metavar="DIR",
                    help="work here and keep files and logs (default: a temp dir, removed)")
    a = ap.parse_args()
    for exe in (a.swift, a.ppspp):
        if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
            sys.exit(f"not an executable: {exe}")
    a.swift, a.ppspp = os.path.abspath(a.swift), os.path.abspath(a.ppspp)
    sizes = [int(s) for s in a.sizes.split(",") if s]
    dirs = [s.strip() for s in a.directions.split(",") if s.strip()]
    work = os.path.abspath(a.keep) if a.keep else tempfile.mkdtemp(prefix="libswift-interop-")
    os.makedirs(work, exist_ok=True)
    for direction in dirs:
        kinds = direction.split("->")
        if len(kinds) != 2 or kinds[0] not in SEEDERS or kinds[1] not in GETTERS:
            sys.exit(f"unknown direction {direction!r} (e.g. libswift->ppspp)")
    rows = []
    try:
        for size in sizes:
            src = os.path.join(work, f"src-{size}.bin")
            make_file(src, size)
            root = ppspp_root(a.ppspp, src)
            # Directions take turns run by run, so that a slow spell of a
            # shared machine falls on all of them alike.
            for run in range(a.runs):
                for direction in dirs:
                    sub = os.path.join(work, f"run{run}")
                    os.makedirs(sub, exist_ok=True)
                    try:
                        ok, secs, note = transfer(a, sub, src, size, root, direction)
                    except Exception as e:  # report, go on with the next row
                        ok, secs, note = False, None, f"{type(e).__name__}: {e}"
                    rows.append((direction, size, ok, secs, note))
                    print_row(*rows[-1], flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print_table(rows)
    print()
    print_medians(rows, dirs, sizes)
    if a.keep:
        print(f"\nfiles and logs in {work}")
    sys.exit(0 if rows and all(r[2] for r in rows) else 1)


def fmt(direction, size, ok, secs, note):
    s = "-" if secs is None else f"{secs:.2f}"
    rate = "-" if not ok or not secs else f"{size / secs / 1e6:.2f}"
    return f"{direction:<16} {size:>10} {'ok' if ok else 'FAIL':<4} {s:>8} {rate:>8}  {note}"


def print_row(*row, flush=False):
    print("# " + fmt(*row), file=sys.stderr, flush=flush)


def print_table(rows):
    print(f"{'direction':<16} {'size (B)':>10} {'res':<4} {'seconds':>8} {'MB/s':>8}  note")
    for r in rows:
        print(fmt(*r))


def print_medians(rows, dirs, sizes):
    """Median seconds per direction and size over the runs that succeeded,
    and the ratio to libswift->libswift's median of the same size."""
    print(f"{'direction':<20} {'size (B)':>10} {'ok':>5} {'median s':>9} {'MB/s':>8} "
          f"{'vs libswift->libswift':>22}")
    for size in sizes:
        med = {}
        for d in dirs:
            ok = [r[3] for r in rows if r[0] == d and r[1] == size and r[2]]
            med[d] = (statistics.median(ok) if ok else None,
                      len(ok), sum(1 for r in rows if r[0] == d and r[1] == size))
        ref = med.get("libswift->libswift", (None,))[0]
        for d in dirs:
            m, n_ok, n = med[d]
            ms = "-" if m is None else f"{m:.2f}"
            rate = "-" if not m else f"{size / m / 1e6:.1f}"
            ratio = "-" if (m is None or not ref) else f"{m / ref:.2f}x"
            print(f"{d:<20} {size:>10} {f'{n_ok}/{n}':>5} {ms:>9} {rate:>8} {ratio:>22}")


if __name__ == "__main__":
    main()
