#!/usr/bin/env python3
"""Interoperability of ppspp with libswift over loopback UDP, both directions.

Usage: bench/libswift_interop.py --swift PATH/TO/swift --ppspp PATH/TO/ppspp
           [--sizes 3000,1048576,20971520] [--timeout 300] [--keep DIR]

For each size a file of pattern bytes (byte i is i % 251) is made, then:
  libswift->ppspp  `swift -f FILE -l 127.0.0.1:PORT -z 1024` seeds it and
                   `ppspp get ppspp://127.0.0.1:PORT/<root>?cs=1024&hf=sha1&cl=N`
                   downloads it;
  ppspp->libswift  `ppspp seed FILE --listen 127.0.0.1:0 --chunk-size 1024 --hash sha1`
                   serves it and `swift -t 127.0.0.1:PORT -h <root> -f OUT -z 1024`
                   downloads it (libswift exits once the download is complete).
A row is ok when the downloaded file is byte-identical to the source and the
root hash that libswift printed (when it printed one) equals `ppspp hash`.
Prints a table (direction, size, ok/fail, seconds, MB/s with MB = 10^6 bytes,
note) and exits 1 if any row failed.

This script never builds or fetches libswift: point --swift at a binary you
built yourself. Only 1024-byte chunks and SHA-1 are used, libswift's defaults.
Every process it starts is bounded by --timeout and killed at the end.
"""
import argparse
import filecmp
import os
import re
import shutil
import socket
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


def libswift_to_ppspp(a, work, src, size, root):
    d = os.path.join(work, f"ls2pp-{size}")
    os.makedirs(d)
    # libswift writes FILE.mhash / FILE.mbinmap beside the file: give it a copy.
    seedfile = os.path.join(d, "content")
    shutil.copyfile(src, seedfile)
    port = free_udp_port()
    seeder = Proc(swift_argv(a.swift, "-f", seedfile, "-l", f"127.0.0.1:{port}",
                             "-z", str(CHUNK)),
                  d, os.path.join(d, "swift-seed.log"))
    getter = None
    try:
        m = seeder.wait_line(r"Root hash: ([0-9a-fA-F]{40})", a.timeout)
        note = []
        if m is None:
            note.append("libswift printed no root hash")
        elif m.group(1).lower() != root:
            return False, None, f"root differs: libswift {m.group(1).lower()} ppspp {root}"
        else:
            note.append("roots agree")
        deadline = time.monotonic() + a.timeout
        while not udp_port_bound(port):
            if seeder.p.poll() is not None or time.monotonic() > deadline:
                return False, None, f"libswift seeder not listening: {seeder.tail()}"
            time.sleep(0.1)
        out = os.path.join(d, "downloaded")
        url = f"ppspp://127.0.0.1:{port}/{root}?cs={CHUNK}&hf=sha1&cl={size}"
        t0 = time.perf_counter()
        getter = Proc([a.ppspp, "get", url, "-o", out, "--listen", "127.0.0.1:0",
                       "--idle-timeout", str(a.idle_timeout),
                       "--stats-json", os.path.join(d, "get-stats.json")],
                      d, os.path.join(d, "ppspp-get.log"))
        rc = getter.wait(a.timeout)
        secs = time.perf_counter() - t0
        if rc is None:
            return False, secs, f"ppspp get still running after {a.timeout}s"
        if rc != 0:
            return False, secs, f"ppspp get exit {rc}: {getter.tail()}"
        if not os.path.exists(out):
            return False, secs, "no downloaded file"
        if not filecmp.cmp(src, out, shallow=False):
            return False, secs, "downloaded file differs from source"
        return True, secs, ", ".join(note)
    finally:
        if getter:
            getter.stop()
        seeder.stop()


def ppspp_to_libswift(a, work, src, size, root):
    d = os.path.join(work, f"pp2ls-{size}")
    os.makedirs(d)
    seeder = Proc([a.ppspp, "seed", src, "--listen", "127.0.0.1:0",
                   "--chunk-size", str(CHUNK), "--hash", "sha1"],
                  d, os.path.join(d, "ppspp-seed.log"))
    getter = None
    try:
        m = seeder.wait_line(r"(ppspp://127\.0\.0\.1:(\d+)/([0-9a-f]+)\S*)", a.timeout)
        if m is None:
            return False, None, f"ppspp seed printed no URL: {seeder.tail()}"
        port, seed_root = int(m.group(2)), m.group(3)
        if seed_root != root:
            return False, None, f"ppspp seed root {seed_root} != ppspp hash {root}"
        out = os.path.join(d, "downloaded")
        t0 = time.perf_counter()
        getter = Proc(swift_argv(a.swift, "-t", f"127.0.0.1:{port}", "-h", root,
                                 "-f", out, "-z", str(CHUNK)),
                      d, os.path.join(d, "swift-get.log"))
        rc = getter.wait(a.timeout)
        secs = time.perf_counter() - t0
        if rc is None:
            got = os.path.getsize(out) if os.path.exists(out) else 0
            return False, secs, f"libswift still running after {a.timeout}s ({got} B on disk)"
        if rc != 0:
            return False, secs, f"libswift exit {rc}: {getter.tail()}"
        if not os.path.exists(out):
            return False, secs, "no downloaded file"
        if not filecmp.cmp(src, out, shallow=False):
            return False, secs, "downloaded file differs from source"
        m = getter.wait_line(r"Root hash: ([0-9a-fA-F]{40})", 0)
        if m and m.group(1).lower() != root:
            return False, secs, f"libswift root {m.group(1).lower()} != {root}"
        return True, secs, "roots agree" if m else ""
    finally:
        if getter:
            getter.stop()
        seeder.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--swift", required=True, help="libswift's swift binary")
    ap.add_argument("--ppspp", required=True, help="ppspp binary")
    ap.add_argument("--sizes", default="3000,1048576,20971520",
                    help="comma-separated file sizes in bytes")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds any one step may take")
    ap.add_argument("--idle-timeout", type=int, default=30,
                    help="ppspp get --idle-timeout")
    ap.add_argument("--directions", default="libswift->ppspp,ppspp->libswift")
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
    runs = {"libswift->ppspp": libswift_to_ppspp, "ppspp->libswift": ppspp_to_libswift}
    rows = []
    try:
        for size in sizes:
            src = os.path.join(work, f"src-{size}.bin")
            make_file(src, size)
            root = ppspp_root(a.ppspp, src)
            for direction in dirs:
                try:
                    ok, secs, note = runs[direction](a, work, src, size, root)
                except Exception as e:  # report, go on with the next row
                    ok, secs, note = False, None, f"{type(e).__name__}: {e}"
                rows.append((direction, size, ok, secs, note))
                print_row(*rows[-1], flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    print()
    print_table(rows)
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


if __name__ == "__main__":
    main()
