"""Item 3: addresses from PEX (RFC 7574 §3.10) a node must never dial.

Runs inside a network namespace with only loopback (the runner re-executes
itself under `unshare -n`), so that nothing reaches a real network, and the
downloader runs under strace: every destination it tries, whether the send
succeeds or not, is in the trace."""
import ipaddress
import re
import time

from . import procs, wire
from .common import row
from .peer import HostilePeer

CONTROL = ("127.0.0.9", 7009)  # a loopback peer: dialling it is fine


def bad_addresses(own_port):
    return [("127.0.0.1", own_port, "own"), ("0.0.0.0", 7001, "unspecified"),
            ("255.255.255.255", 7002, "broadcast"), ("224.0.0.1", 7003, "multicast"),
            ("10.0.0.1", 7004, "private"), ("172.16.0.1", 7005, "private"),
            ("192.168.1.1", 7006, "private"), ("169.254.1.1", 7007, "link-local")]


class PexPeer(HostilePeer):
    """Sends its list unasked with the handshake answer and on every
    PEX_REQ."""

    def __init__(self, addresses):
        self.pex = b"".join(wire.pex_v4(ip, port) for ip, port in addresses)
        self.asked = 0
        super().__init__()

    def on_open(self):
        return self.pex

    def on_messages(self, msgs):
        if any(t == wire.PEX_REQ for t, _ in msgs):
            self.asked += 1
            self.send(self.pex)


DEST = re.compile(r'sin_port=htons\((\d+)\), sin_addr=inet_addr\("([\d.]+)"\)')


def destinations(trace):
    """(ip, port) of every sockaddr in the traced send and connect calls."""
    out = set()
    with open(trace, errors="replace") as f:
        for line in f:
            for port, ip in DEST.findall(line):
                out.add((ip, int(port)))
    return out


def classify(ip, port, own_port):
    a = ipaddress.ip_address(ip)
    if a.is_loopback and port == own_port:
        return "own"
    if a.is_unspecified:
        return "unspecified"
    if a == ipaddress.ip_address("255.255.255.255"):
        return "broadcast"
    if a.is_multicast:
        return "multicast"
    if a.is_link_local:
        return "link-local"
    if a.is_private and not a.is_loopback:
        return "private"
    return None


def pex_addresses(ctx):
    node, name = ctx.node, "3 PEX addresses"
    src = ctx.path("pex-src")
    procs.make_file(src, 100_000, ctx.args.seed)
    with open(src, "rb") as f:
        root = wire.Merkle(f.read()).root.hex()
    own_port = procs.free_port(host="0.0.0.0")
    bad = bad_addresses(own_port)
    peer = PexPeer([(ip, port) for ip, port, _ in bad] + [CONTROL])
    trace = ctx.path("pex.strace")
    get = node.get(f"ppspp://127.0.0.1:{peer.port}/{root}?cl=100000", ctx.path("pex-out"),
                   "pex-get", ["--listen", f"0.0.0.0:{own_port}"],
                   wrap=["strace", "-f", "-v", "-e", "trace=sendto,sendmsg,sendmmsg,connect",
                         "-o", trace])
    window = 4 if ctx.quick else 10
    try:
        peer.opened.wait(10)
        time.sleep(window)
    finally:
        procs.stop(get)
        peer.close()
    seen = destinations(trace)
    hits = sorted({(ip, port, classify(ip, port, own_port)) for ip, port in seen
                   if classify(ip, port, own_port)})
    control = CONTROL in seen
    ok = peer.opened.is_set() and control and not hits
    listed = ", ".join(f"{ip}:{port} ({kind})" for ip, port, kind in hits) or "none"
    return [row(name,
                f"{len(bad)} bad + 1 loopback control address sent by a loopback peer "
                f"(asked {peer.asked}×); node dialled the control: {'yes' if control else 'NO'}; "
                f"bad destinations dialled: {listed}",
                "never own/unspecified/broadcast/multicast, nor private/link-local from a "
                "loopback peer", ok)]
