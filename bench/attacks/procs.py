"""Processes the attacks start, and what we read about them.

Every child runs in its own session (process group) and is registered, so
that `cleanup()` — called after each attack, at exit and on Ctrl-C — ends
each one we started by its group id, wrappers (strace, unshare, sh) and all.
"""
import hashlib
import os
import re
import signal
import socket
import subprocess
import time

_children = []


def start(argv, log, cwd=None, preexec=None):
    """Starts `argv` with stdout to `log` and stderr to `log`.err."""
    out = open(log, "w")
    err = open(log + ".err", "w")
    p = subprocess.Popen(argv, stdout=out, stderr=err, cwd=cwd,
                         start_new_session=True, preexec_fn=preexec)
    out.close()
    err.close()
    p.log = log
    _children.append(p)
    return p


def stop(p, sig=signal.SIGKILL):
    """Ends `p`'s process group (it is its own session leader)."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            pass
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def adopt(p, polite=False):
    """Registers a child started elsewhere; a polite one (a copy of this
    script, which cleans up after itself) gets SIGTERM and time first."""
    p.polite = polite
    _children.append(p)


def cleanup():
    while _children:
        p = _children.pop()
        if getattr(p, "polite", False) and p.poll() is None:
            stop(p, signal.SIGTERM)
        stop(p)


def wait(p, timeout):
    """Exit status of `p`, or None if it ran past `timeout` (it is left
    running)."""
    try:
        return p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None


def wait_line(path, regex, timeout, proc=None):
    """First match of `regex` in the growing file `path`."""
    pat = re.compile(regex)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(path) as f:
                m = pat.search(f.read())
            if m:
                return m
        except FileNotFoundError:
            pass
        if proc is not None and proc.poll() is not None:
            return None
        time.sleep(0.05)
    return None


def text(path, tail=400):
    """The last line of `path` that says something (without ppspp's error
    prefix), cut to `tail` characters."""
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
    except FileNotFoundError:
        return ""
    if not lines:
        return ""
    last = lines[-1].removeprefix("ppspp: error: ")
    return last if len(last) <= tail else last[:tail] + "…"


def status_kb(pid, field):
    """A /proc/<pid>/status field in KiB (VmRSS, VmHWM), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def udp_drops(pid, port):
    """Datagrams the kernel dropped at the UDP socket on `port` of process
    `pid`'s network namespace (/proc/<pid>/net/udp, last column)."""
    total = 0
    try:
        with open(f"/proc/{pid}/net/udp") as f:
            next(f)
            for line in f:
                cols = line.split()
                if int(cols[1].rsplit(":", 1)[1], 16) == port:
                    total += int(cols[-1])
    except OSError:
        return None
    return total


def udp_queued(pid, port):
    """Bytes waiting in the receive queue of the UDP socket on `port` of
    process `pid`'s network namespace (/proc/<pid>/net/udp rx_queue)."""
    try:
        with open(f"/proc/{pid}/net/udp") as f:
            next(f)
            for line in f:
                cols = line.split()
                if int(cols[1].rsplit(":", 1)[1], 16) == port:
                    return int(cols[4].split(":")[1], 16)
    except OSError:
        pass
    return 0


def lo_bytes():
    """Bytes sent on this network namespace's loopback (/proc/self/net/dev:
    every datagram between two local processes crosses lo once)."""
    with open("/proc/self/net/dev") as f:
        for line in f:
            name, _, rest = line.partition(":")
            if name.strip() == "lo":
                return int(rest.split()[8])
    return 0


def free_port(kind=socket.SOCK_DGRAM, host="127.0.0.1"):
    s = socket.socket(socket.AF_INET, kind)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def make_file(path, size, seed):
    """`size` pseudo-random bytes, the same for the same seed."""
    block = hashlib.sha256(str(seed).encode()).digest()
    with open(path, "wb") as f:
        left, counter = size, 0
        while left:
            chunk = b"".join(hashlib.sha256(block + i.to_bytes(8, "big")).digest()
                             for i in range(counter, counter + 2048))
            counter += 2048
            f.write(chunk[:left])
            left -= min(left, len(chunk))


def sha1_file(path):
    h = hashlib.sha1()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


class Node:
    """The ppspp binary and the commands the attacks run."""

    def __init__(self, ppspp, tmp):
        self.ppspp = ppspp
        self.tmp = tmp

    def path(self, name):
        return os.path.join(self.tmp, name)

    def seed(self, src, name="seed", extra=()):
        """Starts `ppspp seed`; returns (process, URL, port)."""
        p = start([self.ppspp, "seed", src, "--listen", "127.0.0.1:0", *extra],
                  self.path(name + ".log"))
        m = wait_line(p.log, r"(ppspp://127\.0\.0\.1:(\d+)/([0-9a-f]+)\S*)", 120, p)
        if m is None:
            raise RuntimeError(f"ppspp seed printed no URL: {text(p.log + '.err')}")
        return p, m.group(1), int(m.group(2)), m.group(3)

    def get(self, target, out, name="get", extra=(), wrap=()):
        """Starts `ppspp get` writing `out`, stats to `name`.json."""
        argv = [*wrap, self.ppspp, "get", target, "-o", out,
                "--stats-json", self.path(name + ".json"), *extra]
        return start(argv, self.path(name + ".log"))

    def timed_get(self, target, out, timeout, name="get", extra=()):
        """Runs `ppspp get` to its end: (exit status or None, seconds)."""
        t0 = time.monotonic()
        p = self.get(target, out, name, extra)
        rc = wait(p, timeout)
        if rc is None:
            stop(p)
        return rc, time.monotonic() - t0
