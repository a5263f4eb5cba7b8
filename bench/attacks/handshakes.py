"""Attacks on the handshake (RFC 7574 §3.1, §12.1): a flood of half-open
channels that locks newcomers out (issue 21 item 1), and the channel ids a
node hands out (item 8)."""
import os
import signal
import socket
import threading
import time

from . import procs, wire
from .common import row


class Flood:
    """70 spoofed openers on 127.0.0.2, 127.0.0.3, … (the whole 127/8
    reaches lo): every `interval` s each sends a valid opening HANDSHAKE for
    the swarm with a fresh channel id and never sends the third datagram."""

    def __init__(self, target, swarm_id, count, interval):
        self.target, self.interval = target, interval
        self.opening = wire.options(swarm_id=swarm_id)
        self.socks = []
        for i in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((f"127.0.0.{2 + i}", 0))
            s.setblocking(False)
            self.socks.append(s)
        self.bytes_out = self.bytes_in = self.rounds = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.thread.start()
        while self.rounds == 0:
            time.sleep(0.01)

    def _run(self):
        while not self.done.is_set():
            for s in self.socks:
                d = wire.handshake(0, wire.fresh_channel(), self.opening)
                s.sendto(d, self.target)
                self.bytes_out += len(d)
            self.rounds += 1
            deadline = time.monotonic() + self.interval
            while time.monotonic() < deadline and not self.done.is_set():
                self._drain()
                time.sleep(0.05)

    def _drain(self):
        for s in self.socks:
            try:
                while True:
                    self.bytes_in += len(s.recv(65536))
            except (BlockingIOError, OSError):
                pass

    def stop(self):
        self.done.set()
        self.thread.join(timeout=5)
        for s in self.socks:
            s.close()


def half_open_flood(ctx):
    """Item 1: an honest `get` next to the flood must still complete."""
    node, name = ctx.node, "1 half-open flood"
    size = (2 if ctx.quick else 4) * 1_000_000
    src = ctx.path("flood-src")
    procs.make_file(src, size, ctx.args.seed)
    want = procs.sha1_file(src)
    seeder, url, port, root = node.seed(src, "flood-seed")
    timeout = ctx.args.get_timeout
    rc0, base = node.timed_get(url, ctx.path("flood-out0"), timeout, "flood-get0",
                               ["--listen", "127.0.0.1:0"])
    base_ok = rc0 == 0 and procs.sha1_file(ctx.path("flood-out0")) == want
    interval = ctx.args.flood_interval or (5.0 if ctx.quick else 20.0)
    flood = Flood(("127.0.0.1", port), bytes.fromhex(root), 70, interval)
    flood.start()
    time.sleep(0.5)  # the seeder has taken the first round in
    try:
        out = ctx.path("flood-out")
        rc, took = node.timed_get(url, out, timeout, "flood-get", ["--listen", "127.0.0.1:0"])
    finally:
        flood.stop()
    ok = rc == 0 and procs.sha1_file(out) == want
    why = "completed" if ok else (
        f"no exit in {timeout:.0f} s" if rc is None else
        f"exit {rc} after {took:.1f} s: {procs.text(ctx.path('flood-get.log.err'), 160)}")
    return [row(name,
                f"get next to the flood: {why}; {took:.1f} s (without flood: "
                f"{base:.1f} s{'' if base_ok else ', FAILED'}); flood: 70 handshakes every "
                f"{interval:g} s, {flood.rounds} rounds, {flood.bytes_out} B out, "
                f"{flood.bytes_in} B back",
                f"get completes (≤ {timeout:.0f} s)", ok)]


def channel_ids(ctx):
    """Item 8: channel ids are security tokens (RFC 7574 §12.1). That the
    generator is a CSPRNG cannot be seen on the wire; that the ids of many
    answers are distinct and not sequential can."""
    node, name = ctx.node, "8 channel ids"
    src = ctx.path("ids-src")
    procs.make_file(src, 3000, ctx.args.seed)
    seeder, url, port, root = node.seed(src, "ids-seed")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(2)
    opening = wire.options(swarm_id=bytes.fromhex(root))
    spec = wire.Spec(wire.RANGES32)
    ids, refused, lost = [], 0, 0
    for _ in range(1000):
        mine = wire.fresh_channel()
        s.sendto(wire.handshake(0, mine, opening), ("127.0.0.1", port))
        try:
            while True:
                dst, msgs = wire.parse(s.recv(65536), spec)
                if dst == mine and msgs and msgs[0][0] == wire.HANDSHAKE:
                    break
        except socket.timeout:
            lost += 1
            continue
        theirs = msgs[0][1][0]
        if theirs == 0:
            refused += 1
            continue
        ids.append(theirs)
        # Close the channel (HANDSHAKE with source 0, RFC 7574 §8.4) so the
        # next one fits in the swarm's peer limit.
        s.sendto(theirs.to_bytes(4, "big") + bytes([wire.HANDSHAKE, 0, 0, 0, 0, 255]),
                 ("127.0.0.1", port))
    s.close()
    procs.stop(seeder, signal.SIGTERM)
    distinct = len(set(ids))
    steps = {(b - a) & 0xFFFFFFFF for a, b in zip(ids, ids[1:])}
    ok = len(ids) >= 100 and distinct == len(ids) and len(steps) > len(ids) // 2
    return [row(name,
                f"{len(ids)} answers ({refused} refused, {lost} unanswered): {distinct} distinct "
                f"ids, {len(steps)} distinct steps; CSPRNG seeding is not visible on the wire "
                "(unit tests)", "all distinct, not sequential", ok)]


def seeder_paused(seeder):
    """SIGSTOPs a seeder so a hostile peer is heard first; returns a resume
    function. The node retries its handshake meanwhile (RFC 7574 §3.1)."""
    os.kill(seeder.pid, signal.SIGSTOP)
    return lambda: os.kill(seeder.pid, signal.SIGCONT)
