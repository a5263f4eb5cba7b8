"""Attacks on the HTTP gateway (`ppspp stream`): clients that never read
(issue 21 item 4), slowloris and fd exhaustion (item 5)."""
import hashlib
import http.client
import resource
import selectors
import socket
import time

from . import procs
from .common import mb, row


class Gateway:
    """A seeder and `ppspp stream` of its file, the download done."""

    def __init__(self, ctx, tag, size, nofile):
        self.ctx, self.tag = ctx, tag
        src = ctx.path(f"{tag}-src")
        procs.make_file(src, size, ctx.args.seed)
        self.want = procs.sha1_file(src)
        _, url, _, self.root = ctx.node.seed(src, f"{tag}-seed")

        def limit():
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            n = min(nofile, hard)
            resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))

        self.p = procs.start([ctx.node.ppspp, "stream", url, "-o", ctx.path(f"{tag}-out"),
                              "--http", "127.0.0.1:0", "--listen", "127.0.0.1:0"],
                             ctx.path(f"{tag}-stream.log"), preexec=limit)
        m = procs.wait_line(self.p.log, r"http://127\.0\.0\.1:(\d+)/", 60, self.p)
        if m is None:
            raise RuntimeError(f"stream printed no URL: {procs.text(self.p.log + '.err')}")
        self.port = int(m.group(1))
        self.path = f"/{self.root}"

    def legit_get(self, timeout=30):
        """A whole GET: (ok, seconds, note)."""
        t0 = time.monotonic()
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
            c.request("GET", self.path)
            r = c.getresponse()
            h = hashlib.sha1()
            while True:
                block = r.read(1 << 16)
                if not block:
                    break
                h.update(block)
                if time.monotonic() - t0 > timeout:
                    raise TimeoutError("too slow")
            c.close()
            ok = r.status == 200 and h.hexdigest() == self.want
            note = f"{r.status}" + ("" if ok else ", wrong body")
        except (OSError, http.client.HTTPException) as e:
            ok, note = False, f"{type(e).__name__}: {e}"
        return ok, time.monotonic() - t0, note

    def rss(self):
        return procs.status_kb(self.p.pid, "VmRSS"), procs.status_kb(self.p.pid, "VmHWM")

    def settle(self, limit=30):
        """Waits until the gateway's RSS stops growing (1 % over 2 s)."""
        last, t0 = self.rss()[0] or 0, time.monotonic()
        while time.monotonic() - t0 < limit:
            time.sleep(2)
            now = self.rss()[0] or 0
            if now <= last * 1.01:
                return
            last = now


def open_many(port, n, first_bytes, batch=100):
    """`n` connections to 127.0.0.1:port, each sending `first_bytes` once
    connected; returns the sockets that connected. Opened in batches with a
    pause between, as clients arriving over time would: all at once, most
    would wait in the listen backlog, not in the server."""
    out = []
    while len(out) < n:
        got = _open_batch(port, min(batch, n - len(out)), first_bytes)
        out += got
        if not got:
            break
        time.sleep(0.2)
    return out


def _open_batch(port, n, first_bytes, timeout=10):
    sel = selectors.DefaultSelector()
    socks, connected = [], []
    for _ in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        sel.register(s, selectors.EVENT_WRITE)
        socks.append(s)
    deadline = time.monotonic() + timeout
    pending = len(socks)
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(0.5):
            s = key.fileobj
            sel.unregister(s)
            pending -= 1
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0:
                try:
                    if first_bytes:
                        s.send(first_bytes)
                    connected.append(s)
                    continue
                except OSError:
                    pass
            s.close()
    for key in list(sel.get_map().values()):
        key.fileobj.close()
    sel.close()
    return connected


def closed_by_peer(s):
    """Whether the server closed `s` (EOF or reset)."""
    try:
        return s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def raise_nofile(n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(n, hard), hard))


def non_reading(ctx):
    """Item 4: 2,000 clients GET and never read; memory per connection."""
    name, n = "4 HTTP non-reading", 2000
    raise_nofile(3 * n)
    gw = Gateway(ctx, "idle", (8 if ctx.quick else 16) * 1_000_000, 4 * n)
    try:
        ok0, t0, note0 = gw.legit_get()
        time.sleep(1)
        before, _ = gw.rss()
        req = f"GET {gw.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
        conns = open_many(gw.port, n, req)
        gw.settle()
        after, hwm = gw.rss()
        ok1, t1, note1 = gw.legit_get()
        open_after = sum(not closed_by_peer(s) for s in conns)
        for s in conns:
            s.close()
    finally:
        procs.stop(gw.p)
    per = ((hwm or 0) - (before or 0)) / max(1, len(conns))
    return [row(name, f"RSS {mb(before)} -> {mb(after)} (peak {mb(hwm)}) with {len(conns)} "
                f"connections ({open_after} still open): {per:.0f} KiB per connection",
                "≤ 64 KiB per connection", per <= 64 and len(conns) > 0),
            row(name, f"legit GET beside them: {note1} in {t1:.2f} s (alone: {note0} in "
                f"{t0:.2f} s)", "succeeds", ok1 and ok0)]


def slowloris(ctx):
    """Item 5: 300 connections sending a header byte per second must be
    closed within a bound; with `ulimit -n 1024`, 1,140 idle connections
    must not keep a legit GET out."""
    name = "5 slowloris / fd"
    bound = ctx.args.slowloris_bound or (40 if ctx.quick else 60)
    raise_nofile(4096)
    rows = []
    gw = Gateway(ctx, "slow", 2_000_000, 16384)
    try:
        conns = open_many(gw.port, 300, b"")
        header = f"GET {gw.path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".encode()
        t0, sent, closed_at = time.monotonic(), 0, {}
        legit = None
        while time.monotonic() - t0 < bound and len(closed_at) < len(conns):
            for i, s in enumerate(conns):
                if i in closed_at:
                    continue
                if closed_by_peer(s):
                    closed_at[i] = time.monotonic() - t0
                    continue
                try:
                    s.send(header[sent:sent + 1] if sent < len(header) else b"a")
                except OSError:
                    closed_at[i] = time.monotonic() - t0
            sent += 1
            if legit is None and time.monotonic() - t0 > 3:
                legit = gw.legit_get(timeout=10)
            time.sleep(max(0.0, t0 + sent - time.monotonic()))
        if legit is None:
            legit = gw.legit_get(timeout=10)
        for s in conns:
            s.close()
        last = max(closed_at.values()) if closed_at else None
        rows.append(row(name, f"{len(closed_at)} of {len(conns)} slow connections closed by "
                        f"the server within {bound} s"
                        + (f" (last at {last:.0f} s)" if last is not None else ""),
                        f"all closed ≤ {bound} s", len(closed_at) == len(conns) and conns))
        rows.append(row(name, f"legit GET beside the slow ones: {legit[2]} in {legit[1]:.2f} s",
                        "succeeds ≤ 5 s", legit[0] and legit[1] <= 5))
    finally:
        procs.stop(gw.p)
    gw = Gateway(ctx, "fd", 2_000_000, 1024)
    try:
        conns = open_many(gw.port, 1140, b"")
        time.sleep(2)
        ok, took, note = gw.legit_get(timeout=10)
        open_now = sum(not closed_by_peer(s) for s in conns)
        for s in conns:
            s.close()
    finally:
        procs.stop(gw.p)
    rows.append(row(name, f"ulimit -n 1024, {len(conns)} idle connections ({open_now} still "
                    f"open): legit GET {note} in {took:.2f} s", "succeeds ≤ 5 s",
                    ok and took <= 5))
    return rows
