#!/usr/bin/env python3
"""Memory and availability of the `ppspp stream` HTTP gateway under clients
that send a GET and never read the answer (issue 21, items 4 and 5).

Usage: bench/http_idle_memory.py [--counts 100,250,1000,2000] [--size-mb 64]
                                 [--binary target/release/ppspp] [--settle 3]
                                 [--silent] [--no-build] [-- EXTRA STREAM ARGS]

Seeds a file of random bytes on loopback, lets one gateway download it
completely, then for each count N: starts a fresh gateway on the complete
content, makes one warm-up request, reads its VmRSS, opens N connections
that each send `GET /<id>` for the whole content and never read, waits
`--settle` seconds, reads VmRSS again, and then times a legit range GET (1 MiB)
next to them. A 503 is retried after its Retry-After, for at most 60 s.

Columns: N; the connections the clients could open (a few connects that
time out end the row's attempts); the gateway's sockets held (open TCP sockets in /proc/PID/fd,
less the baseline); what the clients see at their first bytes (MSG_PEEK, so
nothing is read): a 200 being served, a 503, or closed/reset; RSS before and
after in MB; KiB of RSS per connection held; and the legit GET's outcome and
time. With --silent the clients connect and send nothing at all (idle
connections, as under a descriptor-exhaustion attack). Every connection is
on loopback and closed at the end of its row.
A last line gives a player's throughput: the whole content read at full
speed by one client (median of `--runs`).
"""
import argparse
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import json

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_file(path, size):
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 1 << 20)
            f.write(os.urandom(n))
            left -= n


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def sockets_of(pid):
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


def http(addr, path, headers=None, timeout=30.0, want_body=True):
    """One request on a fresh connection: (status, headers, body)."""
    host, port = addr
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        req = f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n"
        for k, v in (headers or {}).items():
            req += f"{k}: {v}\r\n"
        s.sendall((req + "\r\n").encode())
        data = b""
        while b"\r\n\r\n" not in data:
            b = s.recv(65536)
            if not b:
                raise ConnectionError(f"closed before the head ({len(data)} bytes)")
            data += b
        head, body = data.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hs = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
        length = int(hs.get("content-length", "0"))
        if not want_body:
            return status, hs, body
        buf = bytearray(max(length, len(body)))
        buf[:len(body)] = body
        view, got = memoryview(buf), len(body)
        while got < length:
            n = s.recv_into(view[got:], min(1 << 20, length - got))
            if not n:
                raise ConnectionError(f"closed after {got} of {length} body bytes")
            got += n
        return status, hs, bytes(buf[:got])
    finally:
        s.close()


def legit_get(addr, path, expect):
    """A 1 MiB range GET, retried after a 503's Retry-After for up to 60 s:
    (outcome, seconds, tries)."""
    t0 = time.perf_counter()
    tries = 0
    while True:
        tries += 1
        try:
            status, hs, body = http(addr, path, {"Range": f"bytes=0-{len(expect) - 1}"})
        except OSError as e:
            outcome = f"error: {e.__class__.__name__}"
            status, hs, body = None, {}, b""
        else:
            outcome = str(status)
        if status == 206:
            return ("ok" if body == expect else "WRONG BYTES"), time.perf_counter() - t0, tries
        if status == 503 and time.perf_counter() - t0 < 60:
            time.sleep(float(hs.get("retry-after", "1")))
            continue
        if status is None and time.perf_counter() - t0 < 60:
            time.sleep(1)
            continue
        return outcome, time.perf_counter() - t0, tries


def first_bytes(s):
    """What a non-reading client has been answered, without reading it."""
    try:
        b = s.recv(16, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return "none"
    except OSError:
        return "closed"
    if not b:
        return "closed"
    if b.startswith(b"HTTP/1.1 200"):
        return "200"
    if b.startswith(b"HTTP/1.1 503"):
        return "503"
    return "other"


def start_stream(binary, url, out, extra):
    p = subprocess.Popen(
        [binary, "stream", url, "-o", out, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"] + extra,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline().strip()
    if not line.startswith("http://"):
        p.kill()
        sys.exit(f"stream printed {line!r}")
    hostport, path = line[len("http://"):].split("/", 1)
    host, port = hostport.rsplit(":", 1)
    return p, (host, int(port)), "/" + path


def wait_complete(addr, path):
    deadline = time.time() + 300
    while time.time() < deadline:
        _, _, body = http(addr, path + "/stats")
        if json.loads(body).get("complete"):
            return
        time.sleep(0.5)
    sys.exit("the gateway did not complete the download in 300 s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", default="100,250,1000,2000")
    ap.add_argument("--size-mb", type=int, default=64)
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "ppspp"))
    ap.add_argument("--settle", type=float, default=3.0)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--silent", action="store_true", help="connect and send nothing")
    ap.add_argument("extra", nargs="*", help="extra arguments for `ppspp stream`")
    args = ap.parse_args()
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "ppspp"], cwd=ROOT, check=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    tmp = tempfile.mkdtemp(prefix="ppspp-bench-")
    src, out = os.path.join(tmp, "content"), os.path.join(tmp, "out")
    make_file(src, args.size_mb * 1_000_000)
    with open(src, "rb") as f:
        expect = f.read(1 << 20)
    seeder = subprocess.Popen(
        [args.binary, "seed", src, "--listen", "127.0.0.1:0", "--chunk-size", "8192"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = seeder.stdout.readline().strip()
    try:
        p, addr, path = start_stream(args.binary, url, out, args.extra)
        wait_complete(addr, path)
        p.kill()
        p.wait()
        print(f"ppspp stream {' '.join(args.extra)}: {args.size_mb} MB content, "
              f"clients {'send nothing' if args.silent else 'GET the whole of it and never read'}; "
              f"legit GET: 1 MiB range")
        print(f"{'N':>5} {'conn':>5} {'held':>5} {'200':>5} {'503':>5} {'closed':>6} {'RSS MB before':>13} "
              f"{'after':>7} {'KiB/held':>8}  legit GET")
        for n in [int(c) for c in args.counts.split(",")]:
            p, addr, path = start_stream(args.binary, url, out, args.extra)
            socks = []
            try:
                wait_complete(addr, path)
                http(addr, path, {"Range": "bytes=0-65535"})
                time.sleep(0.5)
                base_socks, before = sockets_of(p.pid), rss_kib(p.pid)
                failed = 0
                for _ in range(n):
                    # A server out of descriptors leaves connects hanging
                    # in a full backlog: give up after a few of those.
                    if failed >= 5:
                        break
                    try:
                        s = socket.create_connection(addr, timeout=1)
                        if not args.silent:
                            s.sendall(f"GET {path} HTTP/1.1\r\nHost: {addr[0]}:{addr[1]}\r\n\r\n".encode())
                        socks.append(s)
                        failed = 0
                    except OSError:
                        failed += 1
                time.sleep(args.settle)
                held = sockets_of(p.pid) - base_socks
                after = rss_kib(p.pid)
                seen = [first_bytes(s) for s in socks]
                outcome, secs, tries = legit_get(addr, path, expect)
                per = (after - before) / max(held, 1)
                print(f"{n:>5} {len(socks):>5} {held:>5} {seen.count('200'):>5} {seen.count('503'):>5} "
                      f"{seen.count('closed'):>6} {before / 1024:>13.1f} {after / 1024:>7.1f} "
                      f"{per:>8.1f}  {outcome} in {secs:.2f} s ({tries} tr{'y' if tries == 1 else 'ies'})",
                      flush=True)
            finally:
                for s in socks:
                    s.close()
                p.kill()
                p.wait()
        p, addr, path = start_stream(args.binary, url, out, args.extra)
        try:
            wait_complete(addr, path)
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                status, _, body = http(addr, path)
                times.append(time.perf_counter() - t0)
                if status != 200 or len(body) != args.size_mb * 1_000_000:
                    sys.exit(f"whole GET: status {status}, {len(body)} bytes")
            times.sort()
            t = times[len(times) // 2]
            print(f"one client reading the whole {args.size_mb} MB: {t:.3f} s, "
                  f"{args.size_mb / t:.0f} MB/s (median of {args.runs})")
        finally:
            p.kill()
            p.wait()
    finally:
        seeder.kill()
        seeder.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
